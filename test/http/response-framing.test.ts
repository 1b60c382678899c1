// The response side of RFC 9112 as the proxy's upstream client reads it (src/http/response-framing.ts):
// status line and field lines (§4, §5), message framing (§6.3), the chunked coding (§7.1). Table
// cases named by their condition, then a seeded fuzz: any split of a valid chunked body decodes to the
// same content, and hostile bytes never throw (replay with the FUZZ_SEED in the message).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ChunkedDecoder,
  type FramingError,
  parseResponseHead,
  type ResponseHead,
  responseFraming,
} from '../../src/http/response-framing.js';
import { forAll, type Gen, ITERATIONS } from '../helpers/random.js';

const head = (text: string): ResponseHead => {
  const h = parseResponseHead(text);
  assert.ok(!('error' in h), `parses: ${JSON.stringify(text)}`);
  return h;
};

describe('parseResponseHead (RFC 9112 §4, §5)', () => {
  it('status line, reason and fields; repeated names become a list, names lowercase', () => {
    const h = head(
      'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nSet-Cookie: a=1\r\nset-cookie: b=2\r\nX-Empty:',
    );
    assert.equal(h.status, 200);
    assert.equal(h.reason, 'OK');
    assert.equal(h.minor, 1);
    assert.deepEqual(h.fields, { 'content-type': 'text/plain', 'set-cookie': ['a=1', 'b=2'], 'x-empty': '' });
  });

  const good: [string, string, number, string][] = [
    ['no reason phrase, with its space', 'HTTP/1.1 204 ', 204, ''],
    ['no reason phrase, no space', 'HTTP/1.1 204', 204, ''],
    ['HTTP/1.0', 'HTTP/1.0 200 Fine', 200, 'Fine'],
    ['obs-text in the reason', 'HTTP/1.1 200 \u00e9t\u00e9', 200, '\u00e9t\u00e9'],
    ['OWS around a value is not part of it', 'HTTP/1.1 200 OK\r\nX-A: \t v \t', 200, 'OK'],
  ];
  for (const [name, text, status, reason] of good)
    it(`accepts ${name}`, () => {
      const h = head(text);
      assert.equal(h.status, status);
      assert.equal(h.reason, reason);
    });
  it('OWS trimmed from values', () =>
    assert.equal(head('HTTP/1.1 200 OK\r\nX-A: \t v \t').fields['x-a'], 'v'));

  const bad: [string, string][] = [
    ['HTTP/2 in a status line', 'HTTP/2 200 OK'],
    ['a four-digit status', 'HTTP/1.1 2000 OK'],
    ['a status below 100', 'HTTP/1.1 099 OK'],
    ['lowercase http', 'http/1.1 200 OK'],
    ['a control in the reason', 'HTTP/1.1 200 O\x01K'],
    ['obs-fold (RFC 9112 §5.2)', 'HTTP/1.1 200 OK\r\nX-A: 1\r\n 2'],
    ['whitespace before the colon (RFC 9112 §5.1)', 'HTTP/1.1 200 OK\r\nX-A : 1'],
    ['an empty field name', 'HTTP/1.1 200 OK\r\n: 1'],
    ['a line without a colon', 'HTTP/1.1 200 OK\r\nnonsense'],
    ['a separator in the name', 'HTTP/1.1 200 OK\r\nX(A): 1'],
    ['a bare LF between lines', 'HTTP/1.1 200 OK\r\nX-A: 1\nX-B: 2'],
    ['a bare CR in a value', 'HTTP/1.1 200 OK\r\nX-A: 1\rX-B: 2'],
    ['NUL in a value (RFC 9110 §5.5)', 'HTTP/1.1 200 OK\r\nX-A: a\0b'],
  ];
  for (const [name, text] of bad)
    it(`refuses ${name}`, () => {
      const h = parseResponseHead(text);
      assert.ok('error' in h, `refused: ${JSON.stringify(text)}`);
    });
});

describe('responseFraming (RFC 9112 §6.3)', () => {
  type Row = [string, string, string, ReturnType<typeof responseFraming>];
  const rows: Row[] = [
    [
      'HEAD: no content whatever Content-Length says',
      'HEAD',
      'HTTP/1.1 200 OK\r\nContent-Length: 9',
      { framing: { kind: 'none' }, reusable: true },
    ],
    ['1xx: no content', 'GET', 'HTTP/1.1 103 Early Hints', { framing: { kind: 'none' }, reusable: true }],
    [
      '204: no content',
      'GET',
      'HTTP/1.1 204 No Content\r\nContent-Length: 4',
      { framing: { kind: 'none' }, reusable: true },
    ],
    [
      '304: no content',
      'GET',
      'HTTP/1.1 304 Not Modified\r\nContent-Length: 4',
      { framing: { kind: 'none' }, reusable: true },
    ],
    [
      'chunked',
      'GET',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked',
      { framing: { kind: 'chunked' }, reusable: true },
    ],
    [
      'gzip then chunked',
      'GET',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: Chunked',
      { framing: { kind: 'chunked' }, reusable: true },
    ],
    [
      'Transfer-Encoding and Content-Length: chunked wins, not reused',
      'GET',
      'HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked',
      { framing: { kind: 'chunked' }, reusable: false },
    ],
    [
      'a final coding other than chunked: to the close',
      'GET',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip',
      { framing: { kind: 'close' }, reusable: false },
    ],
    [
      'Content-Length',
      'GET',
      'HTTP/1.1 200 OK\r\nContent-Length: 12',
      { framing: { kind: 'length', length: 12 }, reusable: true },
    ],
    [
      'a repeated equal Content-Length',
      'GET',
      'HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\nContent-Length: 5',
      { framing: { kind: 'length', length: 5 }, reusable: true },
    ],
    [
      'no length at all: to the close',
      'GET',
      'HTTP/1.1 200 OK',
      { framing: { kind: 'close' }, reusable: false },
    ],
    [
      'Connection: close',
      'GET',
      'HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0',
      { framing: { kind: 'length', length: 0 }, reusable: false },
    ],
    [
      'Connection: keep-alive, Close',
      'GET',
      'HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 0',
      { framing: { kind: 'length', length: 0 }, reusable: false },
    ],
    [
      'HTTP/1.0 without keep-alive',
      'GET',
      'HTTP/1.0 200 OK\r\nContent-Length: 0',
      { framing: { kind: 'length', length: 0 }, reusable: false },
    ],
    [
      'HTTP/1.0 with keep-alive',
      'GET',
      'HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0',
      { framing: { kind: 'length', length: 0 }, reusable: true },
    ],
    [
      'conflicting Content-Length',
      'GET',
      'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6',
      { error: 'conflicting Content-Length values' },
    ],
    [
      'a signed Content-Length',
      'GET',
      'HTTP/1.1 200 OK\r\nContent-Length: +5',
      { error: 'an invalid Content-Length' },
    ],
    [
      'a hex Content-Length',
      'GET',
      'HTTP/1.1 200 OK\r\nContent-Length: 0x10',
      { error: 'an invalid Content-Length' },
    ],
    [
      'an empty Content-Length',
      'GET',
      'HTTP/1.1 200 OK\r\nContent-Length:',
      { error: 'an invalid Content-Length' },
    ],
    [
      'Transfer-Encoding in HTTP/1.0',
      'GET',
      'HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked',
      { error: 'Transfer-Encoding in an HTTP/1.0 response' },
    ],
    [
      'chunked twice',
      'GET',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked',
      { error: 'chunked applied before another coding' },
    ],
  ];
  for (const [name, method, text, want] of rows)
    it(`${name} -> ${'error' in want ? 'refused' : `${want.framing.kind}${want.reusable ? '' : ', not reused'}`}`, () => {
      assert.deepEqual(responseFraming(method, head(text)), want);
    });
});

/** Decodes `bytes` fed in the given pieces: the content, the trailers, or the first error. */
function decode(pieces: Uint8Array[]): { content: string; used: number; trailers: object } | FramingError {
  const d = new ChunkedDecoder();
  let content = '';
  let used = 0;
  for (const piece of pieces) {
    const step = d.push(piece);
    if ('error' in step) return step;
    for (const data of step.data) content += Buffer.from(data).toString('latin1');
    used += step.used;
    if (step.done) return { content, used, trailers: d.trailers };
  }
  return { error: 'incomplete' };
}
const bytes = (s: string) => Buffer.from(s, 'latin1');

describe('ChunkedDecoder (RFC 9112 §7.1)', () => {
  it('chunks, an extension and a trailer section; bytes after the message are not used', () => {
    const wire = '5;name="v"\r\nhello\r\n1\r\n \r\nA\r\n0123456789\r\n0\r\nX-Sum: 9\r\n\r\n';
    const r = decode([bytes(`${wire}HTTP/1.1 200`)]);
    assert.deepEqual(r, { content: 'hello 0123456789', used: wire.length, trailers: { 'x-sum': '9' } });
  });

  const bad: [string, string][] = [
    ['a bare LF after the size', '5\nhello\r\n0\r\n\r\n'],
    ['a bare CR after the size', '5\rhello\r\n0\r\n\r\n'],
    ['a sign before the size', '-5\r\nhello\r\n0\r\n\r\n'],
    ['0x before the size', '0x5\r\nhello\r\n0\r\n\r\n'],
    ['whitespace before the size', ' 5\r\nhello\r\n0\r\n\r\n'],
    ['an empty size', '\r\nhello\r\n0\r\n\r\n'],
    ['junk after the size without ";"', '5 x\r\nhello\r\n0\r\n\r\n'],
    ['a size past 12 hex digits', '1000000000000\r\n'],
    ['data longer than its size', '2\r\nhello\r\n0\r\n\r\n'],
    ['a bare LF after the data', '5\r\nhello\n0\r\n\r\n'],
    ['a control in an extension', '5;a=\x01\r\nhello\r\n0\r\n\r\n'],
    ['obs-fold in the trailers', '0\r\nX-A: 1\r\n 2\r\n\r\n'],
    ['a chunk-size line past 4 KiB', `5;${'a'.repeat(5000)}\r\nhello\r\n0\r\n\r\n`],
  ];
  for (const [name, text] of bad)
    it(`refuses ${name}`, () => {
      const r = decode([bytes(text)]);
      assert.ok('error' in r && r.error !== 'incomplete', `refused: ${JSON.stringify(r)}`);
    });
});

describe('ChunkedDecoder fuzz', () => {
  /** A valid chunked message: its content and its encoding. */
  function message(g: Gen): { content: string; wire: string } {
    let content = '';
    let wire = '';
    for (let n = g.int(5); n > 0; n--) {
      const data = g.string(['a', 'b', '\r', '\n', '0', '\r\n', 'HTTP/1.1 200 OK\r\n\r\n'], 8);
      if (data === '') continue;
      content += data;
      const ext = g.chance(0.3) ? `;x${g.chance(0.5) ? '="q;r"' : '=1'}` : '';
      wire += `${g.chance(0.5) ? data.length.toString(16) : data.length.toString(16).toUpperCase()}${ext}\r\n${data}\r\n`;
    }
    wire += `0\r\n${g.chance(0.3) ? 'X-T: 1\r\n' : ''}\r\n`;
    return { content, wire };
  }

  it('any split of a valid message decodes to its content and uses exactly its bytes', () => {
    forAll(
      0x7e11,
      ITERATIONS,
      (g) => {
        const m = message(g);
        const cuts = Array.from({ length: g.int(6) }, () => g.int(m.wire.length + 1)).sort((a, b) => a - b);
        return { ...m, cuts, tail: g.chance(0.5) ? 'NEXT' : '' };
      },
      ({ content, wire, cuts, tail }) => {
        const all = bytes(wire + tail);
        const pieces: Uint8Array[] = [];
        let at = 0;
        for (const cut of [...cuts, all.length]) {
          pieces.push(all.subarray(at, cut));
          at = cut;
        }
        const r = decode(pieces);
        assert.ok(!('error' in r), `decoded: ${JSON.stringify(r)}`);
        assert.equal(r.content, content);
        assert.equal(r.used, wire.length, 'the bytes after the message are left for the next one');
      },
    );
  });

  it('hostile bytes never throw: each push gives a step or a one-line error', () => {
    forAll(
      0x7e12,
      ITERATIONS,
      (g) =>
        g.chance(0.5)
          ? bytes(g.mutate(message(g).wire, ['\r', '\n', ';', ' ', 'z', '0', 'f', '\0', ':']))
          : g.bytes(64),
      (input) => {
        const d = new ChunkedDecoder();
        const step = d.push(input);
        if ('error' in step) assert.match(step.error, /^[^\r\n]+$/);
        else assert.ok(step.used <= input.length);
      },
    );
  });

  it('hostile heads never throw', () => {
    forAll(
      0x7e13,
      ITERATIONS,
      (g) =>
        g.mutate('HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked', [
          '\r',
          '\n',
          ' ',
          ':',
          '\0',
          ',',
          '\u00ff',
          'x',
        ]),
      (text) => {
        const h = parseResponseHead(text);
        if ('error' in h) return;
        const f = responseFraming('GET', h);
        if (!('error' in f) && f.framing.kind === 'length') assert.ok(Number.isSafeInteger(f.framing.length));
      },
    );
  });
});
