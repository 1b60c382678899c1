// The static handler's cache policy helpers (src/server/static/policy.ts), table-driven.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { privateCacheControl } from '../../../src/server/static/policy.js';

describe('privateCacheControl (RFC 9111 §5.2.2.7)', () => {
  const cases: [string, string, string][] = [
    [
      'a hashed asset: public replaced, lifetime kept',
      'public, max-age=31536000, immutable',
      'private, max-age=31536000, immutable',
    ],
    ['no-cache gains private', 'no-cache', 'private, no-cache'],
    [
      's-maxage and proxy-revalidate dropped (shared caches only)',
      'public, max-age=60, s-maxage=600, proxy-revalidate',
      'private, max-age=60',
    ],
    [
      'a qualified private="x" becomes unqualified',
      'private="set-cookie", max-age=60',
      'private, max-age=60',
    ],
    ['already private: unchanged', 'private, max-age=60', 'private, max-age=60'],
    ['no-store is stricter: unchanged', 'public, no-store', 'public, no-store'],
    ['names case-insensitive', 'Public, Max-Age=5', 'private, max-age=5'],
    ['an extension with a quoted argument is kept', 'public, ext="a b"', 'private, ext="a b"'],
    ['empty', '', 'private'],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => assert.equal(privateCacheControl(input), expected));
  }
});
