// Attack: names and fields that drive the terminal (issue 25 §5). A build folder's file names, a
// server's header values and a certificate's subject carry ESC/BEL sequences (set the window title,
// clear the screen), newlines (forge a line), C1 controls (0x9B is CSI on 8-bit terminals) and bidi
// overrides (U+202E reverses what follows). Every command runs as users run it (node bin/gatehouse.js,
// built dist/) on real files and real servers on 127.0.0.1; no raw control byte may reach stdout or
// stderr, text or --json, and the name must still show (escaped), so the attack did reach the printer.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { forTerminal, jsonForTerminal } from '../../src/http/terminal.js';
import { selfSigned, serveTls } from '../helpers/certs.js';

const BIN = join(import.meta.dirname, '../../bin/gatehouse.js');
const dir = mkdtempSync(join(tmpdir(), 'gatehouse-term-'));
const site = join(dir, 'site');
const closers: (() => Promise<void>)[] = [];

/** The hostile names: OSC title + BEL + clear screen; a forged line; bidi override; raw C1 CSI. */
const NAMES = {
  osc: 'a\u001b]0;pwned\u0007\u001b[2J.js',
  newline: 'b\nok: all good.js',
  bidi: 'c\u202esj.exe.js',
  isolate: 'd\u2066x\u2069.js',
  c1: 'e\u009b2J\u0085.js',
  del: 'f\u007f.js',
};

/** Any byte a terminal acts on, other than the newlines that end our own lines. */
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;

function assertClean(label: string, text: Buffer): void {
  // Bytes as well as characters: C1 is C2 xx in UTF-8, and a lone 0x9B would decode to U+FFFD.
  for (const b of text) assert.ok(b >= 0x20 || b === 0x0a, `${label}: raw byte 0x${b.toString(16)}`);
  assert.ok(
    !text.includes(Buffer.from([0xc2, 0x9b])) && !RAW.test(text.toString('utf8')),
    `${label}: raw control`,
  );
}

interface Ran {
  code: number | null;
  out: Buffer;
  err: Buffer;
}

/** The built CLI as a process (spawn: the servers live in this event loop). */
function cli(args: string[]): Promise<Ran> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [BIN, ...args], { cwd: dir });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    c.stdout.on('data', (d: Buffer) => out.push(d));
    c.stderr.on('data', (d: Buffer) => err.push(d));
    c.on('close', (code) => resolve({ code, out: Buffer.concat(out), err: Buffer.concat(err) }));
  });
}

before(() => {
  mkdirSync(site);
  for (const name of Object.values(NAMES)) writeFileSync(join(site, name), 'console.log(1);\n'.repeat(200));
});
after(async () => {
  for (const c of closers) await c();
  rmSync(dir, { recursive: true, force: true });
});

describe('attack: hostile file names through the built CLI', () => {
  it('attack: precompress --dry-run over files named with ESC/BEL/newline/bidi/C1 -> each named once, escaped, no raw control', async () => {
    const r = await cli(['precompress', site, '--dry-run']);
    assert.equal(r.code, 0, r.err.toString());
    assertClean('stdout', r.out);
    assertClean('stderr', r.err);
    const lines = r.out.toString().split('\n');
    for (const name of Object.values(NAMES)) {
      // Each file's two siblings are listed, each on one line of its own.
      const shown = forTerminal(name);
      assert.equal(lines.filter((l) => l.startsWith(`would write ${shown}.br `)).length, 1, shown);
      assert.equal(lines.filter((l) => l.startsWith(`would write ${shown}.gz `)).length, 1, shown);
    }
    assert.ok(
      lines.some((l) => /^would write b\\x0aok: all good\.js\.br \(/.test(l)),
      'the newline shows as \\x0a',
    );
    assert.equal(lines.filter((l) => l.startsWith('ok: all good')).length, 0, 'no forged line');
  });

  it('attack: hash of a hostile name (found and missing) -> stdout and stderr escaped', async () => {
    const missing = join(site, 'gone\u001b]0;t\u0007\n\u009b.js');
    const r = await cli(['hash', '--root', site, join(site, NAMES.osc), join(site, NAMES.c1), missing]);
    assert.equal(r.code, 1);
    assertClean('stdout', r.out);
    assertClean('stderr', r.err);
    assert.equal(r.out.toString().split('\n').filter(Boolean).length, 2);
    assert.match(r.err.toString(), /gone\\x1b\]0;t\\x07\\x0a\\x9b\.js: /);
  });

  it('attack: sw-manifest --out with a hostile name -> the summary line escaped; the JSON lists every file', async () => {
    const outName = 'm\u001b[2J\u202e\u009b.json';
    const r = await cli(['sw-manifest', site, '--out', outName]);
    assert.equal(r.code, 0, r.err.toString());
    assertClean('stderr', r.err);
    assert.match(r.err.toString(), /-> m\\x1b\[2J\\u202e\\x9b\.json\n$/);
    const listed = await cli(['sw-manifest', site]);
    assertClean('stdout', listed.out);
    assert.equal((JSON.parse(listed.out.toString()) as unknown[]).length, Object.keys(NAMES).length);
  });
});

describe('attack: hostile names in serve messages', () => {
  it('attack: serve with a missing ROOT named with ESC/BEL and a newline -> exit 2, the name escaped on one line', async () => {
    const r = await cli(['serve', 'gone\u001b]0;pwned\u0007\nfake\u009b', '--port', '0']);
    assert.equal(r.code, 2);
    assertClean('stderr', r.err);
    assert.match(r.err.toString(), /not a directory: .*gone\\x1b\]0;pwned\\x07\\x0afake\\x9b\n/);
  });
});

describe('attack: hostile fields in --json', () => {
  it('attack: check --json against a server whose Server header holds C1 (0x9B CSI, 0x85 NEL) -> \\u escapes, same value', async () => {
    let requests = 0;
    const server: Server = createServer((_req, res) => {
      requests++;
      // Latin-1 bytes 0x9B, 0x85 on the wire; the client reads them as U+009B, U+0085.
      res.setHeader('server', 'evil\u009b2J\u0085x');
      res.setHeader('cache-control', 'no-store, \u009b31m');
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const port = (server.address() as AddressInfo).port;
    const json = await cli(['check', `http://127.0.0.1:${port}/`, '--json']);
    assert.ok(requests > 0, 'the server was asked');
    assertClean('stdout', json.out);
    assertClean('stderr', json.err);
    assert.match(json.out.toString(), /\\u009b/, 'the C1 is in the report, escaped');
    const parsed = JSON.parse(json.out.toString()) as { findings: { evidence: string }[] };
    assert.ok(
      parsed.findings.some((f) => f.evidence.includes('\u009b')),
      'JSON.parse gives the value back',
    );
    const text = await cli(['check', `http://127.0.0.1:${port}/`]);
    assertClean('text stdout', text.out);
    assert.match(text.out.toString(), /\\x9b/);
  });

  it('attack: cert --json for a subject with C1, bidi override, ESC and BEL -> \\u escapes, same value; text escaped', async () => {
    const cn = 'a\u009b2J\u202egpj.exe\u001b]0;x\u0007';
    const c = await selfSigned(['localhost'], { commonName: cn });
    const s = await serveTls(c.certPem, c.keyPem);
    closers.push(s.close);
    const caPath = join(dir, 'self.pem');
    writeFileSync(caPath, c.certPem);
    const json = await cli([
      'cert',
      `127.0.0.1:${s.port}`,
      '--ca',
      caPath,
      '--servername',
      'localhost',
      '--json',
    ]);
    assertClean('stdout', json.out);
    assert.match(json.out.toString(), /\\u009b2J\\u202egpj/);
    assert.ok((JSON.parse(json.out.toString()) as { subject: string }).subject.includes('\u009b2J\u202egpj'));
    const text = await cli(['cert', `127.0.0.1:${s.port}`, '--ca', caPath, '--servername', 'localhost']);
    assertClean('text stdout', text.out);
    assert.match(text.out.toString(), /subject: +CN=a\\x9b2J\\u202egpj\.exe\\x1b\]0/);
  });
});

describe('forTerminal and jsonForTerminal (the one escaping function)', () => {
  const table: [string, string, string][] = [
    ['plain ASCII and UTF-8 unchanged', 'app-ü.js', 'app-ü.js'],
    ['ESC, BEL', '\u001b]0;t\u0007', '\\x1b]0;t\\x07'],
    ['CR, LF, TAB', 'a\r\n\tb', 'a\\x0d\\x0a\\x09b'],
    ['DEL and C1 CSI/NEL', '\u007f\u009b\u0085', '\\x7f\\x9b\\x85'],
    ['U+00A0 is not C1', '\u00a0', '\u00a0'],
    ['bidi overrides U+202A-U+202E', '\u202a\u202b\u202c\u202d\u202e', '\\u202a\\u202b\\u202c\\u202d\\u202e'],
    ['isolates U+2066-U+2069', '\u2066\u2067\u2068\u2069', '\\u2066\\u2067\\u2068\\u2069'],
    ['line and paragraph separators', '\u2028\u2029', '\\u2028\\u2029'],
    ['idempotent: an escaped name escapes to itself', '\\x1b[2J', '\\x1b[2J'],
  ];
  for (const [name, input, want] of table) {
    it(`${name}`, () => assert.equal(forTerminal(input), want));
  }

  it('jsonForTerminal: C1, DEL, U+2028/9 and bidi as \\uNNNN; JSON.parse gives the same value', () => {
    const value = { s: 'a\u0085b\u009b\u007f\u2028\u2029\u202e\u2066\u001b', n: 1 };
    const text = jsonForTerminal(value, 2);
    assert.doesNotMatch(text, RAW);
    assert.match(text, /\\u0085b\\u009b\\u007f\\u2028\\u2029\\u202e\\u2066\\u001b/);
    assert.deepEqual(JSON.parse(text), value);
  });
});
