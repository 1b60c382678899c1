// writeBody (core/body.ts): a chunked body to a response sink with backpressure. Table cases on a
// sink of our own, where every event is ours to fire; then real sockets with real files.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import {
  closeSync,
  createReadStream,
  mkdirSync,
  openSync,
  type ReadStream,
  readFileSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type BodySink, writeBody } from '../../../src/server/core/body.js';
import type { ContentRequest, ResponseSink } from '../../../src/server/core/exchange.js';
import type { H2Request, H2Response } from '../../../src/server/tls/h2-exchange.js';
import { holdsFor, waitUntil } from '../../helpers/wait.js';

// The exchange's types as the Node transport's objects are: checked by tsc (npm run lint).
export const nodeSatisfies: [ContentRequest, ResponseSink] = [{} as IncomingMessage, {} as ServerResponse];
export const h2Satisfies: [ContentRequest, ResponseSink] = [{} as H2Request, {} as H2Response];

/** A sink whose write() answers from `accepts` (true when it runs out), recording what it got. */
class FakeSink extends EventEmitter implements BodySink {
  destroyed = false;
  ended = false;
  written: string[] = [];
  destroyedWith: Error | undefined;
  constructor(private readonly accepts: boolean[] = []) {
    super();
  }
  write(chunk: string | Uint8Array): boolean {
    this.written.push(Buffer.from(chunk).toString());
    return this.accepts.shift() ?? true;
  }
  end(): void {
    this.ended = true;
  }
  destroy(err?: Error): void {
    this.destroyed = true;
    this.destroyedWith = err;
  }
  /** The client left: 'close' before the body was written. */
  leave(): void {
    this.destroyed = true;
    this.emit('close');
  }
  listening(): number {
    return this.listenerCount('close') + this.listenerCount('drain');
  }
}

/** A source whose chunks the test hands out one at a time, recording reads and its release. */
class Source implements AsyncIterable<Uint8Array> {
  pulls = 0;
  released = false;
  #pending: ((r: IteratorResult<Uint8Array>) => void) | undefined;
  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    return {
      next: () => {
        this.pulls++;
        return new Promise((resolve) => {
          this.#pending = resolve;
        });
      },
      return: async () => {
        this.released = true;
        return { done: true, value: undefined };
      },
    };
  }
  /** Answers the pending read. */
  give(chunk: string | null): void {
    const p = this.#pending!;
    this.#pending = undefined;
    p(chunk === null ? { done: true, value: undefined } : { done: false, value: Buffer.from(chunk) });
  }
}

/** A few turns of the event loop: long enough for any read that does not wait on an event. */
const turns = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

async function* chunks(list: string[], failAfter?: Error): AsyncGenerator<Uint8Array> {
  for (const c of list) yield Buffer.from(c);
  if (failAfter) throw failAfter;
}

describe('writeBody: the sink and the source', () => {
  it('every chunk in order, then end; no listener left', async () => {
    const sink = new FakeSink();
    assert.equal(await writeBody(sink, chunks(['a', 'b', 'c'])), true);
    assert.deepEqual(sink.written, ['a', 'b', 'c']);
    assert.equal(sink.ended, true);
    assert.equal(sink.listening(), 0);
  });

  it('end false (one part of a multipart body): written, not ended', async () => {
    const sink = new FakeSink();
    assert.equal(await writeBody(sink, chunks(['a', 'b']), false), true);
    assert.deepEqual(sink.written, ['a', 'b']);
    assert.equal(sink.ended, false);
    assert.equal(sink.listening(), 0);
  });

  it("write() false: the next chunk is read only after 'drain'", async () => {
    const sink = new FakeSink([false]);
    const src = new Source();
    const done = writeBody(sink, src);
    src.give('a');
    await turns();
    assert.equal(src.pulls, 1, 'no read while the sink is full');
    sink.emit('drain');
    await turns();
    assert.equal(src.pulls, 2);
    src.give('b');
    await turns();
    src.give(null);
    assert.equal(await done, true);
    assert.deepEqual(sink.written, ['a', 'b']);
    assert.equal(sink.listening(), 0, "the 'drain' listener is gone too");
  });

  it('the client leaves while the sink is full: the source is released, resolves false', async () => {
    const sink = new FakeSink([false]);
    const src = new Source();
    const done = writeBody(sink, src);
    src.give('a');
    await turns();
    sink.leave();
    assert.equal(await done, false);
    assert.equal(src.released, true);
    assert.equal(src.pulls, 1);
    assert.equal(sink.ended, false);
    assert.equal(sink.listening(), 0);
  });

  it('the client leaves during a read: released, and that chunk is not written', async () => {
    const sink = new FakeSink();
    const src = new Source();
    const done = writeBody(sink, src);
    sink.leave();
    assert.equal(src.released, true, 'released at once, not after the read');
    src.give('late');
    assert.equal(await done, false);
    assert.deepEqual(sink.written, []);
    assert.equal(sink.ended, false);
  });

  it('a sink already destroyed: nothing written, the source released after its first read', async () => {
    const sink = new FakeSink();
    sink.destroyed = true;
    let finished = false;
    async function* gen() {
      try {
        yield Buffer.from('a');
        yield Buffer.from('b');
      } finally {
        finished = true;
      }
    }
    assert.equal(await writeBody(sink, gen()), false);
    assert.deepEqual(sink.written, []);
    assert.equal(finished, true, "the generator's finally ran (a file stream closes its file there)");
  });

  it('the source fails: the sink is destroyed with its error, the promise rejects with it', async () => {
    const sink = new FakeSink();
    const boom = new Error('EIO: read failed');
    await assert.rejects(writeBody(sink, chunks(['a'], boom)), boom);
    assert.deepEqual(sink.written, ['a']);
    assert.equal(sink.destroyedWith, boom);
    assert.equal(sink.ended, false);
    assert.equal(sink.listening(), 0);
  });

  it('a released source that ends with an error of its own is not a failure', async () => {
    const sink = new FakeSink();
    let reject!: (e: Error) => void;
    const src: AsyncIterable<Uint8Array> = {
      [Symbol.asyncIterator]: () => ({
        next: () => new Promise<IteratorResult<Uint8Array>>((_, r) => (reject = r)),
        return: async () => ({ done: true, value: undefined }),
      }),
    };
    const done = writeBody(sink, src);
    sink.leave();
    reject(Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    assert.equal(await done, false);
    assert.equal(sink.destroyedWith, undefined);
  });
});

describe('writeBody: real sockets, real files', () => {
  // Structural, not a time bound: while the client reads nothing, what the file stream has read can
  // exceed what the client took only by the kernel's socket buffers (one loopback hop, a send and a
  // receive buffer at their maximum) and Node's stream buffers, unless writeBody ignores write()'s
  // false. The file is three times that, so such a writeBody reads far past the bound.
  const kernelMax = (path: string, fallback: number) => {
    try {
      return Number(readFileSync(path, 'utf8').trim().split(/\s+/)[2]) || fallback;
    } catch {
      return fallback;
    }
  };
  const IN_FLIGHT_BOUND =
    kernelMax('/proc/sys/net/ipv4/tcp_wmem', 16 << 20) +
    kernelMax('/proc/sys/net/ipv4/tcp_rmem', 16 << 20) +
    (1 << 20);
  const BLOCK = 1 << 20;
  const SIZE = Math.max(16, Math.ceil((3 * IN_FLIGHT_BOUND) / BLOCK)) * BLOCK;
  const dir = join(tmpdir(), `gatehouse-body-${process.pid}`);
  const file = join(dir, 'big.bin');
  let sha256 = '';
  before(() => {
    mkdirSync(dir, { recursive: true });
    const hash = createHash('sha256');
    const fd = openSync(file, 'w');
    for (let at = 0; at < SIZE; at += BLOCK) {
      const block = randomBytes(BLOCK);
      hash.update(block);
      writeSync(fd, block);
    }
    closeSync(fd);
    sha256 = hash.digest('hex');
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  /** A server on 127.0.0.1:0 whose every response is `handle`'s. */
  async function serve(handle: (res: ServerResponse) => void) {
    const server = createServer((_req, res) => handle(res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    return {
      port,
      close: () => {
        server.closeAllConnections();
        return new Promise((r) => server.close(r));
      },
    };
  }

  it('the client leaves mid-file: the file stream is closed, writeBody resolves false', async () => {
    let stream: ReadStream | undefined;
    let result: Promise<boolean> | undefined;
    const s = await serve((res) => {
      res.writeHead(200, { 'Content-Length': String(SIZE) });
      stream = createReadStream(file);
      result = writeBody(res, stream);
    });
    try {
      const sock = connect(s.port, '127.0.0.1');
      sock.write('GET /big HTTP/1.1\r\nHost: x\r\n\r\n');
      await new Promise((r) => sock.once('data', r));
      sock.destroy();
      await waitUntil('the file stream closed', () => stream?.closed);
      assert.equal(await result, false);
      assert.ok(stream!.bytesRead < SIZE, `read ${stream!.bytesRead} of ${SIZE} bytes: stopped early`);
    } finally {
      await s.close();
    }
  });

  it('the source fails mid-body: the response is destroyed, the client gets a short body', async () => {
    const boom = new Error('EIO: read failed');
    let result: Promise<boolean> | undefined;
    const s = await serve((res) => {
      res.writeHead(200, { 'Content-Length': '1000' });
      result = writeBody(res, chunks(['x'.repeat(100)], boom));
      result.catch(() => {});
    });
    try {
      const got = await new Promise<{ bytes: number; complete: boolean }>((resolve) => {
        const req = request({ port: s.port, host: '127.0.0.1', path: '/' }, (res) => {
          let n = 0;
          res.on('data', (c: Buffer) => {
            n += c.length;
          });
          res.on('error', () => {});
          res.on('close', () => resolve({ bytes: n, complete: res.complete }));
        });
        // Destroyed before its head left: the connection closes with no response at all.
        req.on('error', () => resolve({ bytes: 0, complete: false }));
        req.end();
      });
      assert.equal(got.complete, false);
      assert.ok(got.bytes < 1000, `${got.bytes} bytes of the declared 1000`);
      await assert.rejects(result!, boom);
    } finally {
      await s.close();
    }
  });

  it('a paused reader holds the file back, then gets all of it intact', async () => {
    let stream: ReadStream | undefined;
    let stalls = 0;
    let received = 0;
    let maxInFlight = 0;
    let result: Promise<boolean> | undefined;
    const s = await serve((res) => {
      res.writeHead(200, { 'Content-Length': String(SIZE) });
      stream = createReadStream(file);
      // The response as the sink, with its write() answers counted.
      const sink: BodySink = {
        get destroyed() {
          return res.destroyed;
        },
        write: (c) => {
          maxInFlight = Math.max(maxInFlight, stream!.bytesRead - received);
          const ok = res.write(c);
          if (!ok) stalls++;
          return ok;
        },
        end: () => res.end(),
        destroy: (e) => res.destroy(e),
        on: (e, f) => res.on(e, f),
        off: (e, f) => res.off(e, f),
      };
      result = writeBody(sink, stream);
    });
    try {
      const res = await new Promise<IncomingMessage>((resolve, reject) => {
        const req = request({ port: s.port, host: '127.0.0.1', path: '/' }, resolve);
        req.on('error', reject);
        req.end();
      });
      res.pause();
      await waitUntil('the server is held back', () => stalls > 0);
      await holdsFor(
        `the file is read at most ${IN_FLIGHT_BOUND} bytes ahead of a paused reader`,
        () => stream!.bytesRead <= IN_FLIGHT_BOUND,
        500,
      );
      const hash = createHash('sha256');
      res.on('data', (c: Buffer) => {
        hash.update(c);
        received += c.length;
      });
      res.resume();
      await new Promise((r) => res.on('end', r));
      assert.equal(received, SIZE);
      assert.equal(hash.digest('hex'), sha256, 'every byte, in order');
      assert.ok(maxInFlight <= IN_FLIGHT_BOUND, `${maxInFlight} bytes in flight, over ${IN_FLIGHT_BOUND}`);
      assert.equal(await result, true);
      await waitUntil('the file stream closed at its end', () => stream!.closed);
    } finally {
      await s.close();
    }
  });
});
