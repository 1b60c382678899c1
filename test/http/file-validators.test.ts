import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type HashPlan,
  type HashPlanInput,
  isContentHash,
  mayHaveServedWeak,
  planContentHash,
  weakFileEtag,
} from '../../src/http/file-validators.js';

const MiB = 1024 * 1024;
const BASE: HashPlanInput = {
  etagMode: 'strong',
  inMemory: false,
  known: false,
  sizeBytes: 100 * MiB,
  inlineMaxBytes: 4 * MiB,
};

describe('planContentHash: where a file version strong ETag comes from', () => {
  const cases: [string, Partial<HashPlanInput>, HashPlan, boolean][] = [
    ['weak mode -> W/"size-mtime", never a hash', { etagMode: 'weak' }, 'weak', false],
    ['weak mode, in memory -> still weak', { etagMode: 'weak', inMemory: true }, 'weak', false],
    ['bytes in memory -> hash them now', { inMemory: true, sizeBytes: 1024 }, 'memory', false],
    ['in memory beats a known hash', { inMemory: true, known: true, sizeBytes: 1024 }, 'memory', false],
    ['large, hash known (manifest or earlier) -> strong at once', { known: true }, 'known', true],
    [
      'streamed, up to the bound -> hashed before the first response',
      { sizeBytes: 4 * MiB },
      'inline',
      false,
    ],
    ['streamed, one byte above the bound -> background', { sizeBytes: 4 * MiB + 1 }, 'background', true],
    ['1 GB, nothing known -> background', { sizeBytes: 1024 * MiB }, 'background', true],
    ['bound 0: every streamed file -> background', { inlineMaxBytes: 0, sizeBytes: 1 }, 'background', true],
    ['empty file, bound 0 -> inline (nothing to read)', { inlineMaxBytes: 0, sizeBytes: 0 }, 'inline', false],
  ];
  for (const [name, over, plan, alias] of cases) {
    it(name, () => {
      const input = { ...BASE, ...over };
      assert.equal(planContentHash(input), plan);
      assert.equal(mayHaveServedWeak(input), alias, 'keeps the weak tag as an If-None-Match alias');
    });
  }
});

describe('weakFileEtag: W/"<size hex>-<mtime ms hex>[-coding]"', () => {
  const cases: [string, number, number, string | undefined, string][] = [
    ['1 GB, whole ms', 1024 ** 3, 1_700_000_000_000, undefined, 'W/"40000000-18bcfe56800"'],
    ['fractional ms are floored', 10, 1_700_000_000_000.75, undefined, 'W/"a-18bcfe56800"'],
    ['a coding suffix', 255, 4096, 'br', 'W/"ff-1000-br"'],
    ['empty file', 0, 0, '', 'W/"0-0"'],
  ];
  for (const [name, size, mtime, coding, want] of cases) {
    it(name, () => assert.equal(weakFileEtag(size, mtime, coding), want));
  }
});

describe('isContentHash: what may be quoted in a strong ETag', () => {
  const cases: [string, unknown, boolean][] = [
    ['27 base64url characters', 'abcdefghijklmnopqrstuvwxyz_', true],
    ['with - and digits', '0123456789-ABCDEFGHIJKLMNOP', true],
    ['26 characters', 'abcdefghijklmnopqrstuvwxyz', false],
    ['28 characters', 'abcdefghijklmnopqrstuvwxyz_0', false],
    ['a quote', 'abcdefghijklmnopqrstuvwxyz"', false],
    ['CR LF', 'abcdefghijklmnopqrstuvwx\r\nA', false],
    ['base64 + and /', 'abcdefghijklmnopqrstuvwxy+/', false],
    ['a number', 123, false],
    ['an array', ['abcdefghijklmnopqrstuvwxyz_'], false],
  ];
  for (const [name, value, want] of cases) it(name, () => assert.equal(isContentHash(value), want));
});
