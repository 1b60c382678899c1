// The CLI as users run it: node bin/gatehouse.js (built dist/), real processes, real sockets.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { get, makeSite, removeSite } from '../helpers/http.js';

const BIN = join(import.meta.dirname, '../../bin/gatehouse.js');

function startCli(args: string[], cwd?: string) {
  const child = spawn(process.execPath, [BIN, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const url = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)\n/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
  });
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, url, exit, output: () => out, errors: () => err };
}

describe('gatehouse serve', () => {
  it('prints the listening line, serves, and exits 0 on SIGTERM after draining', async () => {
    const dir = makeSite({ 'index.html': '<h1>hi</h1>' });
    const p = startCli(['serve', dir, '--port', '0', '--log', 'json']);
    try {
      const url = await p.url;
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
      const r = await get(url, '/');
      assert.equal(r.status, 200);
      assert.equal(r.text, '<h1>hi</h1>');
      p.child.kill('SIGTERM');
      assert.equal(await p.exit, 0);
      // one JSON access-log line for the request
      const lines = p
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'));
      assert.ok(
        lines.some((l) => JSON.parse(l).url === '/' && JSON.parse(l).status === 200),
        p.output(),
      );
    } finally {
      p.child.kill('SIGKILL');
      removeSite(dir);
    }
  });

  it('ROOT is the default command; SIGINT also exits 0', async () => {
    const dir = makeSite({ 'a.txt': 'a' });
    const p = startCli([dir, '--port', '0', '--log', 'off']);
    try {
      assert.equal((await get(await p.url, '/a.txt')).text, 'a');
      p.child.kill('SIGINT');
      assert.equal(await p.exit, 0);
    } finally {
      p.child.kill('SIGKILL');
      removeSite(dir);
    }
  });

  it('reads gatehouse.config.json from the working directory; --spa flag', async () => {
    const dir = makeSite({ 'www/index.html': 'app' });
    writeFileSync(
      join(dir, 'gatehouse.config.json'),
      JSON.stringify({ root: 'www', log: { format: 'off' } }),
    );
    const p = startCli(['--port', '0', '--spa'], dir);
    try {
      const r = await get(await p.url, '/deep/link', { headers: { accept: 'text/html' } });
      assert.equal(r.text, 'app');
    } finally {
      p.child.kill('SIGTERM');
      await p.exit;
      removeSite(dir);
    }
  });

  const usage: [string, string[], RegExp][] = [
    ['unknown flag', ['serve', '--nope'], /--nope/],
    ['bad port', ['serve', '--port', 'abc'], /--port/],
    ['bad log format', ['serve', '--log', 'loud'], /--log/],
    ['missing root', ['serve', '/definitely/not/here'], /root: not a directory/],
    ['bad config key', ['serve', '--config', 'CONFIG'], /unknown key bogus/],
  ];
  for (const [name, args, msg] of usage) {
    it(`${name} -> exit 2 with a message naming it`, () => {
      const dir = makeSite({ 'c.json': JSON.stringify({ bogus: true }) });
      try {
        const r = spawnSync(
          process.execPath,
          [BIN, ...args.map((a) => (a === 'CONFIG' ? join(dir, 'c.json') : a))],
          {
            encoding: 'utf8',
            cwd: dir,
          },
        );
        assert.equal(r.status, 2, r.stderr);
        assert.match(r.stderr, msg);
      } finally {
        removeSite(dir);
      }
    });
  }

  it('a disk cache folder that cannot be made -> exit 1 naming it, at once (no hang)', () => {
    const dir = makeSite({ 'index.html': 'x', 'a-file': 'not a folder' });
    try {
      symlinkSync(join(dir, 'missing-target'), join(dir, 'dangling'));
      for (const cacheDir of [join(dir, 'dangling', 'cache'), join(dir, 'a-file', 'cache')]) {
        const config = join(dir, 'c.json');
        writeFileSync(
          config,
          JSON.stringify({
            proxy: [
              {
                prefix: '/api',
                upstream: 'http://127.0.0.1:9',
                cache: { enabled: true, store: 'disk', dir: cacheDir },
              },
            ],
          }),
        );
        const r = spawnSync(process.execPath, [BIN, 'serve', dir, '--port', '0', '--config', config], {
          encoding: 'utf8',
          timeout: 10_000,
        });
        assert.equal(r.status, 1, `${cacheDir}: ${r.stderr}`);
        assert.ok(r.stderr.includes(`the disk cache store in ${cacheDir} cannot be opened`), r.stderr);
        assert.doesNotMatch(r.stdout, /listening on/);
      }
    } finally {
      removeSite(dir);
    }
  });

  it('--help and --version exit 0', () => {
    assert.match(
      spawnSync(process.execPath, [BIN, '--help'], { encoding: 'utf8' }).stdout,
      /Usage: gatehouse/,
    );
    const v = spawnSync(process.execPath, [BIN, '--version'], { encoding: 'utf8' });
    assert.equal(v.status, 0);
    assert.match(v.stdout, /^\d+\.\d+\.\d+\n$/);
  });

  it('a port in use -> exit 1', async () => {
    const dir = makeSite({ 'a.txt': 'a' });
    const p = startCli([dir, '--port', '0', '--log', 'off']);
    try {
      const port = new URL(await p.url).port;
      const r = spawnSync(process.execPath, [BIN, dir, '--port', port, '--log', 'off'], { encoding: 'utf8' });
      assert.equal(r.status, 1);
      assert.match(r.stderr, /EADDRINUSE/);
    } finally {
      p.child.kill('SIGTERM');
      await p.exit;
      removeSite(dir);
    }
  });
});
