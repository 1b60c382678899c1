// Fuzz: the Basic credentials parser (RFC 7617) and the scrypt hash parser with hostile, seeded input.
// They must never throw; only valid credentials / hashes come back, and they agree with a slow
// reference. FUZZ_SEED and FUZZ_ITERATIONS (test/helpers/random.ts) change the sample:
//   FUZZ_SEED=7 FUZZ_ITERATIONS=100000 node scripts/run-tests.mjs test/http/basic-auth-fuzz.test.ts
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  formatBasicAuthorization,
  MAX_BASIC_TOKEN_LENGTH,
  normalizePassword,
  normalizeUserId,
  parseBasicAuthorization,
} from '../../src/http/basic-auth.js';
import { parseScryptHash, SCRYPT_MIN_WORK } from '../../src/server/steps/password-hash.js';
import { Gen, ITERATIONS } from '../helpers/random.js';

const CONTROL = /[\x00-\x1f\x7f]/;
const STRICT_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** What parseBasicAuthorization should answer, computed the slow way (Buffer, TextDecoder). */
function reference(value: string): string {
  // RFC 9110 §11.4: credentials = auth-scheme [ 1*SP token68 ], with OWS around the field value.
  const v = value.replace(/^[ \t]+/, '');
  if (v.length < 5 || v.slice(0, 5).toLowerCase() !== 'basic') return 'other-scheme';
  const rest = v.slice(5);
  if (rest !== '' && rest[0] !== ' ') return 'other-scheme';
  const token = rest.replace(/^ +/, '').replace(/[ \t]+$/, '');
  if (token === '' || token.length > MAX_BASIC_TOKEN_LENGTH || !STRICT_BASE64.test(token)) return 'invalid';
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(token, 'base64'));
  } catch {
    return 'invalid';
  }
  const colon = text.indexOf(':');
  if (colon === -1 || CONTROL.test(text)) return 'invalid';
  return `credentials ${normalizeUserId(text.slice(0, colon))}\u0000${normalizePassword(text.slice(colon + 1))}`;
}

function describeResult(value: string | undefined): string {
  const r = parseBasicAuthorization(value);
  return r.kind === 'credentials' ? `credentials ${r.userId}\u0000${r.password}` : r.kind;
}

/** Checks the invariants of one answer; returns it. */
function checked(value: string | undefined): ReturnType<typeof parseBasicAuthorization> {
  let r: ReturnType<typeof parseBasicAuthorization>;
  try {
    r = parseBasicAuthorization(value);
  } catch (err) {
    assert.fail(`threw on ${JSON.stringify(value)}: ${String(err)}`);
  }
  assert.ok(['credentials', 'missing', 'other-scheme', 'invalid'].includes(r.kind), r.kind);
  if (r.kind === 'credentials') {
    assert.ok(!r.userId.includes(':'), `user-id with a colon from ${JSON.stringify(value)}`);
    assert.ok(!CONTROL.test(r.userId) && !CONTROL.test(r.password), `controls from ${JSON.stringify(value)}`);
    assert.equal(r.userId, normalizeUserId(r.userId));
    assert.equal(r.password, normalizePassword(r.password));
  }
  return r;
}

const HEADER_PIECES = [
  'Basic',
  'basic',
  'BASIC',
  'Bearer',
  ' ',
  '  ',
  '\t',
  '=',
  '==',
  '+',
  '/',
  '-',
  '_',
  '~',
  '.',
  ':',
  ',',
  '"',
  'YWxpY2U6cHc=', // alice:pw
  'YTpi', // a:b
  'YTpi',
  'QUFB', // AAA
  'OjE6', // :1:
  'Og==', // :
  'AA==', // NUL
  '8J+YgA==', // an emoji, no colon
  '//79', // invalid UTF-8
  'QQ',
  'A',
  'z',
  '\u0000',
  '\r\n',
  '\u00e9',
  '\u2028',
];

describe('parseBasicAuthorization under fuzz', () => {
  it('hostile header values: never throws, agrees with the reference decoder', () => {
    const g = new Gen(1);
    const kinds = new Set<string>();
    for (let i = 0; i < ITERATIONS; i++) {
      // Mostly a Basic scheme in front, so the token checks get reached, not just the scheme's.
      const head = g.chance(0.8) ? g.pick(['Basic ', 'basic  ', ' BASIC ', '\tBasic ', 'Basic']) : '';
      const value = head + g.string(HEADER_PIECES, 8);
      kinds.add(checked(value).kind);
      assert.equal(describeResult(value), reference(value), JSON.stringify(value));
    }
    assert.deepEqual([...kinds].sort(), ['credentials', 'invalid', 'other-scheme'], 'every outcome reached');
  });

  it('random octets as the credentials: only valid UTF-8 with a colon and no controls come back', () => {
    const g = new Gen(2);
    for (let i = 0; i < ITERATIONS; i++) {
      const bytes = g.bytes(g.chance(0.1) ? 4000 : 40);
      if (g.chance(0.5) && bytes.length > 0) bytes[g.int(bytes.length)] = 0x3a; // a colon somewhere
      const scheme = g.pick(['Basic', 'basic', 'bAsIc']);
      const value = `${g.pick(['', ' ', '\t'])}${scheme}${g.pick([' ', '   '])}${Buffer.from(bytes).toString('base64')}${g.pick(['', ' ', '\t'])}`;
      checked(value);
      assert.equal(describeResult(value), reference(value), JSON.stringify(value));
    }
  });

  it('round trip: what formatBasicAuthorization sends parses back to the normalised pair', () => {
    const g = new Gen(3);
    const chars = ['a', 'Z', '0', ' ', '\u00a0', '\u00e9', 'e\u0301', '\u{1f600}', '%', '"', ':', '\u3000'];
    for (let i = 0; i < ITERATIONS; i++) {
      const user = g.string(
        chars.filter((c) => c !== ':'),
        6,
      );
      const password = g.string(chars, 10);
      const r = checked(formatBasicAuthorization(user, password));
      assert.equal(r.kind, 'credentials');
      if (r.kind !== 'credentials') continue;
      assert.equal(r.userId, normalizeUserId(user));
      assert.equal(r.password, normalizePassword(password));
    }
  });

  it('undefined and oversized tokens', () => {
    assert.equal(checked(undefined).kind, 'missing');
    const long = `Basic ${'QUFB'.repeat(MAX_BASIC_TOKEN_LENGTH / 4 + 1)}`;
    assert.equal(checked(long).kind, 'invalid');
  });
});

// ---------------------------------------------------------------------------------------------------

function b64(g: Gen, max: number): string {
  return Buffer.from(g.bytes(max)).toString('base64');
}

const HASH_PIECES = [
  'scrypt',
  '$',
  '$$',
  '0',
  '1',
  '2',
  '8',
  '16',
  '16384',
  '32768',
  '-1',
  '1e3',
  ' ',
  'A',
  '=',
  '+',
  '/',
  '\u0000',
  '\u00e9',
  'QUFBQUFBQUE=',
];

/** Valid hashes are self-consistent: the limits the parser promises hold. */
function checkHash(s: string): void {
  let h: ReturnType<typeof parseScryptHash>;
  try {
    h = parseScryptHash(s);
  } catch (err) {
    assert.fail(`threw on ${JSON.stringify(s)}: ${String(err)}`);
  }
  if (typeof h === 'string') {
    const parts = s.split('$');
    // The message never echoes the hash material.
    for (const secret of parts.slice(4)) if (secret.length >= 8) assert.ok(!h.includes(secret), h);
    return;
  }
  assert.ok(h.N >= 2 && (h.N & (h.N - 1)) === 0, `N ${h.N}`);
  assert.ok(h.N * h.r * h.p >= SCRYPT_MIN_WORK);
  assert.ok(128 * h.N * h.r <= 256 * 1024 * 1024 && h.p <= 16);
  assert.ok(h.salt.length >= 8 && h.hash.length >= 16 && h.hash.length <= 128);
  // Re-serialised, it parses to the same values.
  const again = parseScryptHash(
    `scrypt$${h.N}$${h.r}$${h.p}$${h.salt.toString('base64')}$${h.hash.toString('base64')}`,
  );
  assert.equal(typeof again, 'object');
  assert.deepEqual(again, h);
}

describe('parseScryptHash under fuzz', () => {
  it('hostile strings: never throws; any hash returned keeps the limits', () => {
    const g = new Gen(11);
    for (let i = 0; i < ITERATIONS; i++) checkHash(g.string(HASH_PIECES, 14));
  });

  it('well-formed shapes with random numbers and base64: accepted exactly when within the limits', () => {
    const g = new Gen(12);
    let accepted = 0;
    for (let i = 0; i < ITERATIONS; i++) {
      const N = g.chance(0.7) ? 2 ** g.int(22) : g.int(100_000);
      const r = g.pick([0, 1, 2, 8, 16, 1000]);
      const p = g.pick([0, 1, 3, 16, 17]);
      const s = `scrypt$${N}$${r}$${p}$${b64(g, 24)}$${b64(g, 140)}`;
      checkHash(s);
      const h = parseScryptHash(s);
      if (typeof h !== 'string') accepted++;
    }
    assert.ok(accepted > 0, 'some hashes were valid, so the invariants were exercised');
  });

  it('one-character mutations of a valid hash: never throws', () => {
    const g = new Gen(13);
    const valid = `scrypt$16384$8$1$${'c2FsdHNhbHRzYWx0c2FsdA=='}$${Buffer.alloc(32, 7).toString('base64')}`;
    assert.equal(typeof parseScryptHash(valid), 'object');
    for (let i = 0; i < ITERATIONS; i++) {
      const at = g.int(valid.length);
      const c = g.pick(['$', '=', '0', 'A', '', '\u0000', ' ', '-', '9']);
      checkHash(valid.slice(0, at) + c + valid.slice(at + 1));
    }
  });
});
