// Attack: connections that pipeline thousands of requests and never read the answers. Node parses
// every request of each chunk it reads and starts a handler for each, so the server held thousands of
// responses per connection (RSS 72 MB -> 0.3-2 GB with 60 connections). With limits.maxPipelinedRequests
// at most that many requests per connection are handled and unanswered; the rest of the read that showed
// the pipelining waits unhandled and the socket is not read further (src/server/node/pipelining.ts), so other
// clients are still served. Measured per connection as the server's 'request' events saw it.
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { get, makeSite, removeSite, startServer, type TestServer } from '../helpers/http.js';
import { waitUntil } from '../helpers/wait.js';

const BIG_BYTES = 1_000_000;

/** Waits until `cond` holds; the shared deadline (WAIT_DEADLINE_MS) only turns a hang into a failure. */
async function until(cond: () => boolean, what: string): Promise<void> {
  await waitUntil(what, cond);
}

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => resolve(s));
    s.on('error', reject);
  });
}

/** Reads `n` complete responses (Content-Length framed) off `s`; resolves with their statuses. */
function readResponses(s: Socket, n: number): Promise<number[]> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const statuses: number[] = [];
    s.on('data', (c: Buffer) => {
      buf = Buffer.concat([buf, c]);
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end === -1) break;
        const head = buf.subarray(0, end).toString('latin1');
        const len = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (buf.length < end + 4 + len) break;
        statuses.push(Number(head.slice(9, 12)));
        buf = buf.subarray(end + 4 + len);
        if (statuses.length === n) resolve(statuses);
      }
    });
    s.on('error', reject);
    s.on('close', () =>
      statuses.length === n ? undefined : reject(new Error(`closed after ${statuses.length}`)),
    );
  });
}

/** Requests of one connection as the server saw them: parsed by Node, and those not yet answered. */
interface ConnSeen {
  parsed: number;
  unanswered: Set<ServerResponse>;
}

/** Request heads in one read of Node's HTTP parser (64 KiB), at least. */
const headsPerRead = (request: string) => Math.ceil((64 * 1024) / request.length);

describe('pipelining flood', () => {
  let site: string;
  let gh: TestServer;
  const seen = new Map<Socket, ConnSeen>();
  const MAX = 4;
  before(async () => {
    site = makeSite({ 'big.bin': Buffer.alloc(BIG_BYTES, 97), 'small.txt': 'small' });
    gh = await startServer(site, { limits: { maxPipelinedRequests: MAX } });
    gh.app.server.on('request', (req, res: ServerResponse) => {
      const s = req.socket as Socket;
      let c = seen.get(s);
      if (c === undefined) {
        c = { parsed: 0, unanswered: new Set() };
        seen.set(s, c);
      }
      c.parsed++;
      c.unanswered.add(res);
      res.on('close', () => c.unanswered.delete(res));
    });
  });
  after(async () => {
    await gh?.close();
    removeSite(site);
  });

  it('attack: 20 connections pipelining 5,000 requests each, never reading -> at most maxPipelinedRequests handled per connection, the read stops past the bound, others still served', async () => {
    const flood: Socket[] = [];
    const request = 'GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n';
    const serverSide = new Set<Socket>();
    gh.app.server.on('connection', (s: Socket) => serverSide.add(s));
    for (let i = 0; i < 20; i++) {
      const s = await open(gh.port);
      s.on('error', () => {});
      s.pause(); // never read
      s.write(request.repeat(5000));
      flood.push(s);
    }
    await until(
      () => [...serverSide].filter((s) => (seen.get(s)?.parsed ?? 0) > MAX).length >= 20,
      'every flood connection to pipeline past the bound',
    );
    const perRead = headsPerRead(request);
    for (let round = 0; round < 5; round++) {
      const r = await get(gh.url, '/small.txt');
      assert.equal(r.status, 200, 'another client is served during the flood');
      for (const s of serverSide) {
        const c = seen.get(s);
        if (c === undefined) continue;
        // A handler has run for a request once its answer's head exists; the rest wait unhandled.
        const handled = [...c.unanswered].filter((res) => res.headersSent).length;
        assert.ok(handled <= MAX, `round ${round}: ${handled} unanswered requests handled (bound ${MAX})`);
        // The read that showed the pipelining stops at the first request beyond the bound (it was
        // parsed whole: perRead heads); nothing more is read until answers drain.
        assert.ok(
          c.unanswered.size <= MAX + 3,
          `round ${round}: ${c.unanswered.size} parsed and unanswered (bound ${MAX} + 3, not ${perRead} heads of one read)`,
        );
      }
    }
    for (const s of flood) s.destroy();
  });

  it('attack: the same flood against strictPipelining -> the parser never runs ahead of the bound', async () => {
    const strict = await startServer(site, { limits: { maxPipelinedRequests: MAX, strictPipelining: true } });
    const parsed = new Map<Socket, number>();
    strict.app.server.on('request', (req) =>
      parsed.set(req.socket as Socket, (parsed.get(req.socket as Socket) ?? 0) + 1),
    );
    const flood: Socket[] = [];
    try {
      for (let i = 0; i < 5; i++) {
        const s = await open(strict.port);
        s.on('error', () => {});
        s.pause(); // never read
        s.write('GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(5000));
        flood.push(s);
      }
      await until(
        () => parsed.size >= 5 && Math.min(...parsed.values()) >= MAX,
        'the bound reached everywhere',
      );
      assert.equal((await get(strict.url, '/small.txt')).status, 200, 'another client is served');
      // What the socket buffers absorb: the server's send buffer and the client's window, in 1 MB answers.
      const most = Math.max(...parsed.values());
      assert.ok(most <= MAX + 16, `${most} requests parsed on one connection (bound ${MAX} + 16)`);
    } finally {
      for (const s of flood) s.destroy();
      await strict.close();
    }
  });

  for (const strict of [false, true]) {
    const mode = strict ? ' (strictPipelining)' : '';
    /** The flood server, or a strict one for the second round (closed by the caller). */
    const serverFor = async () =>
      strict
        ? await startServer(site, { limits: { maxPipelinedRequests: MAX, strictPipelining: true } })
        : undefined;

    it(`a client that reads gets every pipelined answer, in order${mode}`, async () => {
      const own = await serverFor();
      const s = await open((own ?? gh).port);
      try {
        const done = readResponses(s, 101);
        // POST bodies holding CRLFCRLF must not be taken for request heads.
        const post = 'POST /small.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 8\r\n\r\n\r\n\r\nab\r\n';
        s.write(
          `${'GET /small.txt HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(50)}${post.repeat(50)}GET /missing HTTP/1.1\r\nHost: x\r\n\r\n`,
        );
        assert.deepEqual(await done, [...Array(50).fill(200), ...Array(50).fill(405), 404]);
      } finally {
        s.destroy();
        await own?.close();
      }
    });

    it(`a client that half-closes right after pipelining gets every answer, those sent after its FIN too${mode}`, async () => {
      // A server of its own: its first answers wait on the disk (nothing cached), so most are sent
      // after the client's FIN arrived (Node alone ends the connection at the FIN and loses them).
      const own = await startServer(site, {
        limits: { maxPipelinedRequests: MAX, strictPipelining: strict },
      });
      const s = await open(own.port);
      try {
        const done = readResponses(s, 40);
        s.end('GET /small.txt HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(40));
        assert.deepEqual(await done, Array(40).fill(200));
      } finally {
        s.destroy();
        await own.close();
      }
    });
  }

  it('limits.maxPipelinedRequests 0 turns the bound off (Node reads whole chunks)', async () => {
    const off = await startServer(site, { limits: { maxPipelinedRequests: 0 } });
    const counts = new Map<Socket, number>();
    off.app.server.on('request', (req) =>
      counts.set(req.socket as Socket, (counts.get(req.socket as Socket) ?? 0) + 1),
    );
    try {
      const s = await open(off.port);
      s.on('error', () => {});
      s.pause();
      s.write('GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(200));
      await until(() => Math.max(0, ...counts.values()) > 16 + MAX, 'more than the bound to be accepted');
      s.destroy();
    } finally {
      await off.close();
    }
  });
});
