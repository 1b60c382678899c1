// Attack: a build folder with thousands of files against the CLI's file descriptors (issue 25 §5).
// sw-manifest opened every file at once: 3,000 files failed with EMFILE under `ulimit -n 1024`. Run as
// users run it (node bin/gatehouse.js, built dist/) under a low limit of 256 descriptors, over a few
// thousand real files; precompress (two files at a time) and hash (one at a time) are run the same way.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

const BIN = join(import.meta.dirname, '../../bin/gatehouse.js');
const FILES = 3000;
const LIMIT = 256;
const dir = mkdtempSync(join(tmpdir(), 'gatehouse-fds-'));
const site = join(dir, 'site');

/** The CLI under `ulimit -n LIMIT` (a shell, so the limit is the child's own). */
function underLimit(args: string[]) {
  const quoted = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const r = spawnSync('bash', ['-c', `ulimit -n ${LIMIT} && exec ${quoted}`], {
    cwd: dir,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

before(() => {
  // Folders of 100 files, as a build's assets/ and chunks/ hold them.
  for (let d = 0; d < FILES / 100; d++) {
    const sub = join(site, `chunk-${d}`);
    mkdirSync(sub, { recursive: true });
    for (let f = 0; f < 100; f++)
      writeFileSync(join(sub, `part-${f}.js`), `export const n = ${d * 100 + f};\n`);
  }
});
after(() => rmSync(dir, { recursive: true, force: true }));

describe('attack: thousands of files against a low descriptor limit', () => {
  it(`attack: sw-manifest over ${FILES} files under ulimit -n ${LIMIT} -> exit 0, every file listed with its revision`, () => {
    const check = spawnSync('bash', ['-c', `ulimit -n ${LIMIT} && ulimit -n`], { encoding: 'utf8' });
    assert.equal(check.stdout.trim(), String(LIMIT), 'the limit applies to the child');
    const r = underLimit(['sw-manifest', site]);
    assert.equal(r.code, 0, r.stderr.slice(0, 500));
    const list = JSON.parse(r.stdout) as { url: string; revision: string | null }[];
    assert.equal(list.length, FILES, 'every file was opened and hashed');
    assert.ok(list.every((e) => typeof e.revision === 'string' && /^"[\w-]+"$/.test(e.revision)));
    assert.equal(new Set(list.map((e) => e.revision)).size, FILES, 'distinct contents, distinct revisions');
  });

  it(`hash of ${FILES} files in one call under ulimit -n ${LIMIT} -> exit 0, one line each`, () => {
    const files = Array.from(
      { length: FILES },
      (_, i) => `site/chunk-${Math.floor(i / 100)}/part-${i % 100}.js`,
    );
    const r = underLimit(['hash', '--root', 'site', ...files]);
    assert.equal(r.code, 0, r.stderr.slice(0, 500));
    assert.equal(r.stdout.trim().split('\n').length, FILES);
  });

  it(`precompress --dry-run over ${FILES} files under ulimit -n ${LIMIT} -> exit 0, every file compressed`, () => {
    // --min-bytes 0: the files are small; gzip only keeps the run short (brotli at quality 11 is slow).
    const r = underLimit(['precompress', site, '--min-bytes', '0', '--no-brotli', '--dry-run']);
    assert.equal(r.code, 0, r.stderr.slice(0, 500));
    // Tiny files do not shrink: each was read and compressed, and counted as not worth it.
    assert.match(
      r.stdout,
      new RegExp(`^would precompress 0 files \\(0 skipped, ${FILES} not worth it\\)`, 'm'),
    );
  });
});
