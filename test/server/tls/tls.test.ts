// The TLS listener on real sockets: HTTP/2 and HTTP/1.1 by ALPN on one port, the TLS floor, SNI,
// certificate reloads (whole sets; a bad pair refused naming its file; connections in flight keep
// theirs), the file watch, the plain-HTTP redirect listener and the WebSocket answer over HTTP/2.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { connect as http2Connect } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type PeerCertificate, connect as tlsConnect } from 'node:tls';
import { WebSocket } from 'ws';
import { parseConfig, toServerOptions } from '../../../src/config/load.js';
import type { GatehouseConfigInput } from '../../../src/config/schema.js';
import { createGatehouse, type Gatehouse } from '../../../src/server/app/gatehouse.js';
import type { Logger } from '../../../src/server/ops/log.js';
import { leafFor, testPki } from '../../helpers/certs.js';
import { get, makeSite, removeSite } from '../../helpers/http.js';
import { negotiate, testTls } from '../../helpers/tls.js';
import { waitUntil } from '../../helpers/wait.js';

interface Files {
  dir: string;
  cert: string;
  key: string;
}

/** A chain and key written to a folder of their own (the files the server reads and watches). */
async function writePair(pair: { certPem: string; keyPem: string }, chainTail = ''): Promise<Files> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-tls-files-'));
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  writeFileSync(cert, pair.certPem + chainTail);
  writeFileSync(key, pair.keyPem);
  return { dir, cert, key };
}

/** Replaces a file the way renewals do: a new file renamed over the old one. */
function replaceFile(path: string, text: string): void {
  writeFileSync(`${path}.new`, text);
  renameSync(`${path}.new`, path);
}

interface Logged {
  msg: string;
  obj: Record<string, unknown>;
}

function recordingLogger(lines: Logged[]): Logger {
  const push = (obj: object | string, msg?: string) =>
    lines.push(
      typeof obj === 'string'
        ? { msg: obj, obj: {} }
        : { msg: msg ?? '', obj: obj as Record<string, unknown> },
    );
  return { info: push, warn: push, error: push, isLevelEnabled: () => true };
}

async function start(
  root: string,
  config: GatehouseConfigInput,
  logger?: Logger,
): Promise<{ app: Gatehouse; port: number; url: string; httpUrl?: string | undefined }> {
  const c = parseConfig({
    log: { format: 'off' },
    ...config,
    root,
    listen: { host: '127.0.0.1', port: 0, ...config.listen },
  });
  const app = createGatehouse(toServerOptions(c), logger ? { logger } : {});
  const { port, url, httpUrl } = await app.listen();
  return { app, port, url, httpUrl };
}

type TlsSiteConfig = Omit<GatehouseConfigInput, 'tls'> & {
  tls?: Omit<NonNullable<GatehouseConfigInput['tls']>, 'cert' | 'key'>;
};

/** A site served over TLS with the test PKI's leaf, from files of its own; stop() removes it all. */
async function tlsSite(siteFiles: Record<string, string>, config: TlsSiteConfig = {}, logger?: Logger) {
  const pki = await testPki();
  const site = makeSite(siteFiles);
  const files = await writePair(pki.leaf, pki.intermediate.certPem);
  const s = await start(
    site,
    { ...config, tls: { cert: files.cert, key: files.key, ...config.tls } },
    logger,
  );
  const stop = async () => {
    await s.app.close();
    removeSite(site);
    rmSync(files.dir, { recursive: true, force: true });
  };
  return { ...s, pki, files, ca: pki.root.certPem, stop };
}

/** The certificate a new TLS connection is served, for a server name (SNI) or none. */
function peerCertificate(port: number, servername?: string, ca?: string): Promise<PeerCertificate> {
  return new Promise((resolve, reject) => {
    const s = tlsConnect({ port, host: '127.0.0.1', servername, ca, rejectUnauthorized: false }, () => {
      const c = s.getPeerCertificate();
      s.end();
      resolve(c);
    });
    s.on('error', reject);
  });
}

const serialOf = (pem: string) => new X509Certificate(pem).serialNumber;

describe('TLS listener: protocols', () => {
  let site: string;
  let files: Files;
  let s: Awaited<ReturnType<typeof start>>;
  let ca: string;
  before(async () => {
    const pki = await testPki();
    ca = pki.root.certPem;
    site = makeSite({ 'a.txt': 'hello' });
    files = await writePair(pki.leaf, pki.intermediate.certPem);
    s = await start(site, { tls: { cert: files.cert, key: files.key } });
  });
  after(async () => {
    await s.app.close();
    removeSite(site);
    rmSync(files.dir, { recursive: true, force: true });
  });

  it('listens on https:// and offers h2 then http/1.1 by ALPN (RFC 7301)', async () => {
    assert.match(s.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    for (const [offer, chosen] of [
      [['h2', 'http/1.1'], 'h2'],
      [['http/1.1'], 'http/1.1'],
    ] as const) {
      const alpn = await new Promise<string | false | null>((resolve, reject) => {
        const t = tlsConnect({ port: s.port, host: '127.0.0.1', ca, ALPNProtocols: [...offer] }, () => {
          resolve(t.alpnProtocol);
          t.end();
        });
        t.on('error', reject);
      });
      assert.equal(alpn, chosen);
    }
  });

  it('answers the same file over HTTP/2 and over HTTP/1.1 on TLS', async () => {
    const h2 = await new Promise<{ status: number; body: string; version: string }>((resolve, reject) => {
      const session = http2Connect(s.url, { ca });
      session.on('error', reject);
      const req = session.request({ ':path': '/a.txt' });
      let status = 0;
      let body = '';
      req.on('response', (h) => (status = Number(h[':status'])));
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        session.close();
        resolve({ status, body, version: '2' });
      });
      req.end();
    });
    assert.deepEqual(h2, { status: 200, body: 'hello', version: '2' });
    const h1 = await new Promise<string>((resolve, reject) => {
      const t = tlsConnect({ port: s.port, host: '127.0.0.1', ca, ALPNProtocols: ['http/1.1'] }, () =>
        // write, not end: a client's FIN aborts a request still in flight (Node's default, as nginx's
        // proxy does), and the file's second request here is still served from the disk (static.md).
        t.write('GET /a.txt HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'),
      );
      let text = '';
      t.setEncoding('utf8');
      t.on('data', (c: string) => (text += c));
      t.on('end', () => resolve(text));
      t.on('error', reject);
    });
    assert.match(h1, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(h1, /\r\n\r\nhello$/);
  });

  it('accepts TLS 1.2 by default (secure floor, forward-secret AEAD suites)', async () => {
    const version = await new Promise<string | null>((resolve, reject) => {
      const t = tlsConnect({ port: s.port, host: '127.0.0.1', ca, maxVersion: 'TLSv1.2' }, () => {
        resolve(t.getProtocol());
        t.end();
      });
      t.on('error', reject);
    });
    assert.equal(version, 'TLSv1.2');
  });
});

describe('TLS listener: cipher suites (RFC 9325 §4.2)', () => {
  for (const keyType of ['P-256', 'RSA-2048'] as const) {
    it(`the default suites serve a ${keyType} certificate: ECDHE + AES-GCM on TLS 1.2, TLS 1.3, h2`, async () => {
      const pki = await testPki();
      const leaf = await leafFor({ hosts: ['localhost'], keyType });
      const files = await writePair(leaf, pki.intermediate.certPem);
      const site = makeSite({ 'a.txt': 'a' });
      const s = await start(site, { tls: { cert: files.cert, key: files.key } });
      try {
        const sig = keyType === 'P-256' ? 'ECDSA' : 'RSA';
        assert.equal(
          await negotiate(s.port, pki.root.certPem, { maxVersion: 'TLSv1.2' }),
          `TLSv1.2 ECDHE-${sig}-AES128-GCM-SHA256 h2`,
        );
        assert.match(
          await negotiate(s.port, pki.root.certPem, { maxVersion: 'TLSv1.3' }),
          /^TLSv1\.3 TLS_(AES_128_GCM_SHA256|AES_256_GCM_SHA384|CHACHA20_POLY1305_SHA256) h2$/,
        );
        assert.equal(
          await negotiate(s.port, pki.root.certPem, {
            maxVersion: 'TLSv1.2',
            ciphers: `ECDHE-${sig}-CHACHA20-POLY1305`,
          }),
          `TLSv1.2 ECDHE-${sig}-CHACHA20-POLY1305 h2`,
        );
      } finally {
        await s.app.close();
        removeSite(site);
        rmSync(files.dir, { recursive: true, force: true });
      }
    });
  }

  it('tls.ciphers with a CBC suite and http2: false serves it over HTTP/1.1 only, and nothing outside the list', async () => {
    const s = await tlsSite(
      { 'a.txt': 'a' },
      { tls: { http2: false, ciphers: ['ECDHE-ECDSA-AES128-SHA', 'TLS_AES_256_GCM_SHA384'] } },
    );
    try {
      assert.equal(
        await negotiate(s.port, s.ca, { maxVersion: 'TLSv1.2' }),
        'TLSv1.2 ECDHE-ECDSA-AES128-SHA http/1.1',
      );
      assert.match(
        await negotiate(s.port, s.ca, { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-ECDSA-AES128-GCM-SHA256' }),
        /^refused /,
      );
      assert.equal(
        await negotiate(s.port, s.ca, { maxVersion: 'TLSv1.3' }),
        'TLSv1.3 TLS_AES_256_GCM_SHA384 http/1.1',
      );
    } finally {
      await s.stop();
    }
  });
});

describe('TLS listener: minVersion', () => {
  it('tls.minVersion TLSv1.3 refuses a TLS 1.2 client and serves a TLS 1.3 one', async () => {
    const s = await tlsSite({ 'a.txt': 'a' }, { tls: { minVersion: 'TLSv1.3' } });
    const { pki } = s;
    try {
      const attempt = (maxVersion: 'TLSv1.2' | 'TLSv1.3') =>
        new Promise<string>((resolve) => {
          const t = tlsConnect({ port: s.port, host: '127.0.0.1', ca: pki.root.certPem, maxVersion }, () => {
            resolve(String(t.getProtocol()));
            t.end();
          });
          t.on('error', (err: NodeJS.ErrnoException) => resolve(`refused ${err.code}`));
        });
      assert.match(await attempt('TLSv1.2'), /^refused /);
      assert.equal(await attempt('TLSv1.3'), 'TLSv1.3');
    } finally {
      await s.stop();
    }
  });
});

describe('TLS listener: SNI (RFC 6066 §3)', () => {
  it('serves each name its certificate, *.name one label deep, the default otherwise', async () => {
    const pki = await testPki();
    const site = makeSite({ 'a.txt': 'a' });
    const main = await writePair(pki.leaf, pki.intermediate.certPem);
    const one = await writePair(await leafFor({ hosts: ['one.test'] }));
    const wild = await writePair(await leafFor({ hosts: ['*.wild.test'] }));
    const s = await start(site, {
      tls: {
        cert: main.cert,
        key: main.key,
        sni: {
          'one.test': { cert: one.cert, key: one.key },
          '*.wild.test': { cert: wild.cert, key: wild.key },
        },
      },
    });
    try {
      const cn = async (name?: string) => (await peerCertificate(s.port, name)).subject.CN;
      assert.equal(await cn('one.test'), 'one.test');
      assert.equal(await cn('ONE.test'), 'one.test');
      assert.equal(await cn('x.wild.test'), '*.wild.test');
      assert.equal(await cn('y.x.wild.test'), 'localhost');
      assert.equal(await cn('wild.test'), 'localhost');
      assert.equal(await cn('other.test'), 'localhost');
      assert.equal(await cn(undefined), 'localhost');
    } finally {
      await s.app.close();
      removeSite(site);
      for (const f of [main, one, wild]) rmSync(f.dir, { recursive: true, force: true });
    }
  });
});

describe('TLS listener: certificate reload', () => {
  let site: string;
  let files: Files;
  let s: Awaited<ReturnType<typeof start>>;
  const lines: Logged[] = [];
  let ca: string;
  before(async () => {
    const pki = await testPki();
    ca = pki.root.certPem;
    site = makeSite({ 'a.txt': 'hello' });
    files = await writePair(pki.leaf, pki.intermediate.certPem);
    s = await start(
      site,
      { tls: { cert: files.cert, key: files.key, watch: false } },
      recordingLogger(lines),
    );
    await testTls(); // get() trusts the test root
  });
  after(async () => {
    await s.app.close();
    removeSite(site);
    rmSync(files.dir, { recursive: true, force: true });
  });

  it('new connections get the new pair; an HTTP/2 session opened before keeps its own and is served', async () => {
    const before = (await peerCertificate(s.port)).serialNumber;
    const session = http2Connect(s.url, { ca });
    const ask = () =>
      new Promise<number>((resolve, reject) => {
        const req = session.request({ ':path': '/a.txt' });
        req.on('response', (h) => resolve(Number(h[':status'])));
        req.on('error', reject);
        req.resume();
        req.end();
      });
    assert.equal(await ask(), 200);
    const next = await leafFor({ hosts: ['localhost', '127.0.0.1'] });
    writeFileSync(files.cert, next.certPem + (await testPki()).intermediate.certPem);
    writeFileSync(files.key, next.keyPem);
    assert.equal(await s.app.tls!.reload(), undefined);
    const after = (await peerCertificate(s.port)).serialNumber;
    assert.equal(after.toUpperCase(), serialOf(next.certPem).toUpperCase());
    assert.notEqual(after, before);
    // The session from before the reload: same TLS connection, still answered.
    assert.equal(await ask(), 200);
    const socketCert = (
      session.socket as unknown as { getPeerCertificate(): PeerCertificate }
    ).getPeerCertificate();
    assert.equal(socketCert.serialNumber, before);
    session.close();
  });

  it('attack: a bad certificate dropped in place (a key that does not belong to it) -> refused, naming the file; the old pair stays', async () => {
    const served = (await peerCertificate(s.port)).serialNumber;
    const other = await leafFor({ hosts: ['localhost'] });
    writeFileSync(files.key, other.keyPem); // the cert file still holds the previous leaf
    lines.length = 0;
    const reason = await s.app.tls!.reload();
    assert.ok(reason?.includes(files.cert), String(reason));
    assert.ok(
      lines.some((l) => l.obj.file === files.cert && /refused/.test(l.msg)),
      JSON.stringify(lines),
    );
    assert.equal((await peerCertificate(s.port)).serialNumber, served);
    assert.equal((await get(s.url, '/a.txt')).status, 200);
  });

  it('attack: a truncated certificate file dropped in place (its key matches the whole one) -> refused, naming the file; the old pair stays', async () => {
    const served = (await peerCertificate(s.port)).serialNumber;
    const good = await leafFor({ hosts: ['localhost'] });
    writeFileSync(files.cert, good.certPem.slice(0, Math.floor(good.certPem.length / 2)));
    writeFileSync(files.key, good.keyPem);
    const reason = await s.app.tls!.reload();
    assert.ok(reason?.includes(files.cert), String(reason));
    assert.equal((await peerCertificate(s.port)).serialNumber, served);
    assert.equal((await get(s.url, '/a.txt')).status, 200);
  });

  it('a missing file is refused the same way', async () => {
    const served = (await peerCertificate(s.port)).serialNumber;
    rmSync(files.key);
    const reason = await s.app.tls!.reload();
    assert.ok(reason?.includes(files.key), String(reason));
    assert.equal((await peerCertificate(s.port)).serialNumber, served);
  });
});

describe('TLS listener: file watch', () => {
  it('a renewal renamed into place is picked up without a signal', async () => {
    const s = await tlsSite({ 'a.txt': 'a' });
    const { pki, files } = s;
    try {
      const next = await leafFor({ hosts: ['localhost', '127.0.0.1'] });
      replaceFile(files.key, next.keyPem);
      replaceFile(files.cert, next.certPem + pki.intermediate.certPem);
      const want = serialOf(next.certPem).toUpperCase();
      await waitUntil('new connections get the renewed certificate', async () => {
        return (await peerCertificate(s.port)).serialNumber.toUpperCase() === want;
      });
    } finally {
      await s.stop();
    }
  });
});

describe('TLS listener: start', () => {
  it('a certificate file that cannot be read stops the start, naming the file', async () => {
    const site = makeSite({});
    const c = parseConfig({
      log: { format: 'off' },
      root: site,
      listen: { host: '127.0.0.1', port: 0 },
      tls: { cert: '/nonexistent/cert.pem', key: '/nonexistent/key.pem' },
    });
    const app = createGatehouse(toServerOptions(c));
    try {
      await assert.rejects(app.listen(), (err: NodeJS.ErrnoException) => {
        assert.equal(err.code, 'GATEHOUSE_TLS');
        assert.match(err.message, /\/nonexistent\/(cert|key)\.pem/);
        return true;
      });
      assert.equal(app.server.listening, false);
    } finally {
      await app.close();
      removeSite(site);
    }
  });

  it('config: cert without key, and two certificate sources, are errors naming tls', () => {
    assert.throws(() => parseConfig({ tls: { cert: 'a.pem' } }), /tls.*cert and key go together/);
    assert.throws(() => parseConfig({ tls: { cert: 'a', key: 'b', dev: true } }), /tls.*exclude each other/);
    assert.throws(() => parseConfig({ tls: {} }), /tls.*needs cert and key, acme, or dev/);
    const acme = { email: 'a@b.example', domains: ['b.example'], storage: 'acme' };
    assert.throws(() => parseConfig({ tls: { acme } }), /tls\.acme: needs listen\.httpPort/);
    assert.equal(parseConfig({ tls: { acme }, listen: { httpPort: 80 } }).tls?.acme?.domains[0], 'b.example');
  });
});

describe('TLS listener: listen.httpPort', () => {
  it('plain HTTP beside HTTPS: 308 to the https URL with the HTTPS port; a bad Host gets 400', async () => {
    const pki = await testPki();
    const site = makeSite({ 'a.txt': 'a' });
    const files = await writePair(pki.leaf, pki.intermediate.certPem);
    const s = await start(site, { tls: { cert: files.cert, key: files.key }, listen: { httpPort: 0 } });
    await testTls();
    try {
      assert.match(String(s.httpUrl), /^http:\/\/127\.0\.0\.1:\d+$/);
      const r = await get(s.httpUrl!, '/a.txt?x=1', { headers: { host: 'example.com:80' } });
      assert.equal(r.status, 308);
      assert.equal(r.headers.location, `https://example.com:${s.port}/a.txt?x=1`);
      const bad = await get(s.httpUrl!, '/a.txt', { headers: { host: 'exa mple' } });
      assert.equal(bad.status, 400);
      const port = (s.app.server.address() as AddressInfo).port;
      assert.equal(port, s.port);
    } finally {
      await s.app.close();
      removeSite(site);
      rmSync(files.dir, { recursive: true, force: true });
    }
  });
});

describe('TLS listener: WebSocket', () => {
  let site: string;
  let files: Files;
  let s: Awaited<ReturnType<typeof start>>;
  let ca: string;
  before(async () => {
    const pki = await testPki();
    ca = pki.root.certPem;
    site = makeSite({});
    files = await writePair(pki.leaf, pki.intermediate.certPem);
    s = await start(site, {
      tls: { cert: files.cert, key: files.key },
      websocket: [{ path: '/ws', mode: 'echo' }],
    });
  });
  after(async () => {
    await s.app.close();
    removeSite(site);
    rmSync(files.dir, { recursive: true, force: true });
  });

  it('wss:// over HTTP/1.1 on the TLS port echoes', async () => {
    const ws = new WebSocket(`wss://127.0.0.1:${s.port}/ws`, { ca });
    const echoed = await new Promise<string>((resolve, reject) => {
      ws.on('open', () => ws.send('ping over tls'));
      ws.on('message', (d) => resolve(String(d)));
      ws.on('error', reject);
    });
    ws.close();
    assert.equal(echoed, 'ping over tls');
  });

  it('an HTTP/2 request for the endpoint gets 426 saying it needs an HTTP/1.1 Upgrade', async () => {
    const session = http2Connect(s.url, { ca });
    const r = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = session.request({ ':path': '/ws', accept: 'application/json' });
      let status = 0;
      let body = '';
      req.on('response', (h) => (status = Number(h[':status'])));
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => resolve({ status, body }));
      req.on('error', reject);
      req.end();
    });
    session.close();
    assert.equal(r.status, 426);
    assert.match(JSON.parse(r.body).detail, /HTTP\/1\.1 Upgrade.*RFC 8441/);
  });
});

describe('TLS listener: graceful close', () => {
  it('an HTTP/2 stream in flight finishes; idle sessions get GOAWAY and close() resolves', async () => {
    const pki = await testPki();
    const ca = pki.root.certPem;
    let release: () => void = () => {};
    let arrived: () => void = () => {};
    const seen = new Promise<void>((r) => (arrived = r));
    const { createServer } = await import('node:http');
    const up = createServer((_req, res) => {
      arrived();
      release = () => res.end('slow answer');
    });
    await new Promise<void>((r) => up.listen(0, '127.0.0.1', r));
    const site = makeSite({});
    const files = await writePair(pki.leaf, pki.intermediate.certPem);
    const s = await start(site, {
      tls: { cert: files.cert, key: files.key },
      proxy: [{ prefix: '/slow', upstream: `http://127.0.0.1:${(up.address() as AddressInfo).port}` }],
      // Far beyond the test's timeout: only GOAWAY can end the sessions in time.
      limits: { shutdownTimeoutMs: 120_000 },
    });
    try {
      const busy = http2Connect(s.url, { ca });
      const idle = http2Connect(s.url, { ca });
      const idleClosed = new Promise<void>((r) => idle.once('close', () => r()));
      idle.on('error', () => {});
      await new Promise<void>((r) => idle.once('connect', () => r()));
      const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = busy.request({ ':path': '/slow/x' });
        let status = 0;
        let body = '';
        req.on('response', (h) => (status = Number(h[':status'])));
        req.setEncoding('utf8');
        req.on('data', (c: string) => (body += c));
        req.on('end', () => resolve({ status, body }));
        req.on('error', reject);
        req.end();
      });
      await seen;
      const closed = s.app.close();
      await idleClosed; // GOAWAY: the idle session ends without waiting for the deadline
      release();
      assert.deepEqual(await answer, { status: 200, body: 'slow answer' });
      await closed;
      busy.destroy();
    } finally {
      up.close();
      removeSite(site);
      rmSync(files.dir, { recursive: true, force: true });
    }
  });
});

describe('TLS: what loads when', () => {
  it('the server library does not load the certificate tools (@peculiar/x509, acme-client) until used', async () => {
    const { execFileSync } = await import('node:child_process');
    const dist = join(import.meta.dirname, '../../../dist');
    // A fresh process: which CommonJS modules are loaded after importing the library (and after a
    // certificate tool is called, the control that shows the probe sees x509 at all).
    const probe = (after: string) =>
      execFileSync(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `const { createRequire } = await import('node:module');
           const m = await import(${JSON.stringify(join(dist, 'index.js'))});
           ${after}
           const cache = createRequire(import.meta.url).cache;
           console.log(Object.keys(cache).some((k) => k.includes('@peculiar/x509')));`,
        ],
        { encoding: 'utf8' },
      ).trim();
    assert.equal(probe("m.createServer({ root: '.', log: { format: 'off' } });"), 'false');
    const issued = `await m.issueCertificate({ commonName: 'x', notBefore: new Date(), notAfter: new Date(Date.now() + 864e5) });`;
    assert.equal(probe(issued), 'true');
  });
});
