// gatehouse check URL: flags, exit codes (0 no errors, 1 errors or unreachable, 2 usage), text and
// JSON output, colour. Most runs call the command's function against real servers on 127.0.0.1:0;
// the last ones run the built CLI as a process (npm test builds first; alone: npm run build).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { brotliCompressSync } from 'node:zlib';
import { ensureDevCertificate } from '../../src/certs/dev-ca.js';
import { checkCommand } from '../../src/cli/check.js';
import { createServer } from '../../src/index.js';
import { type BrokenSite, startBrokenSite } from '../helpers/broken-site.js';
import { leafFor, testPki } from '../helpers/certs.js';
import { REPO_ROOT } from '../helpers/page-server.js';
import { testTls } from '../helpers/tls.js';

const BIN = join(REPO_ROOT, 'bin/gatehouse.js');
const dir = mkdtempSync(join(tmpdir(), 'gatehouse-check-'));
let site: BrokenSite;
let tlsUrl = '';
let closeTls: () => Promise<void>;
let caPath = '';

before(async () => {
  site = await startBrokenSite();
  const files = await testTls();
  caPath = join(dir, 'root.pem');
  writeFileSync(
    join(dir, 'junk.pem'),
    '-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n',
  );
  writeFileSync(caPath, files.caPem);
  const app = createServer({
    root: join(REPO_ROOT, 'examples/site'),
    listen: { host: '127.0.0.1', port: 0 },
    log: { format: 'off' },
    tls: { cert: files.cert, key: files.key },
  });
  tlsUrl = `https://localhost:${(await app.listen()).port}/`;
  closeTls = () => app.close();
});
after(async () => {
  await site.close();
  await closeTls();
  rmSync(dir, { recursive: true, force: true });
});

async function run(args: string[], o: { color?: boolean; dataDir?: string } = {}) {
  let out = '';
  let err = '';
  const code = await checkCommand(args, {
    cwd: dir,
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: (s: string) => (err += s) },
    repeatDelayMs: 0,
    ...o,
  });
  return { code, out, err };
}

describe('gatehouse check: usage errors exit 2 naming the flag', () => {
  const cases: [string, string[], RegExp][] = [
    ['no URL', [], /expected a URL/],
    ['two URLs', ['http://a.example/', 'http://b.example/'], /one URL/],
    ['unknown flag', ['http://a.example/', '--colour'], /--colour/],
    ['not a URL (with http:// put in front either)', ['a b.example'], /not a URL/],
    ['ftp URL', ['ftp://a.example/'], /only http:\/\/ and https:\/\//],
    ['credentials in the URL', ['http://u:p@a.example/'], /credentials in the URL/],
    ['--timeout 0', ['http://a.example/', '--timeout', '0'], /--timeout/],
    ['--timeout words', ['http://a.example/', '--timeout', 'soon'], /--timeout/],
    ['--origin with a path', ['http://a.example/', '--origin', 'https://app.example/x'], /--origin/],
    ['--origin not a URL', ['http://a.example/', '--origin', 'app'], /--origin/],
    ['--header without a colon', ['http://a.example/', '--header', 'X-A'], /--header/],
    [
      '--header Host',
      ['http://a.example/', '--header', 'Host: evil.example'],
      /--header: host cannot be set/,
    ],
    ['--header with a CR', ['http://a.example/', '--header', 'X-A: 1\r\nX-B: 2'], /--header/],
    ['--method with a space', ['http://a.example/', '--method', 'GE T'], /--method/],
    ['--ca missing file', ['http://a.example/', '--ca', 'nope.pem'], /--ca: cannot read nope\.pem/],
    ['--method CONNECT', ['http://a.example/', '--method', 'CONNECT'], /--method: not a method to check/],
    ['--ca not a PEM', ['http://a.example/', '--ca', 'junk.pem'], /--ca/],
    ['--jsonp with a space', ['http://a.example/', '--jsonp', 'a b'], /--jsonp/],
  ];
  for (const [name, args, message] of cases) {
    it(`${name} -> 2`, async () => {
      const r = await run(args);
      assert.equal(r.code, 2);
      assert.match(r.err, message);
      assert.match(r.err, /Usage: gatehouse check URL/);
      assert.equal(r.out, '');
    });
  }

  it('--help -> 0, usage on stdout', async () => {
    const r = await run(['--help']);
    assert.equal(r.code, 0);
    assert.match(r.out, /--origin ORIGIN/);
  });
});

describe('gatehouse check: exit codes and output', () => {
  it('no errors -> 0, text report ending with the summary line', async () => {
    // /landing has warnings (no validator, no nosniff) and no error: warnings never fail the run.
    const r = await run([site.url('/landing')]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^gatehouse check http:\/\/127\.0\.0\.1:\d+\/landing\nstatus 200\n/);
    assert.match(r.out, /\nProtocol and TLS\n {2}info {2}served over HTTP\/1\.1/);
    assert.match(r.out, /\n {2}WARN {2}.*\[validators\.none\]\n/);
    assert.match(r.out, /\n0 errors, [1-9]\d* warnings?, \d+ infos?\n$/);
  });

  it('--json: the DESIGN shape', async () => {
    // Exit code not asserted: the redirects area may judge the 301 -> 302 chain.
    const r = await run([site.url('/moved'), '--json']);
    const json = JSON.parse(r.out) as Record<string, unknown>;
    // The DESIGN shape first; passed and probes are additions.
    assert.deepEqual(Object.keys(json), [
      'url',
      'finalUrl',
      'status',
      'findings',
      'summary',
      'passed',
      'probes',
    ]);
    assert.equal(json.status, 200);
    assert.equal(json.finalUrl, site.url('/landing'));
    assert.deepEqual(Object.keys(json.summary as object), ['errors', 'warnings', 'infos']);
  });

  it('an error finding -> 1 (an untrusted certificate checked with --insecure)', async () => {
    const r = await run([tlsUrl, '--insecure', '--json']);
    assert.equal(r.code, 1, r.err);
    const json = JSON.parse(r.out) as { findings: { id: string; severity: string }[] };
    assert.ok(json.findings.some((f) => f.id === 'protocol.certificate-untrusted' && f.severity === 'error'));
  });

  it('--ca FILE: the same site trusted -> 0, HTTP/2', async () => {
    const r = await run([tlsUrl, '--ca', 'root.pem']);
    assert.equal(r.code, 0, r.out + r.err);
    assert.match(r.out, /served over HTTP\/2 \(ALPN h2\)/);
  });

  it('unreachable -> 1, one line naming why', async () => {
    const r = await run([tlsUrl]);
    assert.equal(r.code, 1);
    assert.match(r.err, /^gatehouse check: cannot reach https:\/\/localhost:\d+\/: certificate not trusted/);
    assert.equal(r.err.trim().split('\n').length, 1);
  });

  it('a redirect loop -> 1, the report printed and the reason on stderr', async () => {
    const r = await run([site.url('/loop-a')]);
    assert.equal(r.code, 1);
    assert.match(r.err, /no final response: .*redirect loop/);
  });

  it('colour on a terminal, none with --no-color', async () => {
    assert.match((await run([site.url('/landing')], { color: true })).out, /\u001b\[/);
    assert.doesNotMatch((await run([site.url('/landing'), '--no-color'], { color: true })).out, /\u001b\[/);
    assert.doesNotMatch((await run([site.url('/landing')], { color: false })).out, /\u001b\[/);
  });
});

/** The finding ids of a JSON report with their severities, `id:severity`. */
function idsOf(out: string): { status: number | null; ids: string[] } {
  const json = JSON.parse(out) as { status: number | null; findings: { id: string; severity: string }[] };
  return { status: json.status, ids: json.findings.map((f) => `${f.id}:${f.severity}`) };
}

describe('gatehouse check fails a broken site (issue 26)', () => {
  it('a 502 (a proxy to a dead upstream) -> 1, the status in the text and the JSON', async () => {
    const text = await run([site.url('/upstream-dead')]);
    assert.equal(text.code, 1, text.out);
    assert.match(text.out, /\nstatus 502\n/);
    assert.match(text.out, /ERROR the URL answers 502.*\[status\.server-error\]/);
    const json = await run([site.url('/upstream-dead'), '--json']);
    assert.equal(json.code, 1);
    const got = idsOf(json.out);
    assert.equal(got.status, 502);
    assert.ok(got.ids.includes('status.server-error:error'), got.ids.join(' '));
  });

  it('a 404 -> a warning (exit 0 when nothing else is wrong), the status shown', async () => {
    const r = await run([site.url('/missing'), '--json']);
    const got = idsOf(r.out);
    assert.equal(got.status, 404);
    assert.ok(got.ids.includes('status.client-error:warning'), got.ids.join(' '));
    assert.deepEqual(
      got.ids.filter((id) => id.endsWith(':error')),
      [],
    );
    assert.equal(r.code, 0);
    assert.match((await run([site.url('/missing')])).out, /\nstatus 404\n/);
  });

  it('an SPA fallback answering text/html for a missing hashed asset -> 1', async () => {
    const r = await run([site.url('/spa/'), '--json']);
    assert.equal(r.code, 1, r.out);
    const json = JSON.parse(r.out) as { findings: { id: string; severity: string; message: string }[] };
    const fallback = json.findings.filter((f) => f.id === 'status.asset-html-fallback');
    // The made-up name next to the page's real asset; the real script (text/javascript) is fine.
    assert.deepEqual(
      fallback.map((f) => [f.severity, f.message.split(',')[0]]),
      [['error', '/spa/assets/index-deadbeef.js']],
    );
  });

  it('a 404 cached a year, immutable -> 1', async () => {
    const r = await run([site.url('/outage-cached-a-year'), '--json']);
    assert.equal(r.code, 1, r.out);
    assert.ok(idsOf(r.out).ids.includes('caching.error-long-lifetime:error'));
  });

  it('HTML without Cache-Control, modified 40 s ago -> a warning', async () => {
    const r = await run([site.url('/html-just-deployed'), '--json']);
    assert.ok(idsOf(r.out).ids.includes('caching.html-no-cache-control:warning'), r.out);
  });
});

/** A node:https server on 127.0.0.1:0 presenting `certPem` (leaf + chain), answering a plain text 200. */
async function httpsWith(
  certPem: string,
  keyPem: string,
): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createHttpsServer({ cert: certPem, key: keyPem }, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'no-cache' });
    res.end('ok\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://localhost:${(server.address() as AddressInfo).port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('gatehouse check: certificates judged by the harm (issue 26)', () => {
  const HOUR_MS = 3_600_000;
  const expiring = async (fromHours: number, toHours: number) => {
    const pki = await testPki();
    const now = Date.now();
    const leaf = await leafFor({
      hosts: ['localhost', '127.0.0.1'],
      notBefore: new Date(now + fromHours * HOUR_MS),
      notAfter: new Date(now + toHours * HOUR_MS),
    });
    const server = await httpsWith(leaf.certPem + pki.intermediate.certPem, leaf.keyPem);
    try {
      const r = await run([server.url, '--ca', 'root.pem', '--json']);
      return idsOf(r.out).ids;
    } finally {
      await server.close();
    }
  };

  it('a 12-hour certificate (Caddy internal) an hour old: not expiring', async () => {
    const ids = await expiring(-1, 11);
    assert.ok(ids.includes('protocol.http-version:info'), ids.join(' '));
    assert.ok(!ids.some((id) => id.startsWith('protocol.certificate-expiring')), ids.join(' '));
  });

  it('a 12-hour certificate with 2 hours left: expiring, a warning', async () => {
    const ids = await expiring(-10, 2);
    assert.ok(ids.includes('protocol.certificate-expiring:warning'), ids.join(' '));
  });

  it('a dev-CA certificate: --ca <the dev CA path> suggested, not --insecure', async () => {
    const dataDir = join(dir, 'data');
    const dev = await ensureDevCertificate({ dataDir });
    const server = await httpsWith(dev.certPem, dev.keyPem);
    const io = { dataDir };
    try {
      const unreachable = await run([server.url], io);
      assert.equal(unreachable.code, 1);
      assert.ok(unreachable.err.includes(`--ca ${dev.caCertPath}`), unreachable.err);
      assert.doesNotMatch(unreachable.err, /--insecure/);
      const insecure = await run([server.url, '--insecure', '--json'], io);
      const json = JSON.parse(insecure.out) as { findings: { id: string; message: string }[] };
      const untrusted = json.findings.find((f) => f.id === 'protocol.certificate-untrusted');
      assert.ok(untrusted?.message.includes(`--ca ${dev.caCertPath}`), untrusted?.message);
      const trusted = await run([server.url, '--ca', dev.caCertPath], io);
      assert.equal(trusted.code, 0, trusted.out + trusted.err);
    } finally {
      await server.close();
    }
  });

  it('a certificate from another unknown CA still suggests --insecure', async () => {
    const r = await run([tlsUrl], { dataDir: join(dir, 'data') });
    assert.match(r.err, /--insecure checks it anyway/);
  });
});

/** The built CLI as a process (spawn, not spawnSync: the servers live in this event loop). */
function cli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [BIN, ...args], { cwd: dir, env: { ...process.env, ...env } });
    let out = '';
    let err = '';
    c.stdout.on('data', (d) => (out += d));
    c.stderr.on('data', (d) => (err += d));
    c.on('close', (code) => resolve({ code, out, err }));
  });
}

describe('gatehouse check: the built CLI', () => {
  it('check URL --json -> 0 and the JSON report; piped output has no colour', async () => {
    const r = await cli(['check', site.url('/landing'), '--json']);
    assert.equal(r.code, 0, r.err);
    const json = JSON.parse(r.out) as { url: string; summary: { errors: number } };
    assert.equal(json.url, site.url('/landing'));
    assert.equal(json.summary.errors, 0);
    const text = await cli(['check', site.url('/landing')]);
    assert.doesNotMatch(text.out, /\u001b\[/);
  });

  it('check without a URL -> 2; --help lists check', async () => {
    const r = await cli(['check']);
    assert.equal(r.code, 2);
    assert.match(r.err, /expected a URL/);
    const help = await cli(['--help']);
    assert.match(help.out, /gatehouse check URL/);
  });
});

describe('gatehouse check: a URL without a scheme, --verbose and the probes in --json', () => {
  let siteDir = '';
  let port = 0;
  let close: () => Promise<void>;
  before(async () => {
    siteDir = mkdtempSync(join(tmpdir(), 'gatehouse-check-verbose-'));
    const page = `<!doctype html><title>x</title><script type="module" src="/assets/app-3f2a9c1b.js"></script>${'<p>filler</p>'.repeat(100)}`;
    writeFileSync(join(siteDir, 'index.html'), page);
    // A precompressed sibling, so the br probe gets br whatever on-the-fly compression is doing.
    writeFileSync(join(siteDir, 'index.html.br'), brotliCompressSync(page));
    mkdirSync(join(siteDir, 'assets'));
    writeFileSync(join(siteDir, 'assets/app-3f2a9c1b.js'), 'export {};\n');
    const app = createServer({
      root: siteDir,
      listen: { host: '127.0.0.1', port: 0 },
      log: { format: 'off' },
    });
    port = (await app.listen()).port;
    close = () => app.close();
  });
  after(async () => {
    await close();
    rmSync(siteDir, { recursive: true, force: true });
  });

  it('127.0.0.1:PORT is checked as http://127.0.0.1:PORT/ (as curl)', async () => {
    const r = await run([`127.0.0.1:${port}`]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, new RegExp(`^gatehouse check http://127\\.0\\.0\\.1:${port}/\\nstatus 200\\n`));
  });

  it('--verbose lists the 304s, the compression and the asset probes that passed', async () => {
    const plain = await run([`127.0.0.1:${port}`]);
    assert.doesNotMatch(plain.out, /\bpass\b/);
    const r = await run([`127.0.0.1:${port}`, '--verbose']);
    assert.equal(r.code, 0, r.err);
    for (const id of [
      'validators.inm-304',
      'validators.ims-304',
      'validators.range-206',
      'coding.br',
      'status.missing-asset-404',
      'caching.hashed-asset-year',
    ]) {
      assert.match(r.out, new RegExp(`\\n {2}pass {2}.*\\[${id.replace('.', '\\.')}\\]\\n`), id);
    }
  });

  it('--json lists every request sent, and what passed', async () => {
    const r = await run([`127.0.0.1:${port}`, '--json']);
    const json = JSON.parse(r.out) as {
      probes: { name: string; method: string; url: string; status: number | null }[];
      passed: { id: string }[];
    };
    const byName = new Map(json.probes.map((p) => [p.name, p]));
    for (const name of [
      'hop-1',
      'primary',
      'repeat',
      'inm-match',
      'ims',
      'coding-br',
      'range',
      'asset-made-up',
      'asset-script',
    ]) {
      assert.ok(byName.has(name), `${name} in ${[...byName.keys()].join(' ')}`);
    }
    assert.equal(byName.get('inm-match')!.status, 304);
    assert.equal(byName.get('asset-made-up')!.status, 404);
    assert.equal(byName.get('asset-script')!.url, `http://127.0.0.1:${port}/assets/app-3f2a9c1b.js`);
    assert.ok(json.passed.some((p) => p.id === 'validators.inm-304'));
  });
});
