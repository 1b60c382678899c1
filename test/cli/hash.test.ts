// gatehouse hash as build scripts run it: node bin/gatehouse.js (built dist/), real processes.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { assetUrl } from '../../src/server/static/asset-url.js';
import { get, makeSite, removeSite, startServer } from '../helpers/http.js';

const BIN = join(import.meta.dirname, '../../bin/gatehouse.js');
const JS = 'export const answer = 42;\n';

function v10(body: string): string {
  return createHash('sha256').update(body).digest('base64url').slice(0, 10);
}

function run(args: string[], cwd: string) {
  const r = spawnSync(process.execPath, [BIN, 'hash', ...args], { cwd, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('gatehouse hash', () => {
  it('--root dist dist/assets/app.js prints /assets/app.js?v=<10 characters>, as assetUrl does', async () => {
    const dir = makeSite({ 'dist/assets/app.js': JS, 'dist/a b.css': 'a{}' });
    try {
      const r = run(['--root', 'dist', 'dist/assets/app.js', 'dist/a b.css'], dir);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stderr, '');
      assert.equal(r.stdout, `/assets/app.js?v=${v10(JS)}\n/a%20b.css?v=${v10('a{}')}\n`);
      assert.equal(r.stdout.split('\n')[0], await assetUrl(join(dir, 'dist'), 'assets/app.js'));
    } finally {
      removeSite(dir);
    }
  });

  it('without --root the current directory is the root', () => {
    const dir = makeSite({ 'assets/app.js': JS });
    try {
      const r = run(['assets/app.js'], dir);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, `/assets/app.js?v=${v10(JS)}\n`);
    } finally {
      removeSite(dir);
    }
  });

  it('--param ver prints ?ver=', () => {
    const dir = makeSite({ 'app.js': JS });
    try {
      assert.equal(run(['--param', 'ver', 'app.js'], dir).stdout, `/app.js?ver=${v10(JS)}\n`);
    } finally {
      removeSite(dir);
    }
  });

  it('a missing file, a file outside --root and a dotfile: one stderr line each, the others printed, exit 1', () => {
    const dir = makeSite({ 'dist/app.js': JS, 'dist/.env': 'X=1', 'other.js': JS });
    try {
      const r = run(['--root', 'dist', 'dist/missing.js', 'dist/app.js', 'other.js', 'dist/.env'], dir);
      assert.equal(r.code, 1);
      assert.equal(r.stdout, `/app.js?v=${v10(JS)}\n`);
      const lines = r.stderr.trimEnd().split('\n');
      assert.equal(lines.length, 3, r.stderr);
      assert.match(lines[0]!, /^gatehouse hash: dist\/missing\.js: no such file/);
      assert.match(lines[1]!, /^gatehouse hash: other\.js: not under the root/);
      assert.match(lines[2]!, /^gatehouse hash: dist\/\.env: a dotfile/);
    } finally {
      removeSite(dir);
    }
  });

  it('usage errors exit 2: no FILE, an unknown flag, a --root that is not a folder, a bad --param', () => {
    const dir = makeSite({ 'app.js': JS });
    try {
      for (const args of [
        [],
        ['--nope', 'app.js'],
        ['--root', 'app.js', 'app.js'],
        ['--param', 'a&b', 'app.js'],
      ]) {
        const r = run(args, dir);
        assert.equal(r.code, 2, args.join(' '));
        assert.equal(r.stdout, '');
        assert.match(r.stderr, /^gatehouse hash: /);
      }
    } finally {
      removeSite(dir);
    }
  });

  it('--help and gatehouse --help document it', () => {
    const dir = makeSite({});
    try {
      const r = run(['--help'], dir);
      assert.equal(r.code, 0);
      assert.match(r.stdout, /^Usage: gatehouse hash \[--root DIR\]/);
      const top = spawnSync(process.execPath, [BIN, '--help'], { encoding: 'utf8' });
      assert.match(top.stdout, /gatehouse hash \[--root DIR\] \[--param NAME\] FILE\.\.\./);
    } finally {
      removeSite(dir);
    }
  });

  it('the printed URL is pinned for a year by the server', async () => {
    const dir = makeSite({ 'assets/app.js': JS });
    const s = await startServer(dir);
    try {
      const url = run(['assets/app.js'], dir).stdout.trim();
      const r = await get(s.url, url);
      assert.equal(r.status, 200);
      assert.equal(r.headers['cache-control'], 'public, max-age=31536000, immutable');
    } finally {
      await s.close();
      removeSite(dir);
    }
  });
});
