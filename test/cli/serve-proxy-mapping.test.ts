// gatehouse serve prints each proxy mapping at start with the path its upstream receives
// (`/api/* -> http://127.0.0.1:3000/*, prefix stripped`): checked against what a real upstream on
// 127.0.0.1 gets through the running CLI (bin/gatehouse.js, needs dist/).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { get, makeSite, removeSite } from '../helpers/http.js';

const BIN = join(import.meta.dirname, '../../bin/gatehouse.js');

describe('gatehouse serve: each proxy mapping at start, as the upstream receives it', () => {
  it('--proxy and a config route with stripPrefix false: the printed mapping is the path the upstream got', async () => {
    const seen: string[] = [];
    const up = createHttpServer((req, res) => {
      seen.push(req.url!);
      res.end('ok');
    });
    await new Promise<void>((resolve) => up.listen(0, '127.0.0.1', resolve));
    const upstream = `http://127.0.0.1:${(up.address() as AddressInfo).port}`;
    const dir = makeSite({ 'a.txt': 'a' });
    const config = join(dir, 'gatehouse.config.json');
    writeFileSync(
      config,
      JSON.stringify({
        proxy: [
          { prefix: '/keep', upstream: `${upstream}/base`, stripPrefix: false },
          { prefix: '/x\u001b[2J', upstream },
        ],
      }),
    );
    const child = spawn(
      process.execPath,
      [BIN, 'serve', dir, '--port', '0', '--config', config, '--proxy', `/api=${upstream}`],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    try {
      const out = await new Promise<string>((resolve, reject) => {
        let text = '';
        child.stdout.on('data', (d) => {
          text += d;
          if (/listening on \S+\n/.test(text)) resolve(text);
        });
        child.once('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
      });
      const lines = out.split('\n');
      // --proxy replaces the file's proxy list (arrays from flags replace, mergeConfig).
      assert.deepEqual(lines.slice(2, 3), [`proxy /api/* -> ${upstream}/*, prefix stripped`]);
      const url = /listening on (\S+)/.exec(out)![1]!;
      assert.equal((await get(url, '/api/items/1?q=2')).status, 200);
      assert.deepEqual(seen, ['/items/1?q=2']);
      assert.equal(err, '');
    } finally {
      child.kill('SIGTERM');
    }
    // The file's own routes: prefix kept, behind the upstream's path; an ESC in a prefix printed as \x1b.
    const kept = spawn(process.execPath, [BIN, 'serve', dir, '--port', '0', '--config', config], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const out = await new Promise<string>((resolve, reject) => {
        let text = '';
        kept.stdout.on('data', (d) => {
          text += d;
          if (/listening on \S+\n/.test(text)) resolve(text);
        });
        kept.once('exit', (code) => reject(new Error(`exited ${code}`)));
      });
      assert.deepEqual(out.split('\n').slice(2, 4), [
        `proxy /keep/* -> ${upstream}/base/keep/*, prefix kept`,
        `proxy /x\\x1b[2J/* -> ${upstream}/*, prefix stripped`,
      ]);
      assert.ok(!out.includes('\u001b'), 'no raw ESC on stdout');
      const url = /listening on (\S+)/.exec(out)![1]!;
      assert.equal((await get(url, '/keep/items/1')).status, 200);
      assert.deepEqual(seen.slice(1), ['/base/keep/items/1']);
    } finally {
      kept.kill('SIGTERM');
      await new Promise<void>((resolve) => up.close(() => resolve()));
      removeSite(dir);
    }
  });
});
