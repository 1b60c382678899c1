// Attack: connections that pipeline thousands of requests and never read the answers. Node parses
// every request of each chunk it reads and starts a handler for each, so the server held thousands of
// responses per connection (RSS 72 MB -> 0.3-2 GB with 60 connections). With limits.maxPipelinedRequests
// the server accepts at most that many outstanding requests per connection (plus the few answers the
// socket buffers absorb) and keeps serving other clients. Measured as requests accepted per connection.
import assert from 'node:assert/strict';
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

describe('pipelining flood', () => {
  let site: string;
  let gh: TestServer;
  const accepted = new Map<Socket, number>();
  const MAX = 4;
  before(async () => {
    site = makeSite({ 'big.bin': Buffer.alloc(BIG_BYTES, 97), 'small.txt': 'small' });
    gh = await startServer(site, { limits: { maxPipelinedRequests: MAX } });
    gh.app.server.on('request', (req) => {
      const s = req.socket as Socket;
      accepted.set(s, (accepted.get(s) ?? 0) + 1);
    });
  });
  after(async () => {
    await gh?.close();
    removeSite(site);
  });

  it('attack: 20 connections pipelining 2,000 requests each, never reading -> bounded requests accepted per connection, others still served', async () => {
    const flood: Socket[] = [];
    const request = 'GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n';
    const serverSide = new Set<Socket>();
    gh.app.server.on('connection', (s: Socket) => serverSide.add(s));
    for (let i = 0; i < 20; i++) {
      const s = await open(gh.port);
      s.on('error', () => {});
      s.pause(); // never read
      s.write(request.repeat(2000));
      flood.push(s);
    }
    await until(
      () => [...serverSide].filter((s) => (accepted.get(s) ?? 0) > 0).length >= 20,
      'every flood connection to get a request in',
    );
    // What the socket buffers can absorb: the server's send buffer (tcp_wmem max 4 MiB) and the
    // client's receive window and stream buffer, in 1 MB answers; Node alone accepted ~1,600 per 64 KiB read.
    const bound = MAX + 16;
    for (let round = 0; round < 5; round++) {
      const r = await get(gh.url, '/small.txt');
      assert.equal(r.status, 200, 'another client is served during the flood');
      const most = Math.max(...[...serverSide].map((s) => accepted.get(s) ?? 0));
      assert.ok(
        most <= bound,
        `round ${round}: ${most} requests accepted on one connection (bound ${bound})`,
      );
    }
    for (const s of flood) s.destroy();
  });

  it('a client that reads gets every pipelined answer, in order', async () => {
    const s = await open(gh.port);
    const done = readResponses(s, 101);
    // POST bodies holding CRLFCRLF must not be taken for request heads.
    const post = 'POST /small.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 8\r\n\r\n\r\n\r\nab\r\n';
    s.write(
      `${'GET /small.txt HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(50)}${post.repeat(50)}GET /missing HTTP/1.1\r\nHost: x\r\n\r\n`,
    );
    const statuses = await done;
    s.destroy();
    assert.deepEqual(statuses, [...Array(50).fill(200), ...Array(50).fill(405), 404]);
  });

  it('a client that half-closes after pipelining still gets every answer', async () => {
    const s = await open(gh.port);
    const done = readResponses(s, 40);
    s.end('GET /small.txt HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(40));
    assert.equal((await done).length, 40);
    s.destroy();
  });

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
