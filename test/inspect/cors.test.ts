import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkCors, corsCheckFailure, preflightFailure, verdict } from '../../src/inspect/checks/cors.js';
import type { ProbeName } from '../../src/inspect/types.js';
import {
  assertWellFormed,
  type FiresAndQuiet,
  firesAndQuietTests,
  hostileFuzz,
  type Probes,
  withProbes,
} from '../helpers/inspect-cases.js';
import { forAll, ITERATIONS } from '../helpers/random.js';
import { type ExchangeSpec, recording, response } from '../helpers/recording.js';

const ORIGIN = 'https://app.example';
const RANDOM = 'https://r4nd0m.example';

/** A well-configured allow-list with credentials: echo the listed origin, Vary: Origin. */
const GOOD: Partial<Record<ProbeName, ExchangeSpec>> = {
  'cors-simple': {
    requestHeaders: { Origin: ORIGIN },
    headers: {
      'Access-Control-Allow-Origin': ORIGIN,
      'Access-Control-Allow-Credentials': 'true',
      Vary: 'Origin',
    },
  },
  'cors-random': { requestHeaders: { Origin: RANDOM }, headers: { Vary: 'Origin' } },
  'cors-preflight': {
    method: 'OPTIONS',
    status: 204,
    requestHeaders: {
      Origin: ORIGIN,
      'Access-Control-Request-Method': 'POST',
      'Access-Control-Request-Headers': 'authorization,content-type',
    },
    headers: {
      'Access-Control-Allow-Origin': ORIGIN,
      'Access-Control-Allow-Credentials': 'true',
      'Access-Control-Allow-Methods': 'GET, POST',
      'Access-Control-Allow-Headers': 'Authorization, Content-Type',
      'Access-Control-Max-Age': '600',
      Vary: 'Origin',
    },
  },
};

type H = Record<string, string>;

/** `origin` null: no --origin given. */
function findings(over: Probes, origin: string | null = ORIGIN) {
  const probes = withProbes(GOOD, over);
  return checkCors(recording({ probes, ...(origin === null ? {} : { origin }) }));
}
const ids = (over: Probes, origin: string | null = ORIGIN) =>
  findings(over, origin).map((f) => `${f.id}:${f.severity}`);

const simple = (headers: H): ExchangeSpec => ({ requestHeaders: { Origin: ORIGIN }, headers });
const random = (headers: H): ExchangeSpec => ({ requestHeaders: { Origin: RANDOM }, headers });
const preflight = (headers: H, status = 204): ExchangeSpec => ({
  ...GOOD['cors-preflight'],
  status,
  headers,
});
const GOOD_PREFLIGHT = GOOD['cors-preflight']!.headers as H;

// [id, fires on, quiet on]
const cases: FiresAndQuiet[] = [
  [
    'cors.wildcard-credentials:error',
    {
      name: '* with credentials true',
      probes: {
        'cors-simple': simple({
          'Access-Control-Allow-Origin': '*',
          'Access-Control-Allow-Credentials': 'true',
        }),
      },
    },
    {
      name: '* without credentials',
      probes: { 'cors-simple': simple({ 'Access-Control-Allow-Origin': '*' }) },
    },
  ],
  [
    'cors.reflects-any-origin-credentials:error',
    {
      name: 'the random origin echoed with credentials',
      probes: {
        'cors-random': random({
          'Access-Control-Allow-Origin': RANDOM,
          'Access-Control-Allow-Credentials': 'true',
          Vary: 'Origin',
        }),
      },
    },
    { name: 'the random origin gets no CORS headers', probes: {} },
  ],
  [
    'cors.reflects-any-origin:warning',
    {
      name: 'the random origin echoed without credentials',
      probes: { 'cors-random': random({ 'Access-Control-Allow-Origin': RANDOM, Vary: 'Origin' }) },
    },
    {
      name: 'the random origin gets *',
      probes: { 'cors-random': random({ 'Access-Control-Allow-Origin': '*' }) },
    },
  ],
  [
    'cors.missing-vary-origin:error',
    {
      name: 'an echoed origin without Vary',
      probes: {
        'cors-simple': simple({
          'Access-Control-Allow-Origin': ORIGIN,
          'Access-Control-Allow-Credentials': 'true',
        }),
      },
    },
    {
      name: 'an echoed origin with Vary: Accept-Encoding, origin',
      probes: {
        'cors-simple': simple({ 'Access-Control-Allow-Origin': ORIGIN, Vary: 'Accept-Encoding, origin' }),
      },
    },
  ],
  [
    'cors.missing-vary-origin:error',
    {
      name: 'the echoed random origin without Vary',
      probes: { 'cors-random': random({ 'Access-Control-Allow-Origin': RANDOM }) },
    },
    {
      name: '* without Vary (the same answer for everyone)',
      probes: {
        'cors-simple': simple({ 'Access-Control-Allow-Origin': '*' }),
        'cors-random': random({ 'Access-Control-Allow-Origin': '*' }),
      },
    },
  ],
  [
    'cors.preflight-failed:error',
    {
      name: 'OPTIONS -> 405 while the answers list Access-Control-Allow-Headers',
      probes: {
        'cors-simple': simple({
          'Access-Control-Allow-Origin': ORIGIN,
          'Access-Control-Allow-Headers': 'X-Token',
        }),
        'cors-preflight': preflight({ Allow: 'GET, HEAD' }, 405),
      },
    },
    { name: 'OPTIONS -> 200', probes: { 'cors-preflight': preflight(GOOD_PREFLIGHT, 200) } },
  ],
  [
    'cors.preflight-disallows:warning',
    {
      name: 'Allow-Headers lacks authorization',
      probes: {
        'cors-preflight': preflight({ ...GOOD_PREFLIGHT, 'Access-Control-Allow-Headers': 'Content-Type' }),
      },
    },
    {
      name: 'Allow-Methods lacks POST (a CORS-safelisted method, Fetch §4.8)',
      probes: { 'cors-preflight': preflight({ ...GOOD_PREFLIGHT, 'Access-Control-Allow-Methods': 'GET' }) },
    },
  ],
  [
    'cors.preflight-disallows:warning',
    {
      name: 'Allow-Headers: * does not cover authorization',
      probes: {
        'cors-preflight': preflight({
          'Access-Control-Allow-Origin': '*',
          'Access-Control-Allow-Headers': '*',
        }),
      },
    },
    {
      name: 'the preflight does not allow the origin at all (no CORS here)',
      probes: { 'cors-preflight': preflight({}) },
    },
  ],
  [
    'cors.max-age:info',
    { name: 'a passing preflight with Max-Age 600', probes: {} },
    { name: 'a preflight that does not allow the origin', probes: { 'cors-preflight': preflight({}) } },
  ],
  [
    'cors.max-age-capped:info',
    {
      name: 'Max-Age 86400',
      probes: { 'cors-preflight': preflight({ ...GOOD_PREFLIGHT, 'Access-Control-Max-Age': '86400' }) },
    },
    {
      name: 'Max-Age 7200',
      probes: { 'cors-preflight': preflight({ ...GOOD_PREFLIGHT, 'Access-Control-Max-Age': '7200' }) },
    },
  ],
  [
    'cors.browser-simple:info',
    { name: 'a cors-simple probe', probes: {} },
    { name: 'no cors-simple probe', probes: { 'cors-simple': undefined } },
  ],
  [
    'cors.browser-preflight:info',
    { name: 'a cors-preflight probe', probes: {} },
    { name: 'no cors-preflight probe', probes: { 'cors-preflight': undefined } },
  ],
];

describe('cors checks (issue 16 item 6)', () => {
  it('a well-configured allow-list gives infos only', () => {
    assert.deepEqual(ids({}), [
      'cors.max-age:info',
      'cors.browser-simple:info',
      'cors.browser-preflight:info',
    ]);
  });

  it('without --origin nothing is said', () => {
    assert.deepEqual(ids({}, null), []);
  });

  firesAndQuietTests(cases, ids);

  describe('a failed preflight is an error only when non-simple requests are invited (issue 26)', () => {
    const failed = { 'cors-preflight': preflight({ Allow: 'GET, HEAD' }, 405) };
    const severityOf = (spec: { method?: string; headerNames?: string[] }, over: Probes = failed) => {
      const rec = recording({ probes: withProbes(GOOD, over), origin: ORIGIN, method: spec.method ?? 'GET' });
      if (spec.headerNames !== undefined) rec.options.headerNames = spec.headerNames;
      return checkCors(rec).find((f) => f.id === 'cors.preflight-failed')?.severity;
    };
    it('a plain page (GET, no --header, no Allow-Methods/-Headers) -> info', () => {
      assert.equal(severityOf({}), 'info');
    });
    it('--method PUT -> error', () => assert.equal(severityOf({ method: 'PUT' }), 'error'));
    it('--header given -> error', () =>
      assert.equal(severityOf({ headerNames: ['authorization'] }), 'error'));
    it('the preflight answer lists Access-Control-Allow-Methods -> error', () => {
      const over = { 'cors-preflight': preflight({ 'Access-Control-Allow-Methods': 'PUT' }, 403) };
      assert.equal(severityOf({}, over), 'error');
    });
  });

  it('the browser verdicts name the origin and both credentials modes', () => {
    const got = findings({});
    const simpleMsg = got.find((f) => f.id === 'cors.browser-simple')!.message;
    assert.equal(
      simpleMsg,
      `a fetch() GET from ${ORIGIN} reading this response: allowed with or without credentials`,
    );
    const star = findings({ 'cors-simple': simple({ 'Access-Control-Allow-Origin': '*' }) });
    assert.match(
      star.find((f) => f.id === 'cors.browser-simple')!.message,
      /allowed without credentials, blocked with them \(Access-Control-Allow-Origin is \*/,
    );
    const pre = findings({
      'cors-preflight': preflight({ ...GOOD_PREFLIGHT, 'Access-Control-Allow-Headers': 'content-type' }),
    });
    assert.match(
      pre.find((f) => f.id === 'cors.browser-preflight')!.message,
      /POST from https:\/\/app\.example with authorization, content-type, as far as the preflight decides: blocked: Access-Control-Allow-Headers does not list authorization$/,
    );
    assert.match(pre.find((f) => f.id === 'cors.preflight-disallows')!.message, /authorization/);
  });
});

describe('verdict (both credentials modes)', () => {
  const cases: [string, string | null, string | null, string][] = [
    ['both pass', null, null, 'allowed with or without credentials'],
    ['both fail alike', 'x', 'x', 'blocked: x'],
    ['both fail differently', 'x', 'y', 'blocked without credentials (x) and with them (y)'],
    ['only credentialed fails', null, 'y', 'allowed without credentials, blocked with them (y)'],
    ['only uncredentialed fails', 'x', null, 'allowed with credentials, blocked without them (x)'],
  ];
  for (const [name, without, withCreds, want] of cases) {
    it(name, () =>
      assert.equal(
        verdict((c) => (c ? withCreds : without)),
        want,
      ),
    );
  }
});

describe('corsCheckFailure (Fetch §4.10)', () => {
  const cases: [string, H, boolean, string | null][] = [
    ['no ACAO', {}, false, 'there is no Access-Control-Allow-Origin'],
    ['* without credentials', { 'Access-Control-Allow-Origin': '*' }, false, null],
    [
      '* with credentials',
      { 'Access-Control-Allow-Origin': '*' },
      true,
      'Access-Control-Allow-Origin is * and credentialed requests need the origin named',
    ],
    [
      'another origin',
      { 'Access-Control-Allow-Origin': RANDOM },
      false,
      `Access-Control-Allow-Origin is ${RANDOM}, not ${ORIGIN}`,
    ],
    [
      'the origin with a trailing slash',
      { 'Access-Control-Allow-Origin': `${ORIGIN}/` },
      false,
      `Access-Control-Allow-Origin is ${ORIGIN}/, not ${ORIGIN}`,
    ],
    ['the origin without credentials', { 'Access-Control-Allow-Origin': ORIGIN }, false, null],
    [
      'the origin, credentials, no ACAC',
      { 'Access-Control-Allow-Origin': ORIGIN },
      true,
      'Access-Control-Allow-Credentials is not true',
    ],
    [
      'the origin, credentials, ACAC TRUE (case matters)',
      { 'Access-Control-Allow-Origin': ORIGIN, 'Access-Control-Allow-Credentials': 'TRUE' },
      true,
      'Access-Control-Allow-Credentials is not true',
    ],
    [
      'the origin, credentials, ACAC true',
      { 'Access-Control-Allow-Origin': ORIGIN, 'Access-Control-Allow-Credentials': 'true' },
      true,
      null,
    ],
  ];
  for (const [name, headers, credentials, want] of cases) {
    it(name, () => assert.equal(corsCheckFailure(response({ headers }), ORIGIN, credentials), want));
  }
});

describe('preflightFailure (Fetch §4.8)', () => {
  const base = { 'Access-Control-Allow-Origin': ORIGIN, 'Access-Control-Allow-Credentials': 'true' };
  const cases: [string, H, number, boolean, string, string[], string | null][] = [
    ['404', base, 404, false, 'POST', [], 'the preflight answered 404, not 2xx'],
    ['POST needs no Allow-Methods', base, 204, false, 'POST', [], null],
    ['PUT not listed', base, 204, false, 'PUT', [], 'Access-Control-Allow-Methods does not list PUT'],
    [
      'PUT under * without credentials',
      { ...base, 'Access-Control-Allow-Methods': '*' },
      204,
      false,
      'PUT',
      [],
      null,
    ],
    [
      'PUT under * with credentials (literal *)',
      { ...base, 'Access-Control-Allow-Methods': '*' },
      204,
      true,
      'PUT',
      [],
      'Access-Control-Allow-Methods does not list PUT',
    ],
    [
      'put is not PUT',
      { ...base, 'Access-Control-Allow-Methods': 'put' },
      204,
      false,
      'PUT',
      [],
      'Access-Control-Allow-Methods does not list PUT',
    ],
    [
      'headers listed in another case',
      { ...base, 'Access-Control-Allow-Headers': 'AUTHORIZATION,Content-Type' },
      204,
      true,
      'POST',
      ['authorization', 'content-type'],
      null,
    ],
    [
      '* covers content-type, not authorization',
      { ...base, 'Access-Control-Allow-Headers': '*' },
      204,
      false,
      'POST',
      ['authorization', 'content-type'],
      'Access-Control-Allow-Headers does not list authorization',
    ],
    [
      '* is literal with credentials',
      { ...base, 'Access-Control-Allow-Headers': '*' },
      204,
      true,
      'POST',
      ['content-type'],
      'Access-Control-Allow-Headers does not list content-type',
    ],
  ];
  for (const [name, headers, status, credentials, method, names, want] of cases) {
    it(name, () =>
      assert.equal(preflightFailure(response({ status, headers }), ORIGIN, credentials, method, names), want),
    );
  }
});

/** Pieces a hostile or broken site might send in cors fields. */
const PIECES = [
  '*',
  'null',
  'https://app.example',
  'https://r4nd0m.example',
  'true',
  'TRUE',
  ',',
  ' ',
  'Origin',
  'authorization',
  'content-type',
  'POST',
  'post',
  '7200',
  '99999999999999999999',
  '-1',
  '__proto__',
];

const { hostileExchange } = hostileFuzz(PIECES);

describe('a hostile site cannot break the cors check', () => {
  it('random CORS answers: no throw, well-formed findings', () => {
    const names = [
      'access-control-allow-origin',
      'access-control-allow-credentials',
      'access-control-allow-methods',
      'access-control-allow-headers',
      'access-control-max-age',
      'vary',
      'origin',
      'access-control-request-headers',
      'access-control-request-method',
    ];
    forAll(
      0x16a6,
      ITERATIONS / 10,
      (g) => {
        const probes: Partial<Record<ProbeName, ExchangeSpec>> = {};
        for (const p of ['cors-simple', 'cors-random', 'cors-preflight'] as const) {
          if (g.chance(0.9)) probes[p] = hostileExchange(g, names, 'https://h.example/');
        }
        return probes;
      },
      (probes) => assertWellFormed(checkCors(recording({ probes, origin: ORIGIN })), 'cors'),
    );
  });
});
