// gatehouse check URL: flags, exit codes (0 no errors, 1 errors or unreachable, 2 usage), text and
// JSON output, colour. Most runs call the command's function against real servers on 127.0.0.1:0;
// the last ones run the built CLI as a process (npm test builds first; alone: npm run build).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { checkCommand } from '../../src/cli/check.js';
import { createServer } from '../../src/index.js';
import { type BrokenSite, startBrokenSite } from '../helpers/broken-site.js';
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

async function run(args: string[], o: { color?: boolean } = {}) {
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
    ['not a URL', ['a.example'], /not a URL/],
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
    assert.match(r.out, /^gatehouse check http:\/\/127\.0\.0\.1:\d+\/landing\n/);
    assert.match(r.out, /\nProtocol and TLS\n {2}info {2}served over HTTP\/1\.1/);
    assert.match(r.out, /\n {2}WARN {2}.*\[validators\.none\]\n/);
    assert.match(r.out, /\n0 errors, [1-9]\d* warnings, \d+ infos\n$/);
  });

  it('--json: the DESIGN shape', async () => {
    // Exit code not asserted: the redirects area may judge the 301 -> 302 chain.
    const r = await run([site.url('/moved'), '--json']);
    const json = JSON.parse(r.out) as Record<string, unknown>;
    assert.deepEqual(Object.keys(json), ['url', 'finalUrl', 'findings', 'summary']);
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
