// docs/deploy.md is what users copy: its gatehouse.config.json must load, its haproxy.cfg must pass
// Debian's `haproxy -c` and start under a descriptor limit of 20,000 (service names swapped for
// loopback addresses), and the compose file's command line, run as written, must drain on SIGTERM
// (issue 26 §3: under `npx` the signal reached npm and the server never drained).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import { needsBinary } from '../helpers/ci.js';
import { HAPROXY } from '../helpers/haproxy.js';
import { get } from '../helpers/http.js';
import { origin } from '../helpers/origin.js';
import { REPO_ROOT } from '../helpers/page-server.js';
import { freeLoopbackPort, REDIS_SERVER, startRedis } from '../helpers/redis.js';
import { waitUntil } from '../helpers/wait.js';

const DOC = readFileSync(join(REPO_ROOT, 'docs/deploy.md'), 'utf8');

function block(lang: string, after: string): string {
  const start = DOC.indexOf(after);
  assert.ok(start >= 0, after);
  const open = DOC.indexOf(`\`\`\`${lang}\n`, start);
  const close = DOC.indexOf('\n```', open + 4);
  return DOC.slice(open + lang.length + 4, close + 1);
}

describe('docs/deploy.md', () => {
  it('its gatehouse.config.json loads (every key known, Redis features with the top-level redis)', () => {
    const c = parseConfig(JSON.parse(block('json', '## gatehouse.config.json')));
    assert.equal(c.redis?.url, 'redis://redis:6379');
    assert.equal(c.proxy[0]?.cache?.store, 'redis');
  });

  it('its haproxy.cfg passes haproxy -c', needsBinary(HAPROXY), () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-deploy-doc-'));
    try {
      const cfg = block('', '## haproxy.cfg')
        .replace(/gatehouse\d:8080/g, '127.0.0.1:8080')
        .replace('bind :80', 'bind 127.0.0.1:18080');
      writeFileSync(join(dir, 'haproxy.cfg'), cfg);
      const r = spawnSync(HAPROXY, ['-c', '-f', join(dir, 'haproxy.cfg')], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stdout + r.stderr);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it(
    'its haproxy.cfg starts under a descriptor limit of 20,000 (maxconn 20000 did not)',
    needsBinary(HAPROXY),
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'gatehouse-deploy-doc-'));
      const port = await freeLoopbackPort();
      const cfg = block('', '## haproxy.cfg')
        .replace(/gatehouse\d:8080/g, '127.0.0.1:9')
        .replace('bind :80', `bind 127.0.0.1:${port}`);
      writeFileSync(join(dir, 'haproxy.cfg'), cfg);
      // The shell lowers the soft and hard limit to 20,000, then becomes haproxy.
      const child = spawn('sh', ['-c', `ulimit -n 20000 && exec ${HAPROXY} -f haproxy.cfg`], {
        cwd: dir,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let err = '';
      child.stderr.on('data', (d) => (err += d));
      let exited: number | null | undefined;
      const gone = new Promise<void>((resolve) =>
        child.on('exit', (code) => {
          exited = code;
          resolve();
        }),
      );
      try {
        // Started when its frontend accepts a connection; an ALERT exits it before that.
        await waitUntil('haproxy listens or exits', async () => {
          if (exited !== undefined) return true;
          return new Promise<boolean>((resolve) => {
            const s = connect(port, '127.0.0.1', () => {
              s.destroy();
              resolve(true);
            });
            s.on('error', () => resolve(false));
          });
        });
        assert.equal(exited, undefined, `haproxy exited ${exited}: ${err}`);
      } finally {
        child.kill('SIGTERM');
        await gone;
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  it('the /readyz comment promises a 503 on a Redis outage only where the sample sets health.requireRedis', () => {
    const config = parseConfig(JSON.parse(block('json', '## gatehouse.config.json')));
    const comment = block('', '## haproxy.cfg')
      .split('\n')
      .filter((l) => l.trim().startsWith('#'))
      .map((l) => l.trim().replace(/^#\s*/, ''))
      .join(' ');
    // The promise itself: the sentence that starts "/readyz answers 503", up to its full stop.
    const promise = /\/readyz answers 503[^.]*\./.exec(comment)?.[0] ?? '';
    assert.match(promise, /while an instance drains/);
    if (config.health?.requireRedis !== true)
      assert.doesNotMatch(promise, /Redis/, 'the sample does not set requireRedis');
  });

  it(
    'the compose command line, run as written, lets a request in flight finish on SIGTERM and exits 0',
    needsBinary(REDIS_SERVER),
    async (t) => {
      assert.ok(existsSync(join(REPO_ROOT, 'dist/cli/main.js')), 'dist/ is missing: run npm run build first');
      const command = /^\s+command: (\["node".*\])$/m.exec(block('yaml', '## docker-compose.yml'))?.[1];
      assert.ok(command, 'the gatehouse service runs node directly');
      const argv = JSON.parse(command) as string[];
      // working_dir /srv: the app folder, with the package installed as the Dockerfile installs it.
      const dir = mkdtempSync(join(tmpdir(), 'gatehouse-deploy-drain-'));
      const app = join(dir, 'srv');
      mkdirSync(join(app, 'node_modules'), { recursive: true });
      symlinkSync(REPO_ROOT, join(app, 'node_modules/gatehouse-http'), 'dir');
      mkdirSync(join(app, 'site'));
      writeFileSync(join(app, 'site/index.html'), '<!doctype html><title>ok</title>\n');
      let release = () => {};
      const upstream = await origin({
        '/api/slow': (_req, res) => {
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.write('slow ');
          release = () => res.end('done');
        },
      });
      const redis = await startRedis();
      // The doc's config, its service names swapped for loopback ones and a free port.
      const config = JSON.parse(block('json', '## gatehouse.config.json'));
      config.root = join(app, 'site');
      config.listen = { host: '127.0.0.1', port: 0 };
      config.redis.url = redis.url;
      config.proxy[0].upstream = upstream.url;
      config.proxy[0].stripPrefix = false;
      const configPath = join(app, 'gatehouse.config.json');
      writeFileSync(configPath, JSON.stringify(config));
      const args = argv.slice(1).map((a) => (a === '/srv/gatehouse.config.json' ? configPath : a));
      assert.equal(argv[0], 'node');
      t.diagnostic(`$ ${argv.join(' ')}   (cwd ${app}, config ${configPath})`);
      const child = spawn(process.execPath, args, { cwd: app, stdio: ['ignore', 'pipe', 'pipe'] });
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      let out = '';
      let err = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (err += d));
      try {
        const url = await waitUntil('gatehouse listens', () => {
          assert.equal(child.exitCode, null, `gatehouse exited ${child.exitCode}: ${err}`);
          return /listening on (http:\/\/\S+)\n/.exec(out)?.[1];
        });
        const inFlight = get(url, '/api/slow');
        await waitUntil('the slow request reached the upstream', () => upstream.count('/api/slow') === 1);
        child.kill('SIGTERM');
        await waitUntil('the server drains', () => out.includes('SIGTERM: draining'));
        assert.equal(child.exitCode, null, 'still running while the request is in flight');
        release();
        const res = await inFlight;
        assert.equal(res.status, 200);
        assert.equal(res.text, 'slow done');
        assert.equal(await exited, 0, err);
      } finally {
        child.kill('SIGKILL');
        await exited;
        await upstream.close();
        await redis.close();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
