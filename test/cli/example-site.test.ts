// The example site that `npm start` serves (examples/site): the committed build is exactly what
// scripts/make-example-site.mjs makes, and its /client/*.js is today's dist/client, so the copy cannot go
// stale. (test/browser/example-site.test.ts loads it in Chromium.) npm test builds first; run alone, build
// first (npm run build).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT } from '../helpers/page-server.js';

const SITE = join(REPO_ROOT, 'examples/site');

/** Every file under `dir` (dotfolders included), relative, sorted. */
function listFiles(dir: string, base = dir): string[] {
  return readdirSync(dir)
    .flatMap((name) => {
      const abs = join(dir, name);
      return statSync(abs).isDirectory() ? listFiles(abs, base) : [relative(base, abs)];
    })
    .sort();
}

describe('examples/site is the generator output', () => {
  it('client/*.js are byte-for-byte the built dist/client/*.js', () => {
    const dist = join(REPO_ROOT, 'dist/client');
    const built = readdirSync(dist)
      .filter((f) => f.endsWith('.js'))
      .sort();
    assert.deepEqual(readdirSync(join(SITE, 'client')).sort(), built);
    for (const f of built) {
      assert.ok(
        readFileSync(join(SITE, 'client', f)).equals(readFileSync(join(dist, f))),
        `examples/site/client/${f} differs from dist/client/${f}: run npm run build && node scripts/make-example-site.mjs`,
      );
    }
  });

  it('running scripts/make-example-site.mjs again gives the committed files, byte for byte', () => {
    const out = mkdtempSync(join(tmpdir(), 'gatehouse-example-site-'));
    try {
      // A copy of the site, so the generator finds the pinned font and its licence there (as in a clone).
      cpSync(SITE, out, { recursive: true });
      const r = spawnSync(
        process.execPath,
        [join(REPO_ROOT, 'scripts/make-example-site.mjs'), '--out', out],
        {
          encoding: 'utf8',
        },
      );
      assert.equal(r.status, 0, r.stderr);
      assert.deepEqual(listFiles(out), listFiles(SITE));
      for (const f of listFiles(SITE)) {
        assert.ok(
          readFileSync(join(out, f)).equals(readFileSync(join(SITE, f))),
          `examples/site/${f} differs from the generator's output: run npm run build && node scripts/make-example-site.mjs`,
        );
      }
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
