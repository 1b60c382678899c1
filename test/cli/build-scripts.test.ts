// The package builds in `prepack`, not `prepare` (npm 11 warns about `prepare` in a tarball a user
// installs), so `npm ci` in a clone no longer builds dist/: `npm start` builds it when it is missing or
// older than the source (scripts/build-if-stale.mjs), and the test runner when it is missing.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { buildReason } from '../../scripts/build-if-stale.mjs';
import { makeSite, removeSite } from '../helpers/http.js';
import { REPO } from '../helpers/package.js';

const scripts = (
  JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
).scripts;

describe('package.json scripts', () => {
  it('no prepare; prepack builds; start builds a stale dist/ first', () => {
    assert.equal(scripts.prepare, undefined);
    assert.equal(scripts.prepack, 'npm run build');
    // One process (a shell's `exec`, as test/browser/example-site.test.ts runs it, reaches the server).
    assert.match(
      scripts.start!,
      /^"\$\{npm_node_execpath:-node\}" scripts\/build-if-stale\.mjs --run bin\/gatehouse\.js serve --config examples\/gatehouse\.config\.json$/,
    );
    assert.match(scripts.test!, /^npm run build && /);
  });
});

describe('buildReason', () => {
  it('missing, up to date, a source file changed since the build, --missing-only', () => {
    const repo = makeSite({ 'src/a.ts': 'x', 'tsconfig.json': '{}', 'tsconfig.build.json': '{}' });
    try {
      const old = new Date(Date.now() - 60_000);
      for (const f of ['src/a.ts', 'src', 'tsconfig.json', 'tsconfig.build.json'])
        utimesSync(join(repo, f), old, old);
      assert.equal(buildReason(repo), 'dist/ is missing');
      assert.equal(buildReason(repo, { missingOnly: true }), 'dist/ is missing');
      mkdirSync(join(repo, 'dist/cli'), { recursive: true });
      writeFileSync(join(repo, 'dist/cli/main.js'), '');
      assert.equal(buildReason(repo), undefined);
      const later = new Date(Date.now() + 60_000);
      mkdirSync(join(repo, 'src/deep'));
      writeFileSync(join(repo, 'src/deep/b.ts'), 'y');
      utimesSync(join(repo, 'src/deep/b.ts'), later, later);
      assert.equal(buildReason(repo), 'src changed since dist/ was built');
      assert.equal(buildReason(repo, { missingOnly: true }), undefined);
      utimesSync(join(repo, 'src/deep/b.ts'), old, old);
      utimesSync(join(repo, 'src/deep'), old, old);
      utimesSync(join(repo, 'tsconfig.build.json'), later, later);
      assert.equal(buildReason(repo), 'tsconfig.build.json changed since dist/ was built');
    } finally {
      removeSite(repo);
    }
  });
});
