// FetchSink (server/fetch/sink.ts), table-style: the fields of the Response it makes, as Node's
// ServerResponse would send them (writeHead's values win over setHeader's; a list repeats the name;
// Date always; no content for HEAD and the null-body statuses, RFC 9110 §6.4.1).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addDefaultHeader, addResponseVary } from '../../../src/server/core/response-headers.js';
import { FetchSink } from '../../../src/server/fetch/sink.js';

type Step = (s: FetchSink) => void;

const cases: [string, Step[], boolean, Record<string, string | null>, string | null][] = [
  [
    'writeHead with a flat list',
    [(s) => s.writeHead(200, ['Content-Type', 'text/plain', 'ETag', '"a"']), (s) => s.end('hi')],
    false,
    { 'content-type': 'text/plain', etag: '"a"' },
    'hi',
  ],
  [
    'writeHead with an object',
    [(s) => s.writeHead(201, { 'Content-Type': 'text/plain', Skipped: undefined }), (s) => s.end('x')],
    false,
    { 'content-type': 'text/plain', skipped: null },
    'x',
  ],
  [
    'setHeader, then writeHead naming the same field: writeHead wins',
    [
      (s) => s.setHeader('cache-control', 'no-store'),
      (s) => s.setHeader('X-Kept', '1'),
      (s) => s.writeHead(200, ['Cache-Control', 'max-age=60']),
      (s) => s.end(),
    ],
    false,
    { 'cache-control': 'max-age=60', 'x-kept': '1' },
    '',
  ],
  [
    'a list value repeats the field (Set-Cookie)',
    [(s) => s.setHeader('Set-Cookie', ['a=1', 'b=2']), (s) => s.end('')],
    false,
    { 'set-cookie': 'a=1, b=2' },
    '',
  ],
  [
    'a Date of our own is kept, not doubled',
    [(s) => s.writeHead(200, { Date: 'Sun, 06 Nov 1994 08:49:37 GMT' }), (s) => s.end()],
    false,
    { date: 'Sun, 06 Nov 1994 08:49:37 GMT' },
    '',
  ],
  [
    'HEAD: the fields, no content',
    [(s) => s.writeHead(200, ['Content-Length', '2']), (s) => s.end('hi')],
    true,
    { 'content-length': '2' },
    '',
  ],
  [
    '304: no content whatever end() is given',
    [(s) => s.writeHead(304, ['ETag', '"a"']), (s) => s.end('x')],
    false,
    { etag: '"a"' },
    '',
  ],
  [
    'removeHeader after writeHead kept its list',
    [(s) => s.writeHead(200, ['A', '1', 'B', '2']), (s) => s.removeHeader('a'), (s) => s.end()],
    false,
    { a: null, b: '2' },
    '',
  ],
  // Node's end() and write() without a writeHead make the head through writeHead (_implicitHeader), so
  // the policy headers that response-headers.ts folds in there (header rules, CORS, Vary) go out on an
  // error page too; the sink does the same (found by the runtimes matrix: headers.test.ts, 404 and 405).
  [
    'setHeader then end() without writeHead: the pending policy headers go out',
    [
      (s) => addDefaultHeader(s, 'Referrer-Policy', 'no-referrer'),
      (s) => addResponseVary(s, 'Origin'),
      (s) => {
        s.statusCode = 404;
      },
      (s) => s.setHeader('Content-Type', 'application/problem+json'),
      (s) => s.end('{}'),
    ],
    false,
    { 'referrer-policy': 'no-referrer', vary: 'Origin', 'content-type': 'application/problem+json' },
    '{}',
  ],
  [
    'write() without writeHead: the pending policy headers go out, a handler value wins',
    [
      (s) => addDefaultHeader(s, 'X-Frame-Options', 'DENY'),
      (s) => addDefaultHeader(s, 'X-Content-Type-Options', 'nosniff'),
      (s) => s.setHeader('X-Frame-Options', 'SAMEORIGIN'),
      (s) => s.write('a'),
      (s) => s.end('b'),
    ],
    false,
    { 'x-frame-options': 'SAMEORIGIN', 'x-content-type-options': 'nosniff' },
    'ab',
  ],
];

describe('FetchSink: the Response it makes', () => {
  for (const [name, steps, head, fields, body] of cases) {
    it(name, async () => {
      const s = new FetchSink(head);
      for (const step of steps) step(s);
      const r = (await s.response)!;
      for (const [k, v] of Object.entries(fields)) assert.equal(r.headers.get(k), v, k);
      assert.ok(r.headers.get('date'), 'Date (RFC 9110 §6.6.1)');
      assert.equal(r.body === null ? '' : await r.text(), body);
    });
  }

  for (const [complete, want] of [
    [false, null],
    [true, 'close'],
  ] as const)
    it(`Connection: close with the request's content ${complete ? 'all in: kept' : 'still arriving: dropped, the host reads the rest'}`, async () => {
      const s = new FetchSink(false, undefined, { complete });
      s.writeHead(413, { 'Content-Type': 'text/plain', Connection: 'close' });
      s.end('too large');
      const r = (await s.response)!;
      assert.equal(r.headers.get('connection'), want);
      assert.equal(r.headers.get('content-type'), 'text/plain');
    });

  it('getHeader and hasHeader see writeHead fields', () => {
    const s = new FetchSink();
    s.setHeader('X-A', '1');
    s.writeHead(200, ['Content-Type', 'text/html']);
    assert.equal(s.getHeader('content-type'), 'text/html');
    assert.equal(s.hasHeader('x-a'), true);
    assert.deepEqual(s.getHeaderNames().sort(), ['content-type', 'x-a']);
  });

  it('a stream body: write() says wait at the high-water mark; the reader pulling drains it', async () => {
    const s = new FetchSink();
    s.writeHead(200, ['Content-Type', 'application/octet-stream']);
    let drained = 0;
    s.on('drain', () => drained++);
    const chunk = new Uint8Array(16 * 1024);
    const answers: boolean[] = [];
    for (let i = 0; i < 6; i++) answers.push(s.write(chunk));
    assert.ok(answers.includes(false), 'backpressure reached');
    const r = (await s.response)!;
    const reader = r.body!.getReader();
    let total = 0;
    // Below the high-water mark again (96 KiB queued, 64 KiB mark): the stream pulls, the sink drains.
    for (let i = 0; i < 3; i++) total += (await reader.read()).value!.byteLength;
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(drained, 1);
    s.end();
    for (let c = await reader.read(); !c.done; c = await reader.read()) total += c.value.byteLength;
    assert.equal(total, 6 * 16 * 1024);
  });

  it('pieces ended within one turn: the Response waits for end() and carries them as one buffer', async () => {
    const s = new FetchSink();
    s.writeHead(200, ['Content-Type', 'text/plain']);
    let settled = false;
    void s.response.then(() => {
      settled = true;
    });
    assert.equal(s.write('ab'), true);
    assert.equal(s.write(new Uint8Array([99])), true);
    assert.equal(s.writableLength, 3);
    await Promise.resolve();
    assert.equal(settled, false, 'no Response before end() within the turn');
    s.end('d');
    const r = (await s.response)!;
    assert.equal(await r.text(), 'abcd');
    assert.equal(s.bytesSent, 4);
  });

  it('a piece not ended within the turn: the head goes out on the next turn, the rest streams', async () => {
    const s = new FetchSink();
    s.writeHead(200, ['Content-Type', 'text/event-stream']);
    s.write('data: 1\n\n');
    const r = (await s.response)!;
    const reader = r.body!.getReader();
    assert.equal(new TextDecoder().decode((await reader.read()).value), 'data: 1\n\n');
    s.write('data: 2\n\n');
    assert.equal(new TextDecoder().decode((await reader.read()).value), 'data: 2\n\n');
    s.end();
    assert.equal((await reader.read()).done, true);
  });

  it('held pieces reaching the high-water mark begin the stream at once, in order', async () => {
    const s = new FetchSink();
    s.writeHead(200);
    const a = new Uint8Array(40 * 1024).fill(1);
    const b = new Uint8Array(40 * 1024).fill(2);
    assert.equal(s.write(a), true);
    assert.equal(s.write(b), false, 'over the mark: wait for drain');
    const r = (await s.response)!;
    s.end();
    const all = new Uint8Array(await r.arrayBuffer());
    assert.equal(all.byteLength, 80 * 1024);
    assert.equal(all[0], 1);
    assert.equal(all[all.byteLength - 1], 2);
  });

  it('dropped while pieces are held: the Response promise rejects, nothing begins later', async () => {
    const s = new FetchSink();
    s.writeHead(200);
    s.write('partial');
    s.destroy(new Error('client gone'));
    await assert.rejects(s.response, /client gone/);
    await new Promise((resolve) => setTimeout(resolve, 5));
  });
  it('responseEnding: once, before the host gets the last content (whole, streamed, dropped)', async () => {
    const whole: string[] = [];
    const a = new FetchSink(false, () => whole.push('ending'));
    a.writeHead(200);
    a.end('x');
    a.end('again');
    a.destroy();
    assert.deepEqual(whole, ['ending']);

    let streamed = 0;
    const b = new FetchSink(false, () => streamed++);
    b.writeHead(200);
    b.write(new Uint8Array(70 * 1024));
    const r = (await b.response)!;
    assert.equal(streamed, 0, 'not while the body is still being written');
    b.end('tail');
    assert.equal(streamed, 1);
    await r.arrayBuffer();

    let dropped = 0;
    const c = new FetchSink(false, () => dropped++);
    c.destroy(new Error('gone'));
    await assert.rejects(c.response, /gone/);
    assert.equal(dropped, 1);
  });

  it('a Response made before anyone asks is handed over as it is (made), and response still gives it', async () => {
    const s = new FetchSink();
    s.writeHead(200, ['Content-Type', 'text/plain']);
    s.end('now');
    const made = s.made;
    assert.ok(made instanceof Response);
    assert.equal(await s.response, made);
    assert.equal(await made.text(), 'now');
    const later = new FetchSink();
    assert.equal(later.made, undefined, 'nothing made yet');
    const waiting = later.response;
    later.end('x');
    assert.equal(later.made, undefined, 'once a promise is out, the promise carries it');
    assert.equal(await (await waiting)!.text(), 'x');
  });

  it('dropped before anyone asks: no unhandled rejection; the rejection comes when asked', async () => {
    const s = new FetchSink();
    s.destroy(new Error('gone early'));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(s.made, undefined);
    await assert.rejects(s.response, /gone early/);
  });
});
