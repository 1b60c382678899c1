// Hash manifests (src/server/static/hash-manifest.ts): parsing is table-tested; reading and writing
// against a real temp folder.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { nodeFiles } from '../../../src/server/files/node.js';
import {
  entryFor,
  entryMatches,
  formatManifest,
  MANIFEST_NAME,
  MAX_MANIFEST_BYTES,
  parseManifest,
  readManifest,
  updateManifest,
} from '../../../src/server/static/hash-manifest.js';

const HASH = 'abcdefghijklmnopqrstuvwxyz_';
const GOOD = { ino: 7, size: 1024, mtimeMs: 1700000000000.5, ctimeMs: 1700000000001.25, hash: HASH };
const doc = (files: unknown, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ format: 'gatehouse-hashes', version: 1, files, ...extra });

describe('parseManifest', () => {
  const cases: [
    string,
    string,
    { ok: false; reason: RegExp } | { ok: true; names: string[]; skipped: number },
  ][] = [
    ['a good entry', doc({ 'a.bin': GOOD }), { ok: true, names: ['a.bin'], skipped: 0 }],
    ['empty files', doc({}), { ok: true, names: [], skipped: 0 }],
    ['not JSON', '{"format": "gatehouse-hashes", ', { ok: false, reason: /not JSON/ }],
    ['an array', '[]', { ok: false, reason: /not an object/ }],
    ['null', 'null', { ok: false, reason: /not an object/ }],
    ['another format', doc({}, { format: 'x' }), { ok: false, reason: /not a version 1/ }],
    ['version 2', doc({}, { version: 2 }), { ok: false, reason: /not a version 1/ }],
    ['files an array', doc([GOOD]), { ok: false, reason: /"files" is not an object/ }],
    ['size a string', doc({ 'a.bin': { ...GOOD, size: '1024' } }), { ok: true, names: [], skipped: 1 }],
    ['ino negative', doc({ 'a.bin': { ...GOOD, ino: -1 } }), { ok: true, names: [], skipped: 1 }],
    ['mtime missing', doc({ 'a.bin': { ...GOOD, mtimeMs: undefined } }), { ok: true, names: [], skipped: 1 }],
    [
      'hash with a quote and CR LF',
      doc({ 'a.bin': { ...GOOD, hash: 'abc"\r\nSet-Cookie: x=1aaaaaa' } }),
      { ok: true, names: [], skipped: 1 },
    ],
    ['hash a number', doc({ 'a.bin': { ...GOOD, hash: 42 } }), { ok: true, names: [], skipped: 1 }],
    ['entry null', doc({ 'a.bin': null }), { ok: true, names: [], skipped: 1 }],
    ['name ../x', doc({ '../x': GOOD }), { ok: true, names: [], skipped: 1 }],
    ['name with a slash', doc({ 'sub/x': GOOD }), { ok: true, names: [], skipped: 1 }],
    ['name with a backslash', doc({ 'sub\\x': GOOD }), { ok: true, names: [], skipped: 1 }],
    ['name ..', doc({ '..': GOOD }), { ok: true, names: [], skipped: 1 }],
    ['name with NUL', doc({ 'a\u0000b': GOOD }), { ok: true, names: [], skipped: 1 }],
    [
      '__proto__ is just a name',
      `{"format":"gatehouse-hashes","version":1,"files":{"__proto__":${JSON.stringify(GOOD)}}}`,
      { ok: true, names: ['__proto__'], skipped: 0 },
    ],
    [
      'good and bad together',
      doc({ 'a.bin': GOOD, 'b.bin': { ...GOOD, hash: 'short' } }),
      { ok: true, names: ['a.bin'], skipped: 1 },
    ],
  ];
  for (const [name, text, want] of cases) {
    it(name, () => {
      const r = parseManifest(text);
      if (!want.ok) {
        assert.equal(r.ok, false);
        assert.match((r as { reason: string }).reason, want.reason);
        return;
      }
      assert.ok(r.ok);
      assert.deepEqual([...r.entries.keys()], want.names);
      assert.equal(r.skipped, want.skipped);
      assert.equal(Object.getPrototypeOf({}), Object.prototype);
    });
  }

  it('formatManifest round-trips (a __proto__ name too)', () => {
    const entries = new Map([
      ['b.bin', GOOD],
      ['__proto__', GOOD],
    ]);
    const r = parseManifest(formatManifest(entries));
    assert.ok(r.ok);
    assert.deepEqual(new Map(r.entries), entries);
  });
});

describe('manifest files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-manifest-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('entryMatches needs inode, size, mtime and ctime', () => {
    writeFileSync(join(dir, 'f'), 'x');
    const st = statSync(join(dir, 'f'));
    const e = entryFor(st, HASH);
    assert.equal(entryMatches(e, st), true);
    for (const k of ['ino', 'size', 'mtimeMs', 'ctimeMs'] as const)
      assert.equal(entryMatches({ ...e, [k]: e[k] + 1 }, st), false, k);
  });

  it('absent -> absent; larger than the bound -> ignored without parsing', async () => {
    const d = mkdtempSync(join(dir, 'a-'));
    assert.deepEqual(await readManifest(nodeFiles, d), { kind: 'absent' });
    writeFileSync(join(d, MANIFEST_NAME), Buffer.alloc(MAX_MANIFEST_BYTES + 1, 0x20));
    const r = await readManifest(nodeFiles, d);
    assert.equal(r.kind, 'ignored');
    assert.match((r as { reason: string }).reason, /larger than/);
  });

  it('updateManifest merges, drops names gone from the folder, and queues concurrent writes', async () => {
    const d = mkdtempSync(join(dir, 'u-'));
    for (const n of ['a', 'b', 'c']) writeFileSync(join(d, n), n);
    const e = (n: string) => entryFor(statSync(join(d, n)), HASH);
    await Promise.all([
      updateManifest(nodeFiles, d, new Map([['a', e('a')]])),
      updateManifest(nodeFiles, d, new Map([['b', e('b')]])),
      updateManifest(nodeFiles, d, new Map([['ghost', e('c')]])),
    ]);
    rmSync(join(d, 'a'));
    await updateManifest(nodeFiles, d, new Map([['c', e('c')]]));
    const r = parseManifest(readFileSync(join(d, MANIFEST_NAME), 'utf8'));
    assert.ok(r.ok);
    assert.deepEqual([...r.entries.keys()].sort(), ['b', 'c']);
  });
});
