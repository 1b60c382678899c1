// gatehouse serve as a new user meets it (issue 26 §2): a closed stdout never stops it (EPIPE dropped
// and counted), and what it loaded is printed at start. Real processes on 127.0.0.1 (bin/gatehouse.js).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { get, makeSite, removeSite } from '../helpers/http.js';

const BIN = join(import.meta.dirname, '../../bin/gatehouse.js');

describe('gatehouse serve: a closed stdout', () => {
  for (const format of ['pretty', 'json'] as const) {
    it(`--log ${format}: the reader of stdout goes away -> the server keeps serving, the dropped writes are counted`, async () => {
      const dir = makeSite({ 'a.txt': 'hello' });
      const config = join(dir, 'gatehouse.config.json');
      writeFileSync(config, JSON.stringify({ metrics: {}, log: { format } }));
      const child = spawn(process.execPath, [BIN, 'serve', dir, '--port', '0', '--config', config], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let err = '';
      child.stderr.on('data', (d) => (err += d));
      try {
        const url = await new Promise<string>((resolve, reject) => {
          let out = '';
          child.stdout.on('data', (d) => {
            out += d;
            const m = /listening on (http:\/\/\S+)\n/.exec(out);
            if (m) resolve(m[1]!);
          });
          child.once('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
        });
        // The log reader is gone: every later write to the pipe fails with EPIPE.
        child.stdout.destroy();
        const statuses: number[] = [];
        for (let i = 0; i < 20; i++) statuses.push((await get(url, '/a.txt')).status);
        assert.deepEqual(statuses, Array(20).fill(200));
        assert.equal(child.exitCode, null, `the server exited: ${err}`);
        const metrics = await get(url, '/metrics');
        const dropped = Number(/^gatehouse_log_dropped_writes_total\S* (\d+)$/m.exec(metrics.text)?.[1]);
        assert.ok(dropped > 0, `dropped writes counted: ${dropped}`);
        assert.equal(err, '', 'nothing on stderr');
      } finally {
        child.kill('SIGTERM');
        removeSite(dir);
      }
    });
  }
});
