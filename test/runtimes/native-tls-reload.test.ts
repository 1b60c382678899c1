// Certificate reloads on the runtimes' own servers (issue 39). Bun.serve: `gatehouse serve --tls-cert
// --tls-key` with no config watches the files; a change or SIGHUP starts a server with the new pair on
// the same port (SO_REUSEPORT) and drains the old one; a bad file keeps the pair in use; no connection
// is refused meanwhile, and WebSockets and the redirect listener carry on. Deno.serve: no reusePort
// (unstable there), so the default serves without watching and says so once. Real processes on
// 127.0.0.1, real certificates, the build (dist/).
import assert from 'node:assert/strict';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import WebSocket from 'ws';
import { type IssuedPem, leafFor, testPki } from '../helpers/certs.js';
import { get, makeSite, removeSite } from '../helpers/http.js';
import { GATEHOUSE_BIN, type Listening, runListening } from '../helpers/runtimes.js';
import { testTls } from '../helpers/tls.js';
import { waitUntil } from '../helpers/wait.js';

let dir: string;
let site: string;
let chain: string;
/** Three pairs for localhost, told apart by their subject CN. */
const pairs: Record<'one' | 'two' | 'three', IssuedPem> = {} as never;

/** Puts `pem` in place as a renewal does: written beside, then renamed over the file. */
function replace(file: string, pem: string): void {
  writeFileSync(`${file}.new`, pem, { mode: 0o600 });
  renameSync(`${file}.new`, file);
}

/** Files cert.pem and key.pem in a folder of their own, holding `name`'s pair. */
function certFiles(sub: string, name: keyof typeof pairs): { cert: string; key: string } {
  const folder = mkdtempSync(join(dir, `${sub}-`));
  const files = { cert: join(folder, 'cert.pem'), key: join(folder, 'key.pem') };
  install(files, name);
  return files;
}

function install(files: { cert: string; key: string }, name: keyof typeof pairs): void {
  replace(files.key, pairs[name].keyPem);
  replace(files.cert, pairs[name].certPem + chain);
}

/** The subject CN the server presents, or the error code of a failed connection. */
function peerName(port: number): Promise<string> {
  return new Promise((resolve) => {
    const t = tlsConnect(
      { port, host: '127.0.0.1', servername: 'localhost', rejectUnauthorized: false },
      () => {
        resolve(t.getPeerCertificate().subject.CN as string);
        t.end();
      },
    );
    t.on('error', (err: NodeJS.ErrnoException) => resolve(`error ${err.code}`));
  });
}

const portOf = (s: Listening) => Number(new URL(s.url).port);

before(async () => {
  site = makeSite({ 'notes.txt': 'hello over tls' });
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-native-reload-'));
  await testTls();
  chain = (await testPki()).intermediate.certPem;
  for (const name of ['one', 'two', 'three'] as const)
    pairs[name] = await leafFor({ hosts: ['localhost', '127.0.0.1'], commonName: name });
});
after(() => {
  removeSite(site);
  rmSync(dir, { recursive: true, force: true });
});

const flags = (files: { cert: string; key: string }) => [
  'serve',
  site,
  '--tls-cert',
  files.cert,
  '--tls-key',
  files.key,
  '--host',
  '127.0.0.1',
  '--port',
  '0',
];

describe('certificate reloads on Bun.serve', () => {
  describe('gatehouse serve --tls-cert --tls-key, no config (tls.watch by default)', () => {
    let s: Listening;
    let files: { cert: string; key: string };
    before(async () => {
      files = certFiles('watched', 'one');
      s = await runListening('bun', GATEHOUSE_BIN, flags(files));
    });
    after(async () => {
      assert.equal(await s.close(), 0);
    });

    it('serves natively with the files', async () => {
      assert.match(s.stdout, /^on Bun 1\.4\.\d+ \(Bun\.serve\)$/m, s.stderr());
      assert.equal(await peerName(portOf(s)), 'one');
      assert.equal((await get(s.url, '/notes.txt')).body.toString(), 'hello over tls');
    });

    it('replacing the files switches the served certificate', async () => {
      install(files, 'two');
      await waitUntil('the new certificate is served', async () => (await peerName(portOf(s))) === 'two');
      assert.equal((await get(s.url, '/notes.txt')).status, 200);
    });

    it('a certificate file that does not parse keeps the one in use, and says which file', async () => {
      replace(files.cert, 'not a certificate\n');
      await waitUntil('the refusal is logged', () =>
        /tls: certificates refused, the ones in use stay/.test(s.stdout + s.stderr()),
      );
      assert.equal(await peerName(portOf(s)), 'two');
      install(files, 'three');
      await waitUntil(
        'a good pair after the bad one is served',
        async () => (await peerName(portOf(s))) === 'three',
      );
    });
  });

  describe('SIGHUP with tls.watch: false, WebSocket endpoints and the redirect listener', () => {
    let s: Listening;
    let files: { cert: string; key: string };
    before(async () => {
      files = certFiles('hup', 'one');
      const config = join(dir, 'hup.json');
      writeFileSync(
        config,
        JSON.stringify({
          root: site,
          log: { format: 'off' },
          listen: { host: '127.0.0.1', port: 0, httpPort: 0 },
          tls: { ...files, watch: false },
          websocket: [{ path: '/echo', mode: 'echo' }],
        }),
      );
      s = await runListening('bun', GATEHOUSE_BIN, ['serve', '--config', config]);
    });
    after(async () => {
      assert.equal(await s.close(), 0);
    });

    /** SIGHUP, then waits until `name`'s certificate is served. */
    const hup = async (name: keyof typeof pairs) => {
      install(files, name);
      s.signal('SIGHUP');
      await waitUntil(`${name} is served after SIGHUP`, async () => (await peerName(portOf(s))) === name);
    };

    it('SIGHUP reloads the files', async () => {
      assert.equal(await peerName(portOf(s)), 'one');
      await hup('two');
    });

    it('no connection is refused while servers swap, and every handshake gets its answer', async (t) => {
      const port = portOf(s);
      const failures: string[] = [];
      let answered = 0;
      let going = true;
      const once = () =>
        new Promise<void>((resolve) => {
          const t = tlsConnect(
            { port, host: '127.0.0.1', servername: 'localhost', rejectUnauthorized: false },
            () => t.write('GET /notes.txt HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n'),
          );
          let text = '';
          t.setEncoding('utf8').on('data', (c: string) => {
            text += c;
          });
          t.on('end', () => {
            if (text.startsWith('HTTP/1.1 200')) answered++;
            else
              failures.push(
                `answer ${JSON.stringify(text.slice(0, 40))} (handshake ${t.getProtocol() ?? 'none'})`,
              );
            resolve();
          });
          t.on('error', (err: NodeJS.ErrnoException) => {
            failures.push(`${err.code} ${t.getProtocol() === null ? 'before' : 'after'} the handshake`);
            resolve();
          });
        });
      const loops = Array.from({ length: 4 }, async () => {
        while (going) await once();
      });
      const swaps = ['three', 'one', 'two'] as const;
      for (const name of swaps) await hup(name);
      going = false;
      await Promise.all(loops);
      assert.ok(answered > 0);
      assert.ok(!failures.some((f) => f.startsWith('ECONNREFUSED')), failures.join('; '));
      // Linux resets what its backlog holds for a listener that closes (unless net.ipv4.tcp_migrate_req=1):
      // a connection that lands on the old server's queue in that instant is reset before its handshake
      // (docs/https.md). Anything else, an answer missing after a handshake included, is a failure.
      t.diagnostic(`${answered} answered, ${failures.length} reset over ${swaps.length} swaps`);
      const other = failures.filter((f) => f !== 'ECONNRESET before the handshake');
      assert.deepEqual(other, []);
      // How many is timing (measured: about one per swap here, more on a loaded machine), so no count is
      // asserted beyond: most connections are answered through the swaps.
      assert.ok(failures.length < answered, `${failures.length} resets, ${answered} answers`);
    });

    it('a WebSocket opened before a swap keeps echoing on the old server; new ones open on the new', async () => {
      const wss = s.url.replace(/^https/, 'wss');
      const open = () =>
        new Promise<WebSocket>((resolve, reject) => {
          const w = new WebSocket(`${wss}/echo`, { rejectUnauthorized: false });
          w.once('open', () => resolve(w)).once('error', reject);
        });
      const echo = (w: WebSocket, text: string) =>
        new Promise<string>((resolve) => {
          w.once('message', (d) => resolve(String(d)));
          w.send(text);
        });
      const before = await open();
      assert.equal(await echo(before, 'a'), 'a');
      await hup('three');
      assert.equal(await echo(before, 'b'), 'b');
      const afterSwap = await open();
      assert.equal(await echo(afterSwap, 'c'), 'c');
      for (const w of [before, afterSwap]) {
        const closed = new Promise((r) => w.once('close', r));
        w.close();
        await closed;
      }
    });

    it('the plain-HTTP listener still redirects to the HTTPS port after a swap', async () => {
      await hup('one');
      const m = /^redirecting (http:\/\/\S+) to HTTPS$/m.exec(s.stdout);
      assert.ok(m !== null, s.stdout);
      const r = await get(m[1]!, '/notes.txt', { headers: { host: 'localhost' } });
      assert.equal(r.status, 308);
      assert.equal(r.headers.location, `https://localhost:${portOf(s)}/notes.txt`);
    });
  });
});

describe('Deno.serve: certificates read at start', () => {
  let s: Listening;
  let files: { cert: string; key: string };
  before(async () => {
    files = certFiles('deno', 'one');
    s = await runListening('deno', GATEHOUSE_BIN, flags(files));
  });
  after(async () => {
    assert.equal(await s.close(), 0);
  });

  it('no config: serves natively without watching, and says so in one line', async () => {
    assert.match(s.stdout, /^on Deno 2\.9\.\d+ \(Deno\.serve\)$/m, s.stderr());
    const notes = s.stderr().match(/^gatehouse: note: .*$/gm) ?? [];
    assert.deepEqual(notes, [
      'gatehouse: note: Deno.serve reads the certificates at start only (no tls.watch, no reload on SIGHUP): restart to serve new ones',
    ]);
    assert.equal(await peerName(portOf(s)), 'one');
  });

  it('SIGHUP: logged as not possible; the process keeps serving its certificate', async () => {
    install(files, 'two');
    s.signal('SIGHUP');
    await waitUntil('the warning', () =>
      /SIGHUP: Deno\.serve cannot reload certificates/.test(s.stdout + s.stderr()),
    );
    assert.equal(await peerName(portOf(s)), 'one');
  });
});
