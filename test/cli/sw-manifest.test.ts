// gatehouse sw-manifest as build scripts run it: node bin/gatehouse.js (built dist/), real processes;
// the revisions are checked against the ETags a real Gatehouse sends for the same folder.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { get, makeSite, removeSite, startServer } from '../helpers/http.js';

const BIN = join(import.meta.dirname, '../../bin/gatehouse.js');

function run(args: string[], cwd: string) {
  const r = spawnSync(process.execPath, [BIN, 'sw-manifest', ...args], { cwd, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

type Entry = { url: string; revision: string | null };

const SITE = {
  'dist/index.html': '<!doctype html><h1>home</h1>',
  'dist/about/index.html': '<h1>about</h1>',
  'dist/app.js': 'console.log(1);\n',
  'dist/app.js.br': 'brotli bytes',
  'dist/app.js.gz': 'gzip bytes',
  'dist/app.js.map': '{}',
  'dist/assets/main-3f2a9c1b.js': 'hashed();\n',
  'dist/assets/main.9b8c7d6e.css': 'a{}',
  'dist/a b#c.txt': 'odd name',
  'dist/data.gz': 'a real gzip download, no data sibling',
  'dist/.env': 'SECRET=1',
  'dist/.git/config': '[core]',
  'dist/sw.js': "import '/client/sw.js';",
};

describe('gatehouse sw-manifest', () => {
  it('DIR -> sorted { url, revision }: defaults leave out dotfiles, .br/.gz siblings, maps, sw.js', () => {
    const dir = makeSite(SITE);
    try {
      const r = run(['dist'], dir);
      assert.equal(r.code, 0, r.stderr);
      const m = JSON.parse(r.stdout) as Entry[];
      assert.deepEqual(
        m.map((e) => e.url),
        [
          '/',
          '/a%20b%23c.txt',
          '/about/',
          '/app.js',
          '/assets/main-3f2a9c1b.js',
          '/assets/main.9b8c7d6e.css',
          '/data.gz',
        ],
      );
      const byUrl = new Map(m.map((e) => [e.url, e.revision]));
      assert.equal(byUrl.get('/assets/main-3f2a9c1b.js'), null, 'hashed name: no revision');
      assert.equal(byUrl.get('/assets/main.9b8c7d6e.css'), null, 'hashed name (.hash): no revision');
      assert.match(byUrl.get('/app.js')!, /^"[A-Za-z0-9_-]{27}"$/);
    } finally {
      removeSite(dir);
    }
  });

  it('every revision is the strong ETag gatehouse serve sends for that URL', async () => {
    const dir = makeSite(SITE);
    const server = await startServer(join(dir, 'dist'));
    try {
      const m = JSON.parse(run(['dist'], dir).stdout) as Entry[];
      for (const e of m) {
        const res = await get(server.url, e.url);
        assert.equal(res.status, 200, e.url);
        if (e.revision !== null) assert.equal(res.headers.etag, e.revision, e.url);
      }
    } finally {
      await server.close();
      removeSite(dir);
    }
  });

  it('a changed file -> a changed revision; the others stay', () => {
    const dir = makeSite(SITE);
    try {
      const before = JSON.parse(run(['dist'], dir).stdout) as Entry[];
      writeFileSync(join(dir, 'dist/app.js'), 'console.log(2);\n');
      const after = JSON.parse(run(['dist'], dir).stdout) as Entry[];
      const changed = after.filter((e, i) => e.revision !== before[i]!.revision).map((e) => e.url);
      assert.deepEqual(changed, ['/app.js']);
    } finally {
      removeSite(dir);
    }
  });

  it('--include and --exclude (repeatable): include restricts, exclude wins', () => {
    const dir = makeSite(SITE);
    try {
      const r = run(
        ['dist', '--include', '**/*.js', '--include', '*.css', '--exclude', '/assets/main-*'],
        dir,
      );
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(
        (JSON.parse(r.stdout) as Entry[]).map((e) => e.url),
        ['/app.js', '/assets/main.9b8c7d6e.css'],
        'sw.js stays out even when an include matches it',
      );
    } finally {
      removeSite(dir);
    }
  });

  it('--out FILE inside DIR -> written there, not listed in itself; stdout empty', () => {
    const dir = makeSite(SITE);
    try {
      const r = run(['dist', '--out', 'dist/precache.json'], dir);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, '');
      const m = JSON.parse(readFileSync(join(dir, 'dist/precache.json'), 'utf8')) as Entry[];
      assert.ok(m.some((e) => e.url === '/app.js'));
      const again = run(['dist', '--out', 'dist/precache.json'], dir);
      assert.equal(again.code, 0);
      const m2 = JSON.parse(readFileSync(join(dir, 'dist/precache.json'), 'utf8')) as Entry[];
      assert.ok(!m2.some((e) => e.url === '/precache.json'), 'the manifest does not list itself');
    } finally {
      removeSite(dir);
    }
  });

  it('--out FILE.js -> an ES module whose default export is the list', () => {
    const dir = makeSite(SITE);
    try {
      const r = run(['dist', '--out', 'dist/precache.js'], dir);
      assert.equal(r.code, 0, r.stderr);
      const text = readFileSync(join(dir, 'dist/precache.js'), 'utf8');
      assert.match(text, /^export default \[/);
      assert.ok(text.endsWith('];\n'));
      const list = JSON.parse(text.slice('export default '.length, -2)) as Entry[];
      assert.deepEqual(list, JSON.parse(run(['dist', '--exclude', '/precache.js'], dir).stdout));
    } finally {
      removeSite(dir);
    }
  });

  const usage: [string, string[], RegExp][] = [
    ['no DIR -> 2', [], /expected one DIR/],
    ['two DIRs -> 2', ['dist', 'dist'], /expected one DIR/],
    ['DIR missing -> 2', ['nowhere'], /not a directory: nowhere/],
    ['unknown flag -> 2', ['dist', '--bogus'], /bogus/],
    ['empty glob -> 2', ['dist', '--include', ''], /glob cannot be empty/],
  ];
  for (const [name, args, re] of usage)
    it(name, () => {
      const dir = makeSite({ 'dist/a.js': 'a' });
      try {
        const r = run(args, dir);
        assert.equal(r.code, 2);
        assert.match(r.stderr, re);
      } finally {
        removeSite(dir);
      }
    });

  it('--help -> usage on stdout, 0', () => {
    const r = run(['--help'], import.meta.dirname);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /Usage: gatehouse sw-manifest DIR/);
  });
});
