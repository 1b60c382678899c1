// HTTP/3 on Bun (tls.http3, serve --http3): QUIC listens on the TLS port over UDP, a real HTTP/3 client
// (Bun's fetch with protocol 'http3', which never falls back to TCP) gets the answers node:http2 gets
// over HTTP/2, and the TCP responses advertise the alternative once (Alt-Svc, RFC 7838 §3). On Node and
// on Deno `--http3` is a config error (exit 2) saying why. Real processes on 127.0.0.1, the build (dist/).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect as http2Connect, type IncomingHttpHeaders } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { get, makeSite, removeSite } from '../helpers/http.js';
import {
  FIXTURES,
  GATEHOUSE_BIN,
  type Listening,
  RUNTIMES,
  runListening,
  runToExit,
} from '../helpers/runtimes.js';
import { testTls } from '../helpers/tls.js';

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}
interface Ask {
  path: string;
  method?: string;
  headers?: Record<string, string>;
}

/** The exchanges compared between HTTP/2 and HTTP/3 (identity coding on both, so bodies compare). */
function asks(etag: string): Ask[] {
  const list: Ask[] = [
    { path: '/notes.txt' },
    { path: '/index.html', headers: { accept: 'text/html' } },
    { path: '/nope.txt' },
    { path: '/notes.txt', headers: { range: 'bytes=0-4' } },
    { path: '/notes.txt', headers: { 'if-none-match': etag } },
    { path: '/notes.txt', method: 'HEAD' },
  ];
  return list.map((a) => ({ ...a, headers: { 'accept-encoding': 'identity', ...a.headers } }));
}

/** The fields that must agree (Date and Alt-Svc differ by time and by transport). */
const COMPARED = [
  'content-type',
  'content-length',
  'content-range',
  'etag',
  'last-modified',
  'cache-control',
  'accept-ranges',
  'vary',
  'x-content-type-options',
];

function pick(h: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of COMPARED) if (h[name] !== undefined) out[name] = String(h[name]);
  return out;
}

/** The asks over HTTP/2 (node:http2, ALPN h2). */
async function overH2(url: string, ca: string, asks: Ask[]): Promise<Answer[]> {
  const session = http2Connect(url, { ca, servername: 'localhost' });
  try {
    const one = (a: Ask) =>
      new Promise<Answer>((resolve, reject) => {
        const req = session.request({ ':path': a.path, ':method': a.method ?? 'GET', ...a.headers });
        let body = '';
        let head: IncomingHttpHeaders = {};
        req.setEncoding('utf8');
        req.on('response', (h) => {
          head = h;
        });
        req.on('data', (c: string) => {
          body += c;
        });
        req.on('end', () =>
          resolve({ status: Number(head[':status']), headers: head as Record<string, string>, body }),
        );
        req.on('error', reject);
        req.end();
      });
    const out: Answer[] = [];
    for (const a of asks) out.push(await one(a));
    return out;
  } finally {
    session.close();
  }
}

/** The asks over HTTP/3: test/fixtures/runtimes/h3-fetch.mjs on Bun. */
function overH3(url: string, asks: Ask[]): Promise<(Answer | { error: string })[]> {
  return new Promise((resolve, reject) => {
    execFile(
      RUNTIMES.bun.cmd,
      [join(FIXTURES, 'h3-fetch.mjs'), url, JSON.stringify(asks)],
      { timeout: 30_000 },
      (err, stdout, stderr) =>
        err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(JSON.parse(stdout)),
    );
  });
}

/** A UDP socket bound to 127.0.0.1:`port` (Linux /proc/net/udp: local address as hex ADDR:PORT). */
function udpBound(port: number): boolean {
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  return readFileSync('/proc/net/udp', 'utf8')
    .split('\n')
    .some((l) => l.trim().split(/\s+/)[1] === local);
}

let dir: string;
let site: string;
let ca: string;
let config: string;

before(async () => {
  site = makeSite({ 'index.html': '<h1>home</h1>', 'notes.txt': 'hello over quic' });
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-h3-'));
  const files = await testTls();
  ca = files.caPem;
  config = join(dir, 'gatehouse.config.json');
  writeFileSync(
    config,
    JSON.stringify({
      root: site,
      log: { format: 'off' },
      listen: { host: '127.0.0.1', port: 0 },
      tls: { cert: files.cert, key: files.key, watch: false },
    }),
  );
});
after(() => {
  removeSite(site);
  rmSync(dir, { recursive: true, force: true });
});

describe('gatehouse serve --http3 on Bun', () => {
  let s: Listening;
  let port: number;
  before(async () => {
    s = await runListening('bun', GATEHOUSE_BIN, ['serve', '--config', config, '--http3']);
    port = Number(new URL(s.url).port);
  });
  after(async () => {
    await s.close();
  });

  it('listens on https:// with Bun.serve, and on the same port over UDP (QUIC)', () => {
    assert.match(s.stdout, /^on Bun 1\.4\.\d+ \(Bun\.serve\)$/m);
    assert.match(s.url, /^https:\/\//);
    assert.ok(udpBound(port), `no UDP socket on 127.0.0.1:${port}`);
  });

  it('HTTP/3 answers as HTTP/2 does: status, fields and body for each exchange', async () => {
    const etag = (await get(s.url, '/notes.txt')).headers.etag!;
    const list = asks(etag);
    const h2 = await overH2(s.url, ca, list);
    const h3 = await overH3(s.url, list);
    assert.deepEqual(
      h2.map((a) => a.status),
      [200, 200, 404, 206, 304, 200],
    );
    list.forEach((a, i) => {
      const x = h3[i]!;
      assert.ok(
        !('error' in x),
        `${a.method ?? 'GET'} ${a.path} over HTTP/3: ${'error' in x ? x.error : ''}`,
      );
      const y = h2[i]!;
      const label = `${a.method ?? 'GET'} ${a.path} ${JSON.stringify(a.headers)}`;
      assert.equal(x.status, y.status, label);
      assert.deepEqual(pick(x.headers), pick(y.headers), label);
      assert.equal(x.body, y.body, label);
    });
  });

  it('HTTP/1.1 and HTTP/2 responses carry Alt-Svc: h3 on this port, once', async () => {
    const want = `h3=":${port}"; ma=86400`;
    assert.equal((await get(s.url, '/notes.txt')).headers['alt-svc'], want);
    const [h2] = await overH2(s.url, ca, [{ path: '/nope.txt' }]);
    assert.equal(h2!.headers['alt-svc'], want);
  });

  it('without --http3: no Alt-Svc, no UDP socket, and the HTTP/3 client gets no answer', async () => {
    const plain = await runListening('bun', GATEHOUSE_BIN, ['serve', '--config', config]);
    try {
      const p = Number(new URL(plain.url).port);
      assert.equal((await get(plain.url, '/notes.txt')).headers['alt-svc'], undefined);
      assert.equal(udpBound(p), false);
      const [x] = await overH3(plain.url, [{ path: '/notes.txt' }]);
      assert.ok(x && 'error' in x, 'the HTTP/3 client must not fall back to TCP');
    } finally {
      await plain.close();
    }
  });
});

describe('--http3 where there is no HTTP/3: a config error (exit 2) that says why', () => {
  it('Node: official builds have no QUIC', async () => {
    const r = await runToExit('node', GATEHOUSE_BIN, ['serve', '--config', config, '--http3']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /tls\.http3: HTTP\/3 needs QUIC, which official Node builds do not include/);
  });

  it('Deno: Deno.serve has no HTTP/3', async () => {
    const r = await runToExit('deno', GATEHOUSE_BIN, ['serve', '--config', config, '--http3']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /tls\.http3: Deno\.serve has no HTTP\/3/);
  });

  it('Bun with workers: they serve through node:http', async () => {
    const r = await runToExit('bun', GATEHOUSE_BIN, [
      'serve',
      '--config',
      config,
      '--http3',
      '--workers',
      '2',
    ]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /tls\.http3: not with workers/);
  });
});
