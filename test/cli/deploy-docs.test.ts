// docs/deploy.md is what users copy: its gatehouse.config.json must load, and its haproxy.cfg must
// pass Debian's `haproxy -c` (service names swapped for loopback addresses).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import { needsBinary } from '../helpers/ci.js';
import { HAPROXY } from '../helpers/haproxy.js';
import { REPO_ROOT } from '../helpers/page-server.js';

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
});
