import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkValidators } from '../../src/inspect/checks/validators.js';
import { type ProbeName, STALE_IF_RANGE, WRONG_ETAG } from '../../src/inspect/types.js';
import {
  assertWellFormed,
  type FiresAndQuiet,
  firesAndQuietTests,
  hostileFuzz,
  type Probes,
  withProbes,
} from '../helpers/inspect-cases.js';
import { forAll, ITERATIONS } from '../helpers/random.js';
import { type ExchangeSpec, recording } from '../helpers/recording.js';

const BODY = 'x'.repeat(100);
const ETAG = '"abc123"';
const DATE = 'Wed, 25 Nov 2026 12:00:00 GMT';
const LAST_MODIFIED = 'Tue, 24 Nov 2026 12:00:00 GMT';
/** What a well-behaved server sends on the 200 (and, minus the body fields, on its 304s). */
const HEADERS: Record<string, string> = {
  ETag: ETAG,
  'Last-Modified': LAST_MODIFIED,
  'Cache-Control': 'public, max-age=60',
  Expires: 'Wed, 25 Nov 2026 12:01:00 GMT',
  Vary: 'Accept-Encoding',
  Date: DATE,
  'Accept-Ranges': 'bytes',
};
const with_ = (extra: Record<string, string | undefined>): Record<string, string> => {
  const out: Record<string, string> = { ...HEADERS };
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete out[k];
    else out[k] = v;
  }
  return out;
};

const GOOD: Partial<Record<ProbeName, ExchangeSpec>> = {
  primary: { status: 200, headers: HEADERS, body: BODY },
  repeat: { status: 200, headers: HEADERS, body: BODY },
  'inm-match': { status: 304, headers: HEADERS, requestHeaders: { 'If-None-Match': ETAG } },
  'inm-wrong': { status: 200, headers: HEADERS, body: BODY, requestHeaders: { 'If-None-Match': WRONG_ETAG } },
  ims: { status: 304, headers: HEADERS, requestHeaders: { 'If-Modified-Since': LAST_MODIFIED } },
  'coding-identity': { status: 200, headers: HEADERS, body: BODY },
  range: {
    status: 206,
    headers: with_({ 'Content-Range': 'bytes 0-9/100' }),
    body: BODY.slice(0, 10),
  },
  'if-range-match': {
    status: 206,
    headers: with_({ 'Content-Range': 'bytes 0-9/100' }),
    body: BODY.slice(0, 10),
    requestHeaders: { Range: 'bytes=0-9', 'If-Range': ETAG },
  },
  'if-range-mismatch': {
    status: 200,
    headers: HEADERS,
    body: BODY,
    requestHeaders: { Range: 'bytes=0-9', 'If-Range': STALE_IF_RANGE },
  },
};

/** The good recording with some probes replaced (undefined: not sent). */
function ids(over: Probes): string[] {
  const probes = withProbes(GOOD, over);
  return checkValidators(recording({ probes })).map((f) => `${f.id}:${f.severity}`);
}

const nm = (headers: Record<string, string>, body = ''): ExchangeSpec => ({ status: 304, headers, body });
const partial = (contentRange: string | undefined, body: string): ExchangeSpec => ({
  status: 206,
  headers: with_({ 'Content-Range': contentRange }),
  body,
});

// [id, fires on, quiet on]
const cases: FiresAndQuiet[] = [
  [
    'validators.etag-invalid:error',
    { name: 'an unquoted ETag', probes: { primary: { headers: with_({ ETag: 'abc123' }), body: BODY } } },
    { name: 'a weak quoted ETag', probes: { primary: { headers: with_({ ETag: 'W/"abc"' }), body: BODY } } },
  ],
  [
    'validators.none:warning',
    {
      name: 'a cacheable 200 with neither ETag nor Last-Modified',
      probes: { primary: { headers: with_({ ETag: undefined, 'Last-Modified': undefined }), body: BODY } },
    },
    {
      name: 'the same response with no-store',
      probes: {
        primary: {
          headers: with_({ ETag: undefined, 'Last-Modified': undefined, 'Cache-Control': 'no-store' }),
          body: BODY,
        },
      },
    },
  ],
  [
    'validators.none:warning',
    {
      name: 'no Cache-Control at all (heuristically cacheable 200)',
      probes: {
        primary: {
          headers: with_({ ETag: undefined, 'Last-Modified': undefined, 'Cache-Control': undefined }),
          body: BODY,
        },
      },
    },
    {
      name: 'Last-Modified only',
      probes: { primary: { headers: with_({ ETag: undefined }), body: BODY } },
    },
  ],
  [
    'validators.etag-unstable:warning',
    {
      name: 'strong ETag changes on repeat, same body',
      probes: { repeat: { headers: with_({ ETag: '"other"' }), body: BODY } },
    },
    {
      name: 'strong ETag changes on repeat because the body changed',
      probes: { repeat: { headers: with_({ ETag: '"other"' }), body: `${BODY}!` } },
    },
  ],
  [
    'validators.etag-unstable:warning',
    {
      name: 'strong ETag changes, same body, no other probe',
      probes: {
        repeat: { headers: with_({ ETag: '"other"' }), body: BODY },
        'inm-match': undefined,
        ims: undefined,
        range: undefined,
      },
    },
    {
      name: 'weak ETags that differ (weak tags promise less)',
      probes: {
        primary: { headers: with_({ ETag: 'W/"a"', 'Accept-Ranges': undefined }), body: BODY },
        repeat: { headers: with_({ ETag: 'W/"b"', 'Accept-Ranges': undefined }), body: BODY },
        'coding-identity': undefined,
        range: undefined,
      },
    },
  ],
  [
    'validators.weak-etag-ranges:warning',
    {
      name: 'weak ETag with Accept-Ranges: bytes',
      probes: {
        primary: { headers: with_({ ETag: 'W/"a"' }), body: BODY },
        'coding-identity': { headers: with_({ ETag: 'W/"a"' }), body: BODY },
      },
    },
    {
      name: 'weak ETag on the gzip primary but a strong one on identity',
      probes: { primary: { headers: with_({ ETag: 'W/"a"', 'Content-Encoding': 'gzip' }), body: 'zz' } },
    },
  ],
  [
    'validators.weak-etag-ranges:warning',
    {
      name: 'weak ETag, no Accept-Ranges, but the range probe got 206',
      probes: {
        primary: { headers: with_({ ETag: 'W/"a"', 'Accept-Ranges': undefined }), body: BODY },
        'coding-identity': undefined,
      },
    },
    {
      name: 'weak ETag, no Accept-Ranges, range probe got 200',
      probes: {
        primary: { headers: with_({ ETag: 'W/"a"', 'Accept-Ranges': undefined }), body: BODY },
        'coding-identity': undefined,
        range: { status: 200, headers: HEADERS, body: BODY },
      },
    },
  ],
  [
    'validators.inm-ignored:warning',
    { name: 'If-None-Match with the ETag -> 200', probes: { 'inm-match': { headers: HEADERS, body: BODY } } },
    { name: 'If-None-Match with the ETag -> 304', probes: {} },
  ],
  [
    'validators.304-drops-field:error',
    { name: '304 without ETag', probes: { 'inm-match': nm(with_({ ETag: undefined })) } },
    { name: '304 with every field', probes: { 'inm-match': nm(HEADERS) } },
  ],
  [
    'validators.304-drops-field:error',
    { name: '304 without Cache-Control', probes: { 'inm-match': nm(with_({ 'Cache-Control': undefined })) } },
    {
      name: '304 with Cache-Control members reordered',
      probes: { 'inm-match': nm(with_({ 'Cache-Control': 'max-age=60, PUBLIC' })) },
    },
  ],
  [
    'validators.304-drops-field:error',
    { name: '304 without Expires', probes: { 'inm-match': nm(with_({ Expires: undefined })) } },
    {
      name: '200 without Expires, 304 without Expires',
      probes: {
        primary: { headers: with_({ Expires: undefined }), body: BODY },
        'inm-match': nm(with_({ Expires: undefined })),
        ims: nm(with_({ Expires: undefined })),
      },
    },
  ],
  [
    'validators.304-drops-field:error',
    { name: '304 without Vary', probes: { 'inm-match': nm(with_({ Vary: undefined })) } },
    {
      name: '304 with Vary in another case',
      probes: { 'inm-match': nm(with_({ Vary: 'accept-encoding' })) },
    },
  ],
  [
    'validators.304-drops-field:error',
    { name: '304 without Date (If-Modified-Since)', probes: { ims: nm(with_({ Date: undefined })) } },
    { name: '304 with a later Date', probes: { ims: nm(with_({ Date: 'Wed, 25 Nov 2026 12:00:07 GMT' })) } },
  ],
  [
    'validators.304-etag-changed:error',
    { name: '304 with another ETag', probes: { 'inm-match': nm(with_({ ETag: '"zzz"' })) } },
    { name: '304 with the same ETag', probes: { 'inm-match': nm(HEADERS) } },
  ],
  [
    'validators.304-field-changed:warning',
    {
      name: '304 with another Cache-Control',
      probes: { 'inm-match': nm(with_({ 'Cache-Control': 'no-store' })) },
    },
    {
      name: '304 whose Expires moved with its Date (Date + max-age)',
      probes: {
        'inm-match': nm(
          with_({ Date: 'Wed, 25 Nov 2026 12:00:05 GMT', Expires: 'Wed, 25 Nov 2026 12:01:05 GMT' }),
        ),
      },
    },
  ],
  [
    'validators.304-field-changed:warning',
    {
      name: '304 whose Expires moved but not its Date',
      probes: { 'inm-match': nm(with_({ Expires: 'Thu, 26 Nov 2026 12:00:00 GMT' })) },
    },
    { name: '304 with the same Expires', probes: { 'inm-match': nm(HEADERS) } },
  ],
  [
    'validators.304-field-changed:warning',
    { name: '304 with Vary: *', probes: { 'inm-match': nm(with_({ Vary: '*' })) } },
    {
      name: '304 with Vary members reordered',
      probes: { 'inm-match': nm(with_({ Vary: 'accept-encoding' })) },
    },
  ],
  [
    'validators.304-body:error',
    { name: '304 with a body', probes: { 'inm-match': nm(HEADERS, 'oops') } },
    { name: '304 without a body', probes: { 'inm-match': nm(HEADERS) } },
  ],
  [
    'validators.ims-ignored:warning',
    { name: 'If-Modified-Since -> 200', probes: { ims: { headers: HEADERS, body: BODY } } },
    {
      name: 'If-Modified-Since -> 200 on a response without Last-Modified',
      probes: {
        primary: { headers: with_({ 'Last-Modified': undefined }), body: BODY },
        ims: { headers: HEADERS, body: BODY },
      },
    },
  ],
  [
    'validators.inm-wrong-304:error',
    { name: 'If-None-Match with a wrong tag -> 304', probes: { 'inm-wrong': nm(HEADERS) } },
    { name: 'If-None-Match with a wrong tag -> 200', probes: {} },
  ],
  [
    'validators.range-ignored:info',
    { name: 'bytes=0-9 -> 200', probes: { range: { headers: HEADERS, body: BODY } } },
    { name: 'bytes=0-9 -> 206', probes: {} },
  ],
  [
    'validators.content-range-invalid:error',
    { name: '206 without Content-Range', probes: { range: partial(undefined, BODY.slice(0, 10)) } },
    { name: '206 with bytes 0-9/100', probes: { range: partial('bytes 0-9/100', BODY.slice(0, 10)) } },
  ],
  [
    'validators.content-range-invalid:error',
    {
      name: '206 with the wrong complete length',
      probes: { range: partial('bytes 0-9/99', BODY.slice(0, 10)) },
    },
    {
      name: '206 with an unknown complete length',
      probes: { range: partial('bytes 0-9/*', BODY.slice(0, 10)) },
    },
  ],
  [
    'validators.content-range-invalid:error',
    {
      name: '206 with a malformed Content-Range',
      probes: { range: partial('bytes=0-9/100', BODY.slice(0, 10)) },
    },
    {
      name: '206 for a 5-byte resource: bytes 0-4/5',
      probes: {
        primary: { headers: HEADERS, body: 'hello' },
        'coding-identity': { headers: HEADERS, body: 'hello' },
        range: partial('bytes 0-4/5', 'hello'),
      },
    },
  ],
  [
    'validators.content-range-invalid:error',
    {
      name: '206 starting elsewhere: bytes 10-19/100',
      probes: { range: partial('bytes 10-19/100', BODY.slice(0, 10)) },
    },
    {
      name: '206 for a short gzip-only primary, length from Content-Range',
      probes: {
        primary: { headers: with_({ 'Content-Encoding': 'gzip' }), body: 'zz' },
        'coding-identity': undefined,
        range: partial('bytes 0-4/5', 'hello'),
      },
    },
  ],
  [
    'validators.range-body-length:error',
    { name: '206 bytes 0-9 with 100 body bytes', probes: { range: partial('bytes 0-9/100', BODY) } },
    { name: '206 bytes 0-9 with 10 body bytes', probes: {} },
  ],
  [
    'validators.if-range-match-ignored:warning',
    {
      name: 'If-Range with the strong ETag -> 200',
      probes: {
        'if-range-match': {
          headers: HEADERS,
          body: BODY,
          requestHeaders: { Range: 'bytes=0-9', 'If-Range': ETAG },
        },
      },
    },
    {
      name: 'If-Range with a weak ETag -> 200 (strong comparison fails, RFC 9110 §13.1.5)',
      probes: {
        'if-range-match': {
          headers: HEADERS,
          body: BODY,
          requestHeaders: { Range: 'bytes=0-9', 'If-Range': 'W/"abc123"' },
        },
      },
    },
  ],
  [
    'validators.if-range-mismatch-partial:error',
    {
      name: 'If-Range with a stale ETag -> 206',
      probes: { 'if-range-mismatch': partial('bytes 0-9/100', BODY.slice(0, 10)) },
    },
    { name: 'If-Range with a stale ETag -> 200 with the whole body', probes: {} },
  ],
  [
    'validators.if-range-mismatch-partial:error',
    {
      name: 'If-Range with a stale ETag -> 200 with only 10 bytes',
      probes: { 'if-range-mismatch': { headers: HEADERS, body: BODY.slice(0, 10) } },
    },
    { name: 'no If-Range probe sent', probes: { 'if-range-mismatch': undefined } },
  ],
  [
    'validators.if-range-mismatch-partial:error',
    {
      name: 'If-Range with a stale ETag -> 200 carrying a Content-Range',
      probes: {
        'if-range-mismatch': { headers: with_({ 'Content-Range': 'bytes 0-9/100' }), body: BODY },
      },
    },
    {
      name: 'If-Range with a stale ETag -> 200 with a body of another full length (a dynamic page)',
      probes: { 'if-range-mismatch': { headers: HEADERS, body: `${BODY}more` } },
    },
  ],
  [
    'validators.content-range-invalid:error',
    {
      name: '206 bytes 0-9/100 while the identity body has 50 bytes',
      probes: { 'coding-identity': { headers: HEADERS, body: BODY.slice(0, 50) } },
    },
    {
      name: 'a HEAD primary (no body to measure) and no identity probe',
      probes: { primary: { method: 'HEAD', headers: HEADERS }, 'coding-identity': undefined },
    },
  ],
  [
    'validators.none:warning',
    {
      name: 'a GET 200 with neither validator (baseline for the POST case)',
      probes: { primary: { headers: with_({ ETag: undefined, 'Last-Modified': undefined }), body: BODY } },
    },
    {
      name: 'a POST primary (--method POST: not stored, RFC 9111 §3)',
      probes: {
        primary: {
          method: 'POST',
          headers: with_({ ETag: undefined, 'Last-Modified': undefined }),
          body: BODY,
        },
      },
    },
  ],
  [
    'validators.304-drops-field:error',
    { name: '304 without Vary after a 200', probes: { 'inm-match': nm(with_({ Vary: undefined })) } },
    {
      name: '304 without Vary after a 404 primary (nothing to compare with)',
      probes: {
        primary: { status: 404, headers: HEADERS, body: BODY },
        'inm-match': nm(with_({ Vary: undefined })),
      },
    },
  ],
];

describe('validators checks (issue 16 item 4)', () => {
  it('a well-behaved server gives no finding at all', () => {
    assert.deepEqual(ids({}), []);
  });

  firesAndQuietTests(cases, ids);

  it('one 304 finding per dropped field, naming it', () => {
    const got = checkValidators(
      recording({
        probes: { ...GOOD, 'inm-match': nm(with_({ ETag: undefined, Vary: undefined })) },
      }),
    ).filter((f) => f.id === 'validators.304-drops-field');
    assert.equal(got.length, 2);
    assert.match(got[0]!.message, /etag/);
    assert.match(got[1]!.message, /vary/);
    assert.equal(got[1]!.evidence, '200 vary: Accept-Encoding; 304 no vary field');
  });

  it('no primary response: nothing to say', () => {
    const rec = recording({ probes: { primary: { error: 'ECONNRESET' } } });
    assert.deepEqual(checkValidators(rec), []);
  });
});

/** Pieces a hostile or broken site might send in validators fields. */
const PIECES = [
  '"',
  'W/',
  'w/',
  'abc',
  ',',
  ' ',
  '*',
  'bytes',
  ' 0-9/',
  '0-9',
  '/',
  '100',
  '99999999999999999999',
  '-',
  'max-age=',
  'no-store',
  'public',
  'Accept-Encoding',
  'Wed, 25 Nov 2026 12:00:00 GMT',
  'gzip',
  'identity',
  '__proto__',
];

const { hostileExchange } = hostileFuzz(PIECES);

describe('a hostile site cannot break the validators check', () => {
  it('random probes: no throw, well-formed findings', () => {
    const names = [
      'etag',
      'last-modified',
      'cache-control',
      'expires',
      'vary',
      'date',
      'content-range',
      'accept-ranges',
      'content-encoding',
      'content-location',
      'if-range',
    ];
    const probeNames: ProbeName[] = [
      'primary',
      'repeat',
      'inm-match',
      'inm-wrong',
      'ims',
      'coding-identity',
      'range',
      'if-range-match',
      'if-range-mismatch',
    ];
    forAll(
      0x16a4,
      ITERATIONS / 10,
      (g) => {
        const probes: Partial<Record<ProbeName, ExchangeSpec>> = {};
        for (const p of probeNames)
          if (g.chance(0.8)) probes[p] = hostileExchange(g, names, 'https://h.example/');
        return probes;
      },
      (probes) => assertWellFormed(checkValidators(recording({ probes })), 'validators'),
    );
  });
});
