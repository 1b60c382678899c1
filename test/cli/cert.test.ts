// gatehouse cert TARGET: certificates made in the test, served by real TLS servers on 127.0.0.1:0.
// Most runs call the command's function (output captured); one runs the built CLI as a process.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ensureDevCertificate } from '../../src/certs/dev-ca.js';
import { certCommand, parseTarget } from '../../src/cli/cert.js';
import { parseServeFlags } from '../../src/cli/main.js';
import { DAY_MS, leafFor, selfSigned, serveTls, testPki, unknownCaPki } from '../helpers/certs.js';

const BIN = join(import.meta.dirname, '../../bin/gatehouse.js');
const dir = mkdtempSync(join(tmpdir(), 'gatehouse-cert-'));
const closers: (() => Promise<void>)[] = [];
let rootPath = '';

before(async () => {
  const pki = await testPki();
  rootPath = join(dir, 'root.pem');
  writeFileSync(rootPath, pki.root.certPem);
});
after(async () => {
  for (const c of closers) await c();
  rmSync(dir, { recursive: true, force: true });
});

async function serve(cert: string, key: string): Promise<number> {
  const s = await serveTls(cert, key, { ALPNProtocols: ['h2', 'http/1.1'] });
  closers.push(s.close);
  return s.port;
}

async function run(args: string[], o: { nowMs?: number; dataDir?: string } = {}) {
  let out = '';
  let err = '';
  const code = await certCommand(args, {
    cwd: dir,
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: (s: string) => (err += s) },
    ...o,
  });
  return { code, out, err };
}

async function runJson(args: string[]) {
  const r = await run([...args, '--json']);
  return {
    ...r,
    json: JSON.parse(r.out) as Record<string, unknown> & {
      checks: Record<string, unknown>;
      warnings: string[];
    },
  };
}

describe('gatehouse cert: live', () => {
  it('good chain, --ca root -> every check ok, exit 0, text lists the facts', async () => {
    const pki = await testPki();
    const port = await serve(pki.chain, pki.leaf.keyPem);
    const r = await run([`127.0.0.1:${port}`, '--ca', rootPath]);
    assert.equal(r.code, 0, r.out + r.err);
    for (const want of [
      /^subject: +CN=localhost$/m,
      /^san: +DNS:localhost, IP:127\.0\.0\.1, IP:::1$/m,
      /^issuer: +CN=Gatehouse Test Intermediate CA$/m,
      /^validFrom: +\d{4}-\d\d-\d\dT/m,
      /^daysLeft: +(29|30)$/m,
      /^key: +EC P-256$/m,
      /^signature: +ECDSA with SHA-256$/m,
      /^serial: +[0-9A-F]{32}$/m,
      /^fingerprint256: +([0-9A-F]{2}:){31}[0-9A-F]{2}$/m,
      /^protocol: +TLSv1\.3$/m,
      /^alpn: +h2$/m,
      /^cipher: +TLS_/m,
      /^chain: +0: CN=localhost/m,
      /^ +1: CN=Gatehouse Test Intermediate CA/m,
      /^ok: trusted$/m,
      /^ok: timeValid$/m,
      /^ok: hostnameMatches$/m,
    ]) {
      assert.match(r.out, want);
    }
  });

  it('--json: the keys the issue lists, chain, protocol, cipher, warnings', async () => {
    const pki = await testPki();
    const port = await serve(pki.chain, pki.leaf.keyPem);
    const { code, json } = await runJson([`localhost:${port}`, '--ca', rootPath]);
    assert.equal(code, 0);
    for (const k of [
      'subject',
      'san',
      'issuer',
      'validFrom',
      'validTo',
      'daysLeft',
      'fingerprint256',
      'checks',
      'ok',
      'warnings',
      'chain',
      'protocol',
      'cipher',
    ]) {
      assert.ok(k in json, k);
    }
    assert.deepEqual(json.checks, {
      trusted: true,
      timeValid: true,
      hostnameMatches: true,
      keyStrength: true,
    });
    assert.deepEqual(json.san, ['DNS:localhost', 'IP:127.0.0.1', 'IP:::1']);
    assert.equal(json.ok, true);
    assert.equal(json.protocol, 'TLSv1.3');
    assert.ok(Array.isArray(json.chain) && json.chain.length >= 2);
  });

  it('https://URL target with a path: host and port taken from it', async () => {
    const pki = await testPki();
    const port = await serve(pki.chain, pki.leaf.keyPem);
    const { code, json } = await runJson([`https://localhost:${port}/some/page?q=1`, '--ca', rootPath]);
    assert.equal(code, 0);
    assert.equal(json.target, `localhost:${port}`);
  });

  it('expired -> timeValid false, trusted still true, exit 1', async () => {
    const now = Date.now();
    const c = await leafFor({
      hosts: ['localhost'],
      notBefore: new Date(now - 60 * DAY_MS),
      notAfter: new Date(now - 2 * DAY_MS),
    });
    const pki = await testPki();
    const port = await serve(c.certPem + pki.intermediate.certPem, c.keyPem);
    const { code, json } = await runJson([`localhost:${port}`, '--ca', rootPath]);
    assert.equal(code, 1);
    assert.deepEqual(json.checks, {
      trusted: true,
      timeValid: false,
      hostnameMatches: true,
      keyStrength: true,
    });
    assert.ok((json.daysLeft as number) < 0);
  });

  it('not yet valid -> timeValid false, exit 1, text says FAIL: timeValid', async () => {
    const now = Date.now();
    const c = await leafFor({
      hosts: ['localhost'],
      notBefore: new Date(now + 2 * DAY_MS),
      notAfter: new Date(now + 60 * DAY_MS),
    });
    const pki = await testPki();
    const port = await serve(c.certPem + pki.intermediate.certPem, c.keyPem);
    const r = await run([`localhost:${port}`, '--ca', rootPath]);
    assert.equal(r.code, 1);
    assert.match(r.out, /^FAIL: timeValid: not valid for 2 more days$/m);
  });

  it('wrong host -> hostnameMatches false, exit 1', async () => {
    const c = await leafFor({ hosts: ['other.test'] });
    const pki = await testPki();
    const port = await serve(c.certPem + pki.intermediate.certPem, c.keyPem);
    const { code, json } = await runJson([`localhost:${port}`, '--ca', rootPath]);
    assert.equal(code, 1);
    assert.deepEqual(json.checks, {
      trusted: true,
      timeValid: true,
      hostnameMatches: false,
      keyStrength: true,
    });
  });

  it('--servername picks the name to send and match', async () => {
    const c = await leafFor({ hosts: ['other.test'] });
    const pki = await testPki();
    const port = await serve(c.certPem + pki.intermediate.certPem, c.keyPem);
    const { code, json } = await runJson([
      `127.0.0.1:${port}`,
      '--ca',
      rootPath,
      '--servername',
      'other.test',
    ]);
    assert.equal(code, 0);
    assert.equal(json.ok, true);
  });

  it('self-signed -> trusted false, exit 1', async () => {
    const c = await selfSigned(['localhost']);
    const port = await serve(c.certPem, c.keyPem);
    const { code, json, out } = await runJson([`localhost:${port}`, '--ca', rootPath]);
    assert.equal(code, 1);
    assert.deepEqual(json.checks, {
      trusted: false,
      timeValid: true,
      hostnameMatches: true,
      keyStrength: true,
    });
    assert.match(out, /self-signed/);
  });

  it('unknown CA (its chain served in full) -> trusted false, exit 1', async () => {
    const other = await unknownCaPki();
    const c = await leafFor({ hosts: ['localhost'], issuer: other });
    const port = await serve(c.certPem + other.certPem, c.keyPem);
    const { code, json } = await runJson([`localhost:${port}`, '--ca', rootPath]);
    assert.equal(code, 1);
    assert.equal(json.checks.trusted, false);
    assert.deepEqual(json.warnings, []);
  });

  it('missing intermediate -> trusted false and an incomplete-chain warning, exit 1', async () => {
    const pki = await testPki();
    const port = await serve(pki.leaf.certPem, pki.leaf.keyPem);
    const { code, json } = await runJson([`localhost:${port}`, '--ca', rootPath]);
    assert.equal(code, 1);
    assert.equal(json.checks.trusted, false);
    assert.match(json.warnings.join('\n'), /incomplete chain/);
    assert.match(String((json.failures as string[])[0]), /UNABLE_TO_VERIFY_LEAF_SIGNATURE/);
  });

  it('without --ca the system store is used: the test root is not in it -> trusted false', async () => {
    const pki = await testPki();
    const port = await serve(pki.chain, pki.leaf.keyPem);
    const { code, json } = await runJson([`localhost:${port}`]);
    assert.equal(code, 1);
    assert.equal(json.checks.trusted, false);
  });

  it('expires within --warn-days -> warning, still exit 0; --warn-days 0 -> no warning', async () => {
    const pki = await testPki();
    const port = await serve(pki.chain, pki.leaf.keyPem); // 30 days left
    const warned = await runJson([`localhost:${port}`, '--ca', rootPath, '--warn-days', '60']);
    assert.equal(warned.code, 0);
    assert.match(warned.json.warnings.join(), /expires in (29|30) days \(within --warn-days 60\)/);
    const quiet = await runJson([`localhost:${port}`, '--ca', rootPath, '--warn-days', '0']);
    assert.deepEqual(quiet.json.warnings, []);
  });

  it('RSA-2048 key is described as RSA 2048 with an RSA signature', async () => {
    const c = await leafFor({ hosts: ['localhost'], keyType: 'RSA-2048' });
    const pki = await testPki();
    const port = await serve(c.certPem + pki.intermediate.certPem, c.keyPem);
    const { json } = await runJson([`localhost:${port}`, '--ca', rootPath]);
    assert.equal(json.keyType, 'RSA 2048');
    assert.equal(json.signatureAlgorithm, 'ECDSA with SHA-256'); // signed by the P-256 intermediate
  });
});

describe('gatehouse cert: unreachable targets -> exit 1 naming the reason', () => {
  it('connection refused', async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const { port } = probe.address() as { port: number };
    await new Promise<void>((r) => probe.close(() => r()));
    const r = await run([`127.0.0.1:${port}`]);
    assert.equal(r.code, 1);
    assert.match(r.err, /connection refused/);
  });

  it('a server that never answers the handshake -> timed out after --timeout-ms', async () => {
    const held: Socket[] = [];
    const silent = createServer((s) => held.push(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const { port } = silent.address() as { port: number };
    try {
      const r = await runJson([`127.0.0.1:${port}`, '--timeout-ms', '300']);
      assert.equal(r.code, 1);
      assert.deepEqual(r.json, {
        target: `127.0.0.1:${port}`,
        ok: false,
        error: `127.0.0.1:${port}: timed out after 300 ms`,
      });
    } finally {
      for (const s of held) s.destroy();
      await new Promise<void>((r) => silent.close(() => r()));
    }
  });

  it('a plain-HTTP server -> TLS handshake failed', async () => {
    const held: Socket[] = [];
    const plain = createServer((s) => {
      held.push(s);
      s.on('error', () => {});
      s.end('HTTP/1.1 400 Bad Request\r\n\r\n');
    });
    await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r));
    const { port } = plain.address() as { port: number };
    try {
      const r = await run([`127.0.0.1:${port}`]);
      assert.equal(r.code, 1);
      assert.match(r.err, /TLS handshake failed|connection reset/);
    } finally {
      for (const s of held) s.destroy();
      await new Promise<void>((r) => plain.close(() => r()));
    }
  });

  it('DNS: a name under .invalid (RFC 2606) -> DNS reason', async () => {
    const r = await run(['no-such-host.invalid:443']);
    assert.equal(r.code, 1);
    assert.match(r.err, /DNS/);
  });
});

describe('gatehouse cert: PEM files', () => {
  it('leaf + intermediate file, --ca root: trusted, time valid, host not checked -> exit 0', async () => {
    const pki = await testPki();
    writeFileSync(join(dir, 'chain.pem'), pki.chain);
    const { code, json } = await runJson(['chain.pem', '--ca', rootPath]);
    assert.equal(code, 0);
    assert.deepEqual(json.checks, {
      trusted: true,
      timeValid: true,
      hostnameMatches: null,
      keyStrength: true,
    });
    assert.equal(json.source, 'file');
    assert.equal(json.protocol, null);
  });

  it('file with --servername checks the name', async () => {
    const pki = await testPki();
    writeFileSync(join(dir, 'chain2.pem'), pki.chain);
    const good = await runJson(['chain2.pem', '--ca', rootPath, '--servername', 'localhost']);
    assert.equal(good.json.checks.hostnameMatches, true);
    const bad = await runJson(['chain2.pem', '--ca', rootPath, '--servername', 'evil.test']);
    assert.equal(bad.code, 1);
    assert.equal(bad.json.checks.hostnameMatches, false);
  });

  it('leaf alone in the file -> untrusted with the incomplete-chain warning', async () => {
    const pki = await testPki();
    writeFileSync(join(dir, 'leaf.pem'), pki.leaf.certPem);
    const { code, json } = await runJson(['leaf.pem', '--ca', rootPath]);
    assert.equal(code, 1);
    assert.equal(json.checks.trusted, false);
    assert.match(json.warnings.join(), /incomplete chain/);
  });

  it("the clock is the caller's: 40 days on, the 30-day leaf is expired", async () => {
    const pki = await testPki();
    writeFileSync(join(dir, 'chain3.pem'), pki.chain);
    const r = await run(['chain3.pem', '--ca', rootPath, '--json'], { nowMs: Date.now() + 40 * DAY_MS });
    assert.equal(r.code, 1);
    assert.equal(JSON.parse(r.out).checks.timeValid, false);
  });

  it('a file that is not PEM -> exit 1 naming the file', async () => {
    writeFileSync(join(dir, 'junk.pem'), 'hello');
    const r = await run(['junk.pem']);
    assert.equal(r.code, 1);
    assert.match(r.err, /junk\.pem: no PEM certificate/);
  });

  it('the dev CA leaf checked as a file against the dev CA (--ca-path) -> exit 0', async () => {
    const dataDir = join(dir, 'data');
    const dev = await ensureDevCertificate({ dataDir });
    const caPath = await run(['--ca-path'], { dataDir });
    assert.equal(caPath.code, 0);
    assert.equal(caPath.out, `${dev.caCertPath}\n`);
    writeFileSync(join(dir, 'dev-leaf.pem'), dev.certPem);
    const r = await runJson(['dev-leaf.pem', '--ca', dev.caCertPath, '--servername', 'localhost']);
    assert.equal(r.code, 0, r.out);
  });
});

describe('gatehouse cert: usage', () => {
  const cases: [string, string[], RegExp][] = [
    ['no TARGET', [], /expected a TARGET/],
    ['two TARGETs', ['a.test', 'b.test'], /one TARGET/],
    ['unknown flag', ['a.test', '--bogus'], /bogus/],
    ['--warn-days not a number', ['a.test', '--warn-days', 'x'], /--warn-days/],
    ['--warn-days negative', ['a.test', '--warn-days', '-1'], /warn-days/],
    ['--timeout-ms 0', ['a.test', '--timeout-ms', '0'], /--timeout-ms/],
    ['http:// URL', ['http://a.test/'], /only https/],
    ['a .pem that does not exist', ['missing.pem'], /no such file/],
    ['--ca that does not exist', ['a.test', '--ca', 'nope.pem'], /--ca: cannot read/],
    ['--ca that is not PEM', ['a.test', '--ca', 'junk-ca.txt'], /no PEM certificate/],
    ['--ca-path with a TARGET', ['--ca-path', 'a.test'], /--ca-path takes no TARGET/],
    ['port out of range', ['a.test:70000'], /not a host\[:port\]/],
    ['host with a path', ['a.test/x'], /no such file|not a host/],
    ['--servername with a wildcard', ['a.test', '--servername', '*.a.test'], /--servername/],
  ];
  before(() => writeFileSync(join(dir, 'junk-ca.txt'), 'hello'));
  for (const [name, args, want] of cases) {
    it(`${name} -> exit 2`, async () => {
      const r = await run(args);
      assert.equal(r.code, 2, r.err);
      assert.match(r.err, want);
    });
  }

  it('--ca-path with no CA yet -> exit 1 and a clear line, nothing created', async () => {
    const dataDir = join(dir, 'empty-data');
    const r = await run(['--ca-path'], { dataDir });
    assert.equal(r.code, 1);
    assert.match(r.err, /no development CA yet/);
    assert.equal(existsSync(dataDir), false);
  });
});

describe('parseTarget', () => {
  const cases: [string, string, boolean, ReturnType<typeof parseTarget>][] = [
    ['host alone -> port 443', 'example.com', false, { kind: 'live', host: 'example.com', port: 443 }],
    ['host:port', 'example.com:8443', false, { kind: 'live', host: 'example.com', port: 8443 }],
    ['IPv4:port', '127.0.0.1:8443', false, { kind: 'live', host: '127.0.0.1', port: 8443 }],
    ['[IPv6]:port', '[::1]:8443', false, { kind: 'live', host: '::1', port: 8443 }],
    ['bare IPv6', '::1', false, { kind: 'live', host: '::1', port: 443 }],
    [
      'https URL, default port',
      'https://Example.COM/x',
      false,
      { kind: 'live', host: 'example.com', port: 443 },
    ],
    [
      'IDN host -> A-label',
      'bücher.example',
      false,
      { kind: 'live', host: 'xn--bcher-kva.example', port: 443 },
    ],
    ['existing file', 'cert.pem', true, { kind: 'file', path: 'cert.pem' }],
    [
      'user info refused',
      'https://u:p@example.com/',
      false,
      { kind: 'invalid', reason: 'credentials in https://u:p@example.com/' },
    ],
    ['port 0 refused', 'example.com:0', false, { kind: 'invalid', reason: 'port 0 in example.com:0' }],
  ];
  for (const [name, arg, isFile, want] of cases)
    it(name, () => assert.deepEqual(parseTarget(arg, isFile), want));
});

describe('gatehouse cert as a process (built CLI)', () => {
  it('node bin/gatehouse.js cert 127.0.0.1:PORT --ca root.pem --servername localhost -> exit 0; wrong --ca -> exit 1', async () => {
    assert.ok(
      existsSync(join(import.meta.dirname, '../../dist/cli/cert.js')),
      'dist/ not built (npm test builds it first)',
    );
    const pki = await testPki();
    const port = await serve(pki.chain, pki.leaf.keyPem);
    const other = await unknownCaPki();
    writeFileSync(join(dir, 'other.pem'), other.certPem);
    const runBin = (args: string[]) =>
      new Promise<{ status: number | null; stdout: string }>((resolve) => {
        // spawn (not spawnSync): the TLS server lives in this process's event loop.
        import('node:child_process').then(({ spawn }) => {
          const c = spawn(process.execPath, [BIN, 'cert', ...args], { cwd: dir });
          let stdout = '';
          c.stdout.on('data', (d) => (stdout += d));
          c.on('exit', (status) => resolve({ status, stdout }));
        });
      });
    const ok = await runBin([`127.0.0.1:${port}`, '--ca', rootPath, '--servername', 'localhost']);
    assert.equal(ok.status, 0, ok.stdout);
    assert.match(ok.stdout, /^ok: trusted$/m);
    const bad = await runBin([`127.0.0.1:${port}`, '--ca', 'other.pem']);
    assert.equal(bad.status, 1);
    assert.match(bad.stdout, /^FAIL: trusted/m);
    const usage = spawnSync(process.execPath, [BIN, 'cert'], { encoding: 'utf8' });
    assert.equal(usage.status, 2);
  });
});

describe('gatehouse serve --https', () => {
  it('--https sets tls: { dev: true } in the overrides', () => {
    assert.deepEqual(parseServeFlags(['--https']).overrides.tls, { dev: true });
    assert.equal(parseServeFlags([]).overrides.tls, undefined);
  });

  it('first start prints where the new CA is and how to trust it; the next start one line; gatehouse cert passes it', async () => {
    assert.ok(
      existsSync(join(import.meta.dirname, '../../dist/cli/cert.js')),
      'dist/ not built (npm test builds it first)',
    );
    const caPath = join(dir, 'serve-data', 'dev-ca', 'ca.pem');
    const dataDir = join(dir, 'serve-data');
    const site = join(dir, 'site');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(site, { recursive: true });
    writeFileSync(join(site, 'index.html'), 'hi');
    const { spawn } = await import('node:child_process');
    /** The live dev-CA server as `gatehouse cert` sees it: every check passes against the dev CA. */
    const checkLive = async (url: string) => {
      const { code, json } = await runJson([url, '--ca', caPath]);
      assert.equal(code, 0, JSON.stringify(json));
      assert.deepEqual(json.checks, {
        trusted: true,
        timeValid: true,
        hostnameMatches: true,
        keyStrength: true,
      });
      assert.equal(json.ok, true);
    };
    let checked: Promise<void> = Promise.resolve();
    const start = () =>
      new Promise<string>((resolve, reject) => {
        const c = spawn(process.execPath, [BIN, 'serve', site, '--https', '--port', '0', '--log', 'off'], {
          env: { ...process.env, GATEHOUSE_DATA_DIR: dataDir },
        });
        let out = '';
        let err = '';
        c.stderr.on('data', (d) => (err += d));
        c.stdout.on('data', (d) => {
          out += d;
          const m = /listening on (\S+)\n/.exec(out);
          if (m) {
            checked = checkLive(m[1]!);
            checked.finally(() => c.kill('SIGTERM')).catch(() => {});
          }
        });
        c.on('exit', (code) =>
          /listening on/.test(out) ? resolve(out) : reject(new Error(`exit ${code}: ${err}`)),
        );
      });
    const first = await start();
    await checked;
    assert.match(first, /listening on https:\/\/127\.0\.0\.1:\d+/);
    assert.match(
      first,
      new RegExp(`The Gatehouse development CA is ${caPath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`),
    );
    assert.match(first, /update-ca-certificates/);
    assert.match(first, /NODE_EXTRA_CA_CERTS=/);
    const second = await start();
    assert.doesNotMatch(second, /update-ca-certificates/);
    assert.match(second, /HTTPS with the development CA .*ca\.pem/);
    const path = await run(['--ca-path'], { dataDir });
    assert.equal(path.out, `${caPath}\n`);
  });
});
