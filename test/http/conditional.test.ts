import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  evaluateIfRange,
  evaluatePreconditions,
  hasPreconditions,
  type PreconditionResult,
} from '../../src/http/conditional.js';

const LM = 784111777000; // Sun, 06 Nov 1994 08:49:37 GMT
const AT = 'Sun, 06 Nov 1994 08:49:37 GMT';
const BEFORE = 'Sun, 06 Nov 1994 08:49:36 GMT';
const AFTER = 'Sun, 06 Nov 1994 08:49:38 GMT';
const AT_RFC850 = 'Sunday, 06-Nov-94 08:49:37 GMT';
const AT_ASCTIME = 'Sun Nov  6 08:49:37 1994';

type Kind = PreconditionResult['kind'];
interface Case {
  method?: string;
  headers: Record<string, string>;
  etag?: string | null; // null: no entity-tag
  lastModifiedMs?: number | null; // null: no Last-Modified
}

function run(c: Case): Kind {
  return evaluatePreconditions({
    method: c.method ?? 'GET',
    header: (name) => {
      assert.equal(name, name.toLowerCase(), 'header names are asked for in lowercase');
      return c.headers[name];
    },
    etag: c.etag === null ? undefined : (c.etag ?? '"abc"'),
    lastModifiedMs: c.lastModifiedMs === null ? undefined : (c.lastModifiedMs ?? LM),
  }).kind;
}

describe('evaluatePreconditions (RFC 9110 §13.2.2)', () => {
  const cases: [string, Case, Kind][] = [
    ['no conditional headers -> proceed', { headers: {} }, 'proceed'],
    // Step 1: If-Match, strong comparison (§13.1.1)
    [
      'If-Match same strong tag -> proceed (RFC 9110 §13.1.1)',
      { method: 'PUT', headers: { 'if-match': '"abc"' } },
      'proceed',
    ],
    [
      'If-Match other tag -> 412 (RFC 9110 §13.1.1)',
      { method: 'PUT', headers: { 'if-match': '"xyz"' } },
      'precondition-failed',
    ],
    [
      'If-Match list with a matching member -> proceed (RFC 9110 §13.1.1)',
      { method: 'PUT', headers: { 'if-match': '"x", "abc"' } },
      'proceed',
    ],
    [
      'weak ETag in If-Match -> 412 (RFC 9110 §13.1.1 strong comparison)',
      { method: 'PUT', headers: { 'if-match': 'W/"abc"' } },
      'precondition-failed',
    ],
    [
      'weak current ETag, If-Match same weak tag -> 412 (RFC 9110 §8.8.3.2 strong comparison)',
      { method: 'PUT', etag: 'W/"abc"', headers: { 'if-match': 'W/"abc"' } },
      'precondition-failed',
    ],
    [
      'If-Match * with a representation -> proceed (RFC 9110 §13.1.1)',
      { method: 'PUT', headers: { 'if-match': '*' } },
      'proceed',
    ],
    [
      'If-Match * with only Last-Modified -> proceed (representation exists)',
      { method: 'PUT', etag: null, headers: { 'if-match': '*' } },
      'proceed',
    ],
    [
      'If-Match * without a representation -> 412 (RFC 9110 §13.1.1)',
      { method: 'PUT', etag: null, lastModifiedMs: null, headers: { 'if-match': '*' } },
      'precondition-failed',
    ],
    [
      'If-Match tag but resource has no ETag -> 412 (RFC 9110 §13.1.1)',
      { method: 'PUT', etag: null, headers: { 'if-match': '"abc"' } },
      'precondition-failed',
    ],
    [
      'If-Match with no valid member -> 412 (RFC 9110 §13.1.1)',
      { method: 'PUT', headers: { 'if-match': 'abc' } },
      'precondition-failed',
    ],
    [
      'If-Match failing on GET -> 412, not 304 (RFC 9110 §13.2.2 step 1 first)',
      { headers: { 'if-match': '"xyz"', 'if-none-match': '"abc"' } },
      'precondition-failed',
    ],
    [
      'If-Match passes, If-Unmodified-Since would fail -> IUS ignored (RFC 9110 §13.2.2 step 2)',
      { method: 'PUT', headers: { 'if-match': '"abc"', 'if-unmodified-since': BEFORE } },
      'proceed',
    ],
    // Step 2: If-Unmodified-Since (§13.1.4)
    [
      'IUS equal to Last-Modified -> proceed (RFC 9110 §13.1.4)',
      { method: 'PUT', headers: { 'if-unmodified-since': AT } },
      'proceed',
    ],
    [
      'IUS before Last-Modified -> 412 (RFC 9110 §13.1.4)',
      { method: 'PUT', headers: { 'if-unmodified-since': BEFORE } },
      'precondition-failed',
    ],
    [
      'IUS after Last-Modified -> proceed (RFC 9110 §13.1.4)',
      { method: 'PUT', headers: { 'if-unmodified-since': AFTER } },
      'proceed',
    ],
    [
      'IUS invalid date -> ignored (RFC 9110 §13.1.4)',
      { method: 'PUT', headers: { 'if-unmodified-since': 'yesterday' } },
      'proceed',
    ],
    [
      'IUS list of dates -> ignored (RFC 9110 §13.1.4)',
      { method: 'PUT', headers: { 'if-unmodified-since': `${BEFORE}, ${BEFORE}` } },
      'proceed',
    ],
    [
      'IUS without Last-Modified -> ignored (RFC 9110 §13.1.4)',
      { method: 'PUT', lastModifiedMs: null, headers: { 'if-unmodified-since': BEFORE } },
      'proceed',
    ],
    [
      'IUS fails before If-None-Match matches -> 412 (RFC 9110 §13.2.2 step 2 before 3)',
      { headers: { 'if-unmodified-since': BEFORE, 'if-none-match': '"abc"' } },
      'precondition-failed',
    ],
    [
      'IUS passes and If-None-Match matches on GET -> 304 (RFC 9110 §13.2.2 step 3)',
      { headers: { 'if-unmodified-since': AT, 'if-none-match': '"abc"' } },
      'not-modified',
    ],
    // Step 3: If-None-Match, weak comparison (§13.1.2)
    [
      'GET, If-None-Match same tag -> 304 (RFC 9110 §13.1.2)',
      { headers: { 'if-none-match': '"abc"' } },
      'not-modified',
    ],
    [
      'HEAD, If-None-Match same tag -> 304 (RFC 9110 §13.1.2)',
      { method: 'HEAD', headers: { 'if-none-match': '"abc"' } },
      'not-modified',
    ],
    [
      'GET, If-None-Match weak form of our strong tag -> 304 (RFC 9110 §13.1.2 weak comparison)',
      { headers: { 'if-none-match': 'W/"abc"' } },
      'not-modified',
    ],
    [
      'GET, weak current ETag, If-None-Match strong form -> 304 (RFC 9110 §8.8.3.2 weak comparison)',
      { etag: 'W/"abc"', headers: { 'if-none-match': '"abc"' } },
      'not-modified',
    ],
    ['GET, If-None-Match other tag -> proceed', { headers: { 'if-none-match': '"xyz"' } }, 'proceed'],
    [
      'GET, If-None-Match list containing the tag -> 304 (RFC 9110 §13.1.2)',
      { headers: { 'if-none-match': '"x", W/"y", "abc"' } },
      'not-modified',
    ],
    [
      'GET, If-None-Match list containing the weak tag -> 304 (RFC 9110 §13.1.2)',
      { headers: { 'if-none-match': '"x",W/"abc"' } },
      'not-modified',
    ],
    [
      'GET, If-None-Match opaque-tag differs in case -> proceed (RFC 9110 §8.8.3.2)',
      { headers: { 'if-none-match': '"ABC"' } },
      'proceed',
    ],
    [
      'GET, If-None-Match unquoted tag -> proceed (not an entity-tag, RFC 9110 §8.8.3)',
      { headers: { 'if-none-match': 'abc' } },
      'proceed',
    ],
    [
      'GET, tag with a comma matched whole (RFC 9110 §8.8.3 etagc)',
      { etag: '"a,b"', headers: { 'if-none-match': '"x", "a,b"' } },
      'not-modified',
    ],
    [
      'GET, pieces of a comma tag do not match (RFC 9110 §8.8.3)',
      { etag: '"a,b"', headers: { 'if-none-match': '"a", "b"' } },
      'proceed',
    ],
    [
      'GET, If-None-Match * with a representation -> 304 (RFC 9110 §13.1.2)',
      { headers: { 'if-none-match': '*' } },
      'not-modified',
    ],
    [
      'GET, If-None-Match * without a representation -> proceed (RFC 9110 §13.1.2)',
      { etag: null, lastModifiedMs: null, headers: { 'if-none-match': '*' } },
      'proceed',
    ],
    [
      'PUT, If-None-Match * without a representation -> proceed (create-only, RFC 9110 §13.1.2)',
      { method: 'PUT', etag: null, lastModifiedMs: null, headers: { 'if-none-match': '*' } },
      'proceed',
    ],
    [
      'PUT, If-None-Match * with a representation -> 412 (RFC 9110 §13.1.2)',
      { method: 'PUT', headers: { 'if-none-match': '*' } },
      'precondition-failed',
    ],
    [
      'POST, If-None-Match matching tag -> 412, not 304 (RFC 9110 §13.1.2)',
      { method: 'POST', headers: { 'if-none-match': '"abc"' } },
      'precondition-failed',
    ],
    [
      'lowercase "get" is not GET: INM match -> 412 (RFC 9110 §9.1 methods are case-sensitive)',
      { method: 'get', headers: { 'if-none-match': '"abc"' } },
      'precondition-failed',
    ],
    [
      'GET, If-None-Match but no ETag -> proceed',
      { etag: null, headers: { 'if-none-match': '"abc"' } },
      'proceed',
    ],
    [
      'If-Match and If-None-Match both match on GET -> 304 (RFC 9110 §13.2.2 steps 1, 3)',
      { headers: { 'if-match': '"abc"', 'if-none-match': '"abc"' } },
      'not-modified',
    ],
    // If-None-Match present: If-Modified-Since ignored (§13.1.3)
    [
      'INM present but not matching + IMS that would 304 -> proceed (RFC 9110 §13.1.3: IMS ignored)',
      { headers: { 'if-none-match': '"xyz"', 'if-modified-since': AT } },
      'proceed',
    ],
    [
      'INM matching + IMS that would not 304 -> 304 (RFC 9110 §13.2.2: IMS not evaluated)',
      { headers: { 'if-none-match': '"abc"', 'if-modified-since': BEFORE } },
      'not-modified',
    ],
    // Step 4: If-Modified-Since (§13.1.3)
    [
      'GET, IMS equal to Last-Modified -> 304 (RFC 9110 §13.1.3)',
      { headers: { 'if-modified-since': AT } },
      'not-modified',
    ],
    [
      'GET, IMS after Last-Modified -> 304 (RFC 9110 §13.1.3)',
      { headers: { 'if-modified-since': AFTER } },
      'not-modified',
    ],
    [
      'GET, IMS before Last-Modified -> proceed (RFC 9110 §13.1.3)',
      { headers: { 'if-modified-since': BEFORE } },
      'proceed',
    ],
    [
      'HEAD, IMS equal -> 304 (RFC 9110 §13.1.3)',
      { method: 'HEAD', headers: { 'if-modified-since': AT } },
      'not-modified',
    ],
    [
      'POST, IMS equal -> ignored (RFC 9110 §13.1.3 GET/HEAD only)',
      { method: 'POST', headers: { 'if-modified-since': AT } },
      'proceed',
    ],
    [
      'PUT, IMS equal -> ignored (RFC 9110 §13.1.3 GET/HEAD only)',
      { method: 'PUT', headers: { 'if-modified-since': AT } },
      'proceed',
    ],
    [
      'GET, IMS invalid date -> ignored (RFC 9110 §13.1.3)',
      { headers: { 'if-modified-since': 'not a date' } },
      'proceed',
    ],
    [
      'GET, IMS Feb 30 -> ignored (RFC 9110 §13.1.3)',
      { headers: { 'if-modified-since': 'Fri, 30 Feb 2024 00:00:00 GMT' } },
      'proceed',
    ],
    [
      'GET, IMS without Last-Modified -> ignored (RFC 9110 §13.1.3)',
      { lastModifiedMs: null, headers: { 'if-modified-since': AFTER } },
      'proceed',
    ],
    [
      'GET, IMS as an RFC 850 date -> 304 (RFC 9110 §5.6.7)',
      { headers: { 'if-modified-since': AT_RFC850 } },
      'not-modified',
    ],
    [
      'GET, IMS as an asctime date -> 304 (RFC 9110 §5.6.7)',
      { headers: { 'if-modified-since': AT_ASCTIME } },
      'not-modified',
    ],
  ];
  for (const [name, c, expected] of cases) {
    it(name, () => assert.equal(run(c), expected));
  }

  it('returns the same frozen objects every time (no per-call allocation)', () => {
    const a = evaluatePreconditions({
      method: 'GET',
      header: () => undefined,
      etag: '"a"',
      lastModifiedMs: 0,
    });
    const b = evaluatePreconditions({
      method: 'GET',
      header: () => undefined,
      etag: '"b"',
      lastModifiedMs: 1,
    });
    assert.equal(a, b);
    assert.ok(Object.isFrozen(a));
  });

  it('reads RFC 850 two-digit years against nowMs when given (RFC 9110 §5.6.7)', () => {
    const lm = Date.UTC(2074, 0, 1);
    const input = (nowMs?: number) => ({
      method: 'GET',
      header: (n: string) => (n === 'if-modified-since' ? 'Monday, 01-Jan-74 00:00:00 GMT' : undefined),
      etag: undefined,
      lastModifiedMs: lm,
      nowMs,
    });
    assert.equal(evaluatePreconditions(input(Date.UTC(2024, 5, 1))).kind, 'not-modified'); // 2074
    assert.equal(evaluatePreconditions(input(Date.UTC(2020, 0, 1))).kind, 'proceed'); // 1974
  });
});

describe('evaluateIfRange (RFC 9110 §13.1.5)', () => {
  type In = {
    ifRange: string | undefined;
    etag?: string | null;
    lastModifiedMs?: number | null;
    nowMs?: number;
  };
  const cases: [string, In, boolean][] = [
    ['absent -> apply the Range', { ifRange: undefined }, true],
    ['same strong tag -> apply (RFC 9110 §13.1.5)', { ifRange: '"abc"' }, true],
    ['other tag -> full 200 (RFC 9110 §13.1.5)', { ifRange: '"xyz"' }, false],
    [
      'weak tag in If-Range never matches (RFC 9110 §13.1.5 strong comparison)',
      { ifRange: 'W/"abc"' },
      false,
    ],
    ['weak current tag never matches (RFC 9110 §13.1.5)', { ifRange: 'W/"abc"', etag: 'W/"abc"' }, false],
    [
      'strong If-Range vs weak current tag -> full (RFC 9110 §8.8.3.2)',
      { ifRange: '"abc"', etag: 'W/"abc"' },
      false,
    ],
    ['tag form but no current ETag -> full', { ifRange: '"abc"', etag: null }, false],
    ['tag with OWS around it', { ifRange: ' "abc" ' }, true],
    ['list of tags is not an entity-tag -> full (RFC 9110 §13.1.5)', { ifRange: '"abc", "x"' }, false],
    ['malformed tag -> full', { ifRange: '"abc' }, false],
    ['date equal to Last-Modified -> apply (RFC 9110 §13.1.5)', { ifRange: AT }, true],
    ['date before Last-Modified -> full (RFC 9110 §13.1.5 exact match)', { ifRange: BEFORE }, false],
    ['date after Last-Modified -> full (RFC 9110 §13.1.5 exact match)', { ifRange: AFTER }, false],
    ['RFC 850 date equal -> apply (RFC 9110 §5.6.7)', { ifRange: AT_RFC850 }, true],
    ['date but no Last-Modified -> full', { ifRange: AT, lastModifiedMs: null }, false],
    ['unparsable value -> full (RFC 9110 §13.1.5)', { ifRange: 'yesterday' }, false],
    ['empty value -> full', { ifRange: '' }, false],
    [
      'date equal but Last-Modified within a second of now is weak -> full (RFC 9110 §8.8.2.2)',
      { ifRange: AT, nowMs: LM + 500 },
      false,
    ],
    [
      'date equal and Last-Modified a second before now -> apply (RFC 9110 §8.8.2.2)',
      { ifRange: AT, nowMs: LM + 1000 },
      true,
    ],
  ];
  for (const [name, c, expected] of cases) {
    it(name, () =>
      assert.equal(
        evaluateIfRange({
          ifRange: c.ifRange,
          etag: c.etag === null ? undefined : (c.etag ?? '"abc"'),
          lastModifiedMs: c.lastModifiedMs === null ? undefined : (c.lastModifiedMs ?? LM),
          nowMs: c.nowMs,
        }),
        expected,
      ),
    );
  }
});

describe('evaluatePreconditions: a weak alias of the same version (a large file before its hash was known)', () => {
  const STRONG = '"abc"';
  const ALIAS = 'W/"100000-18c0"';
  type Want = 'proceed' | 'not-modified' | 'not-modified via alias' | 'precondition-failed';
  const cases: [string, string, Record<string, string>, string | undefined, Want][] = [
    [
      'If-None-Match the alias -> 304 naming the alias',
      'GET',
      { 'if-none-match': ALIAS },
      ALIAS,
      'not-modified via alias',
    ],
    [
      'If-None-Match the alias in a list -> 304 via alias',
      'GET',
      { 'if-none-match': `"x", ${ALIAS}` },
      ALIAS,
      'not-modified via alias',
    ],
    [
      'If-None-Match the alias, HEAD -> 304 via alias',
      'HEAD',
      { 'if-none-match': ALIAS },
      ALIAS,
      'not-modified via alias',
    ],
    [
      'If-None-Match the alias, POST -> 412',
      'POST',
      { 'if-none-match': ALIAS },
      ALIAS,
      'precondition-failed',
    ],
    ['If-None-Match the strong tag -> plain 304', 'GET', { 'if-none-match': STRONG }, ALIAS, 'not-modified'],
    [
      'If-None-Match the alias, no alias given -> proceed',
      'GET',
      { 'if-none-match': ALIAS },
      undefined,
      'proceed',
    ],
    ['If-None-Match another weak tag -> proceed', 'GET', { 'if-none-match': 'W/"1-2"' }, ALIAS, 'proceed'],
    [
      'If-None-Match the alias without W/ (weak comparison) -> 304 via alias',
      'GET',
      { 'if-none-match': '"100000-18c0"' },
      ALIAS,
      'not-modified via alias',
    ],
    ['If-None-Match * -> plain 304', 'GET', { 'if-none-match': '*' }, ALIAS, 'not-modified'],
    [
      'If-Match the alias -> 412 (strong comparison never matches a weak tag)',
      'GET',
      { 'if-match': ALIAS },
      ALIAS,
      'precondition-failed',
    ],
    [
      'If-Match the strong tag and If-None-Match the alias -> 304 via alias',
      'GET',
      { 'if-match': STRONG, 'if-none-match': ALIAS },
      ALIAS,
      'not-modified via alias',
    ],
    [
      'If-Modified-Since only: the alias changes nothing -> 304',
      'GET',
      { 'if-modified-since': AT },
      ALIAS,
      'not-modified',
    ],
  ];
  for (const [name, method, headers, weakAlias, want] of cases) {
    it(name, () => {
      const r = evaluatePreconditions({
        method,
        header: (n) => headers[n],
        etag: STRONG,
        lastModifiedMs: LM,
        weakAlias,
      });
      const got = r.kind === 'not-modified' && r.viaAlias ? 'not-modified via alias' : r.kind;
      assert.equal(got, want);
    });
  }
});

describe('hasPreconditions: the unconditional GET may skip evaluatePreconditions', () => {
  const FIELDS = ['if-none-match', 'if-modified-since', 'if-match', 'if-unmodified-since'];
  for (const name of FIELDS) {
    it(`${name} alone counts`, () => {
      assert.equal(hasPreconditions({ [name]: 'x' }), true);
      assert.equal(hasPreconditions({ host: 'a', range: 'bytes=0-1', [name]: '' }), true);
    });
  }
  it('other fields (If-Range included, which only matters with Range) do not', () => {
    assert.equal(hasPreconditions({}), false);
    assert.equal(
      hasPreconditions({ host: 'a', 'if-range': '"x"', range: 'bytes=0-1', accept: '*/*' }),
      false,
    );
  });
  // Skipping is only sound when the evaluation could not have said anything but proceed.
  const cases: [string, string | undefined, number | undefined][] = [
    ['GET', '"a"', 1000],
    ['HEAD', undefined, 1000],
    ['POST', '"a"', undefined],
    ['DELETE', undefined, undefined],
  ];
  for (const [method, etag, lastModifiedMs] of cases) {
    it(`${method} etag=${etag} lastModified=${lastModifiedMs}: without the fields the result is proceed`, () => {
      const headers: Record<string, string> = { host: 'a', range: 'bytes=0-0', 'if-range': '"a"' };
      assert.equal(hasPreconditions(headers), false);
      const r = evaluatePreconditions({ method, header: (n) => headers[n], etag, lastModifiedMs });
      assert.equal(r.kind, 'proceed');
    });
  }
});
