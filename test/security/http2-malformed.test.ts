// Malformed HTTP/2 field lines (RFC 9113 §8.2.1, §8.2.2, §8.3), sent as hand-written HPACK (RFC 7541
// §6.2.2 literals, no Huffman): Node's own client refuses to send them. What happens is decided inside
// Node's nghttp2 binding, before any Gatehouse code runs: an upper-case name, a connection-specific
// field or an unknown pseudo-header resets the stream (PROTOCOL_ERROR); a value with CR, LF, NUL or
// another control character, leading or trailing whitespace, or a name with non-token characters is
// dropped from the request (Node's OnInvalidHeader ignores it) and never reaches the steps. Either way
// the bad bytes never reach the HTTP/1.1 upstream.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { makeSite, removeSite, startServer, type TestServer } from '../helpers/http.js';
import { testTls } from '../helpers/tls.js';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/** An HTTP/2 frame (RFC 9113 §4.1). */
function frame(type: number, flags: number, streamId: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(streamId, 5);
  return Buffer.concat([head, payload]);
}

/** An HPACK string literal without Huffman coding (RFC 7541 §5.2); short strings only. */
function hpackString(s: string): Buffer {
  const bytes = Buffer.from(s, 'latin1');
  assert.ok(bytes.length < 127);
  return Buffer.concat([Buffer.from([bytes.length]), bytes]);
}

/** A GET for `path` with one extra field line, literal without indexing, new name (RFC 7541 §6.2.2). */
function requestBlock(path: string, name: string, value: string): Buffer {
  return Buffer.concat([
    Buffer.from([0x82, 0x87]), // :method GET, :scheme https (static table 2, 7)
    Buffer.from([0x04]), // :path, literal value
    hpackString(path),
    Buffer.from([0x01]), // :authority, literal value
    hpackString('localhost'),
    Buffer.from([0x00]),
    hpackString(name),
    hpackString(value),
  ]);
}

/** Sends one request on a fresh connection; resolves with the server's answer on stream 1. */
async function send(port: number, ca: string, block: Buffer): Promise<'answered' | `reset ${number}`> {
  const t = tlsConnect({ port, host: '127.0.0.1', servername: 'localhost', ca, ALPNProtocols: ['h2'] });
  try {
    await new Promise<void>((resolve, reject) => {
      t.once('secureConnect', () => resolve());
      t.once('error', reject);
    });
    assert.equal(t.alpnProtocol, 'h2');
    // SETTINGS (empty), then HEADERS with END_STREAM | END_HEADERS on stream 1.
    t.write(Buffer.concat([PREFACE, frame(0x4, 0, 0, Buffer.alloc(0)), frame(0x1, 0x5, 1, block)]));
    return await new Promise((resolve, reject) => {
      let buf = Buffer.alloc(0);
      t.on('data', (chunk: Buffer) => {
        buf = Buffer.concat([buf, chunk]);
        while (buf.length >= 9) {
          const len = buf.readUIntBE(0, 3);
          if (buf.length < 9 + len) break;
          const type = buf[3];
          const id = buf.readUInt32BE(5) & 0x7fffffff;
          const payload = buf.subarray(9, 9 + len);
          buf = buf.subarray(9 + len);
          if (id === 1 && type === 0x1) resolve('answered');
          if (id === 1 && type === 0x3) resolve(`reset ${payload.readUInt32BE(0)}`);
        }
      });
      t.once('error', reject);
      t.once('close', () => reject(new Error('connection closed without an answer on stream 1')));
    });
  } finally {
    t.destroy();
  }
}

const PROTOCOL_ERROR = 0x1;

describe('attacks with malformed HTTP/2 field lines (RFC 9113 §8.2)', () => {
  let site: string;
  let s: TestServer;
  let upstream: Server;
  let ca: string;
  /** Each request the upstream got: its raw field lines. */
  const forwarded: string[][] = [];
  before(async () => {
    upstream = createServer((req, res) => {
      forwarded.push(req.rawHeaders);
      res.end('up');
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const up = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    site = makeSite({ 'a.txt': 'a' });
    const files = await testTls();
    ca = files.caPem;
    s = await startServer(site, {
      tls: { cert: files.cert, key: files.key },
      proxy: [{ prefix: '/api', upstream: up }],
    });
  });
  after(async () => {
    await s.close();
    upstream.close();
    removeSite(site);
  });

  /** The field lines the upstream got for the last request, as `name: value` lines. */
  const lastForwarded = () => {
    const raw = forwarded.at(-1) ?? [];
    const lines: string[] = [];
    for (let i = 0; i + 1 < raw.length; i += 2) lines.push(`${raw[i]!.toLowerCase()}: ${raw[i + 1]}`);
    return lines;
  };

  it('reference: the same request with a well-formed x-probe field reaches the upstream with it', async () => {
    const before = forwarded.length;
    assert.equal(await send(s.port, ca, requestBlock('/api/ok', 'x-probe', 'fine\tvalue')), 'answered');
    assert.equal(forwarded.length, before + 1);
    assert.ok(lastForwarded().includes('x-probe: fine\tvalue'), lastForwarded().join('\n'));
  });

  // RFC 9113 §8.2.1: these make the request malformed; nghttp2 resets the stream before Node hands
  // it over, so nothing is forwarded.
  const reset: [string, string, string][] = [
    ['an upper-case field name', 'X-Probe', 'v'],
    ['a connection-specific field (§8.2.2)', 'connection', 'close'],
    ['Transfer-Encoding (§8.2.2), to smuggle a chunked body upstream', 'transfer-encoding', 'chunked'],
    ['TE other than trailers (§8.2.2)', 'te', 'gzip'],
    ['an unknown pseudo-header (§8.3)', ':probe', 'v'],
  ];
  for (const [what, name, value] of reset) {
    it(`attack: ${what} -> RST_STREAM PROTOCOL_ERROR, nothing forwarded`, async () => {
      const before = forwarded.length;
      assert.equal(await send(s.port, ca, requestBlock('/api/x', name, value)), `reset ${PROTOCOL_ERROR}`);
      // A request after it, on a new connection, is forwarded: the server kept serving.
      assert.equal(await send(s.port, ca, requestBlock('/api/after', 'x-probe', 'v')), 'answered');
      assert.equal(forwarded.length, before + 1);
      assert.ok(lastForwarded().includes('x-probe: v'));
    });
  }

  // RFC 9113 §8.2.1 makes these malformed too; Node's nghttp2 binding drops the field line and hands
  // over the rest, so the steps (and the upstream) see a request without it.
  const dropped: [string, string, string][] = [
    [
      'CR LF in a value, to inject a field into the HTTP/1.1 upstream request',
      'x-probe',
      'a\r\nx-injected: 1',
    ],
    ['a lone LF in a value', 'x-probe', 'a\nx-injected: 1'],
    ['NUL in a value', 'x-probe', 'a\0x-injected'],
    ['another control character in a value', 'x-probe', 'a\x01b'],
    ['leading whitespace in a value', 'x-probe', ' x-injected'],
    ['a space in a name', 'x-probe x-injected', 'v'],
    ['a colon in a name, to split it upstream', 'x-probe:x-injected', 'v'],
    ['CR LF in a name', 'x-probe\r\nx-injected', 'v'],
  ];
  for (const [what, name, value] of dropped) {
    it(`attack: ${what} -> the bytes never reach the upstream`, async () => {
      const before = forwarded.length;
      const answer = await send(s.port, ca, requestBlock('/api/x', name, value));
      // Node drops the field (answered) or resets the stream; never the field upstream.
      assert.ok(answer === 'answered' || answer === `reset ${PROTOCOL_ERROR}`, answer);
      assert.ok(forwarded.length <= before + 1);
      const lines = lastForwarded().join('\n');
      if (forwarded.length > before) {
        assert.doesNotMatch(lines, /x-probe|x-injected/, lines);
        assert.doesNotMatch(lines, /[\r\0\x01]/);
      }
    });
  }
});
