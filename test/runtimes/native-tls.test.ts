// `gatehouse serve` over HTTPS on the runtimes' own servers: certificate files, per-name certificates by
// SNI on Bun.serve (two names, each gets its own), one pair on Deno.serve, HTTP/2 by ALPN, the
// `listening on https://` line and the plain-HTTP redirect listener (listen.httpPort). A TLS setting the
// server cannot honour is refused by key: served through Deno's node:http emulation with a note, a
// config error on Bun (its emulation has no TLS server). Real processes on 127.0.0.1, the build (dist/).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect as http2Connect } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { leafFor, testPki } from '../helpers/certs.js';
import { get, makeSite, removeSite } from '../helpers/http.js';
import { GATEHOUSE_BIN, type Listening, runListening } from '../helpers/runtimes.js';
import { testTls } from '../helpers/tls.js';
import { waitUntil } from '../helpers/wait.js';

const SERVERS = {
  bun: /^on Bun 1\.4\.\d+ \(Bun\.serve\)$/m,
  deno: /^on Deno 2\.9\.\d+ \(Deno\.serve\)$/m,
} as const;

/** The subject CN of the certificate 127.0.0.1:`port` presents for `servername` (trusting the test root). */
function peerName(port: number, servername: string, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const t = tlsConnect({ port, host: '127.0.0.1', servername, ca }, () => {
      resolve(t.getPeerCertificate().subject.CN as string);
      t.end();
    });
    t.on('error', reject);
  });
}

/** One GET over HTTP/2 (ALPN h2): status, fields and body. */
function getH2(
  url: string,
  path: string,
  ca: string,
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const session = http2Connect(url, { ca, servername: 'localhost' });
    session.on('error', reject);
    const req = session.request({ ':path': path });
    let body = '';
    req.setEncoding('utf8');
    req.on('response', (headers) => {
      req.on('data', (c: string) => {
        body += c;
      });
      req.on('end', () => {
        session.close();
        resolve({ status: Number(headers[':status']), headers, body });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

let dir: string;
let site: string;
let ca: string;
/** Config files: `sni` (default pair + a.test + b.test), `single` (default pair), `watched` (watch on). */
const configs: Record<'sni' | 'single' | 'watched', string> = { sni: '', single: '', watched: '' };

before(async () => {
  site = makeSite({ 'notes.txt': 'hello over tls' });
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-native-tls-'));
  const files = await testTls();
  ca = files.caPem;
  const pki = await testPki();
  const sni: Record<string, { cert: string; key: string }> = {};
  for (const name of ['a.test', 'b.test']) {
    const leaf = await leafFor({ hosts: [name] });
    const cert = join(dir, `${name}.pem`);
    const key = join(dir, `${name}.key`);
    writeFileSync(cert, leaf.certPem + pki.intermediate.certPem);
    writeFileSync(key, leaf.keyPem, { mode: 0o600 });
    sni[name] = { cert, key };
  }
  const base = {
    root: site,
    log: { format: 'off' },
    listen: { host: '127.0.0.1', port: 0, httpPort: 0 },
  };
  const write = (name: keyof typeof configs, tls: object) => {
    configs[name] = join(dir, `${name}.json`);
    writeFileSync(
      configs[name],
      JSON.stringify({ ...base, tls: { cert: files.cert, key: files.key, ...tls } }),
    );
  };
  write('sni', { watch: false, sni });
  write('single', { watch: false });
  write('watched', { watch: true });
});
after(() => {
  removeSite(site);
  rmSync(dir, { recursive: true, force: true });
});

for (const [runtime, line] of Object.entries(SERVERS) as [keyof typeof SERVERS, RegExp][]) {
  describe(`gatehouse serve over HTTPS on ${runtime}`, () => {
    let s: Listening;
    before(async () => {
      s = await runListening(runtime, GATEHOUSE_BIN, [
        'serve',
        '--config',
        runtime === 'bun' ? configs.sni : configs.single,
      ]);
    });
    after(async () => {
      await s.close();
    });

    it(`listens on https:// with the runtime's own server`, () => {
      assert.match(s.stdout, line);
      assert.match(s.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    });

    it('HTTP/1.1 and HTTP/2 (ALPN) answer the same file', async () => {
      const r = await get(s.url, '/notes.txt');
      assert.equal(r.status, 200);
      assert.equal(r.body.toString(), 'hello over tls');
      const h2 = await getH2(s.url, '/notes.txt', ca);
      assert.equal(h2.status, 200);
      assert.equal(h2.body, 'hello over tls');
      assert.equal(h2.headers.etag, r.headers.etag);
    });

    it('the plain-HTTP listener redirects to the HTTPS port (308)', async () => {
      const m = await waitUntil('the redirecting line', () =>
        /^redirecting (http:\/\/\S+) to HTTPS$/m.exec(s.stdout),
      );
      const r = await get(m[1]!, '/notes.txt?x=1', { headers: { host: 'localhost' } });
      assert.equal(r.status, 308);
      assert.equal(r.headers.location, `https://localhost:${new URL(s.url).port}/notes.txt?x=1`);
    });

    if (runtime === 'bun') {
      it('SNI: a.test and b.test each get their own certificate; other names the default', async () => {
        const port = Number(new URL(s.url).port);
        assert.equal(await peerName(port, 'a.test', ca), 'a.test');
        assert.equal(await peerName(port, 'b.test', ca), 'b.test');
        assert.equal(await peerName(port, 'localhost', ca), 'localhost');
      });
    } else {
      it('serves its one certificate', async () => {
        assert.equal(await peerName(Number(new URL(s.url).port), 'localhost', ca), 'localhost');
      });

      it('tls.sni: Deno.serve has one certificate, so node:http emulation serves it; the note names the key', async () => {
        const other = await runListening('deno', GATEHOUSE_BIN, ['serve', '--config', configs.sni]);
        try {
          assert.doesNotMatch(other.stdout, line);
          assert.match(other.stderr(), /node:http emulation.*tls\.sni: Deno\.serve/);
        } finally {
          await other.close();
        }
      });
    }

    it('tls.watch set in the config: Bun.serve swaps servers (native-tls-reload.test.ts); Deno.serve cannot', async () => {
      const other = await runListening(runtime, GATEHOUSE_BIN, ['serve', '--config', configs.watched]);
      try {
        if (runtime === 'bun') assert.match(other.stdout, line);
        else {
          // Deno's node:http emulation runs the Node TLS listener, which watches: served there, with a note.
          assert.doesNotMatch(other.stdout, line);
          assert.match(other.stderr(), /node:http emulation.*tls\.watch: Deno\.serve cannot swap/);
        }
        assert.equal((await get(other.url, '/notes.txt')).status, 200);
      } finally {
        await other.close();
      }
    });
  });
}
