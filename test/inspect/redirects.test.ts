import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkRedirects, resolveRedirectTarget } from '../../src/inspect/checks/redirects.js';
import { assertWellFormed, hostileFuzz } from '../helpers/inspect-cases.js';
import { forAll, ITERATIONS } from '../helpers/random.js';
import { type ExchangeSpec, recording } from '../helpers/recording.js';

const A = 'http://site.example/a';
const B = 'https://site.example/a';
const C = 'https://site.example/b';
const D = 'https://site.example/c';

const hop = (
  url: string,
  status: number,
  location?: string,
  headers: Record<string, string> = {},
): ExchangeSpec => ({
  url,
  status,
  headers: location === undefined ? headers : { Location: location, ...headers },
});
const final = (url: string): ExchangeSpec => ({ url, status: 200 });

/** The ids a chain gives, each with its severity. */
function ids(chain: ExchangeSpec[]): string[] {
  const url = chain[0]?.url ?? A;
  return checkRedirects(recording({ url, redirects: chain })).map((f) => `${f.id}:${f.severity}`);
}

interface Case {
  name: string;
  chain: ExchangeSpec[];
  fires: string;
}

// For every id: one chain that makes it fire and one that keeps it quiet.
const cases: { fire: Case; quiet: Case }[] = [
  {
    fire: { name: 'one 308 hop', chain: [hop(A, 308, B), final(B)], fires: 'redirects.chain:info' },
    quiet: { name: 'no redirect at all', chain: [final(A)], fires: 'redirects.chain:info' },
  },
  {
    fire: {
      name: '302 without Location',
      chain: [hop(B, 302)],
      fires: 'redirects.location-missing:error',
    },
    quiet: {
      name: '302 with a relative Location',
      chain: [hop(B, 302, '/b'), final(C)],
      fires: 'redirects.location-missing:error',
    },
  },
  {
    fire: {
      name: 'Location with a raw space',
      chain: [hop(B, 301, '/a b', { 'Cache-Control': 'no-cache' }), final(C)],
      fires: 'redirects.location-invalid:error',
    },
    quiet: {
      name: 'Location percent-encoded',
      chain: [hop(B, 301, '/a%20b', { 'Cache-Control': 'no-cache' }), final(C)],
      fires: 'redirects.location-invalid:error',
    },
  },
  {
    fire: {
      name: 'B -> C -> B (the prober stops at the repeat)',
      chain: [hop(B, 302, C), hop(C, 302, B)],
      fires: 'redirects.loop:error',
    },
    quiet: {
      name: 'B -> C -> D, all different',
      chain: [hop(B, 302, C), hop(C, 302, D), final(D)],
      fires: 'redirects.loop:error',
    },
  },
  {
    fire: {
      name: 'a redirect to itself (fragment ignored)',
      chain: [hop(B, 307, '/a#top')],
      fires: 'redirects.loop:error',
    },
    quiet: {
      name: 'a redirect to the same path with another query',
      chain: [hop(B, 307, '/a?x=1'), final(`${B}?x=1`)],
      fires: 'redirects.loop:error',
    },
  },
  {
    fire: { name: 'http -> https', chain: [hop(A, 308, B), final(B)], fires: 'redirects.https-upgrade:info' },
    quiet: {
      name: 'https -> https',
      chain: [hop(B, 302, C), final(C)],
      fires: 'redirects.https-upgrade:info',
    },
  },
  {
    fire: {
      name: 'https -> http',
      chain: [hop(B, 302, 'http://site.example/b'), final('http://site.example/b')],
      fires: 'redirects.https-downgrade:warning',
    },
    quiet: {
      name: 'http -> https',
      chain: [hop(A, 308, B), final(B)],
      fires: 'redirects.https-downgrade:warning',
    },
  },
  {
    fire: {
      name: '301 then a later 302',
      chain: [hop(A, 301, B, { 'Cache-Control': 'no-cache' }), hop(B, 302, C), final(C)],
      fires: 'redirects.permanent-to-temporary:warning',
    },
    quiet: {
      name: '302 then a later 301 (temporary first)',
      chain: [hop(A, 302, B), hop(B, 301, C, { 'Cache-Control': 'no-cache' }), final(C)],
      fires: 'redirects.permanent-to-temporary:warning',
    },
  },
  {
    fire: {
      name: '308 with no Cache-Control or Expires',
      chain: [hop(A, 308, B), final(B)],
      fires: 'redirects.permanent-cached-heuristically:info',
    },
    quiet: {
      name: '301 with Cache-Control: max-age=3600',
      chain: [hop(A, 301, B, { 'Cache-Control': 'max-age=3600' }), final(B)],
      fires: 'redirects.permanent-cached-heuristically:info',
    },
  },
  {
    fire: {
      name: 'a bare 301',
      chain: [hop(A, 301, B), final(B)],
      fires: 'redirects.permanent-cached-heuristically:info',
    },
    quiet: {
      name: '301 with Cache-Control: no-cache',
      chain: [hop(A, 301, B, { 'Cache-Control': 'no-cache' }), final(B)],
      fires: 'redirects.permanent-cached-heuristically:info',
    },
  },
  {
    fire: {
      name: '302 with max-age of a year',
      chain: [hop(B, 302, C, { 'Cache-Control': 'max-age=31536000' }), final(C)],
      fires: 'redirects.temporary-long-lifetime:warning',
    },
    quiet: {
      name: '302 with max-age of a minute',
      chain: [hop(B, 302, C, { 'Cache-Control': 'max-age=60' }), final(C)],
      fires: 'redirects.temporary-long-lifetime:warning',
    },
  },
  {
    fire: {
      name: '307 with s-maxage of a week (shared caches)',
      chain: [hop(B, 307, C, { 'Cache-Control': 'public, s-maxage=604800' }), final(C)],
      fires: 'redirects.temporary-long-lifetime:warning',
    },
    quiet: {
      name: '307 with a long max-age but no-store',
      chain: [hop(B, 307, C, { 'Cache-Control': 'no-store, max-age=604800' }), final(C)],
      fires: 'redirects.temporary-long-lifetime:warning',
    },
  },
  {
    fire: {
      name: '303 with Expires two days after Date',
      chain: [
        hop(B, 303, C, { Date: 'Wed, 25 Nov 2026 12:00:00 GMT', Expires: 'Fri, 27 Nov 2026 12:00:00 GMT' }),
        final(C),
      ],
      fires: 'redirects.temporary-long-lifetime:warning',
    },
    quiet: {
      name: '303 with Expires an hour after Date',
      chain: [
        hop(B, 303, C, { Date: 'Wed, 25 Nov 2026 12:00:00 GMT', Expires: 'Wed, 25 Nov 2026 13:00:00 GMT' }),
        final(C),
      ],
      fires: 'redirects.temporary-long-lifetime:warning',
    },
  },
  {
    fire: {
      name: 'six redirects',
      chain: [1, 2, 3, 4, 5, 6].map((i) => hop(`${C}${i}`, 302, `${C}${i + 1}`)).concat(final(`${C}7`)),
      fires: 'redirects.too-many:warning',
    },
    quiet: {
      name: 'five redirects',
      chain: [1, 2, 3, 4, 5].map((i) => hop(`${C}${i}`, 302, `${C}${i + 1}`)).concat(final(`${C}6`)),
      fires: 'redirects.too-many:warning',
    },
  },
];

describe('redirects checks (issue 16 item 1)', () => {
  for (const { fire, quiet } of cases) {
    it(`${fire.fires}: fires on ${fire.name}`, () => {
      assert.ok(ids(fire.chain).includes(fire.fires), ids(fire.chain).join(' '));
    });
    it(`${quiet.fires}: quiet on ${quiet.name}`, () => {
      assert.ok(!ids(quiet.chain).includes(quiet.fires), ids(quiet.chain).join(' '));
    });
  }

  it('the chain finding lists every hop with its status', () => {
    const [chain] = checkRedirects(
      recording({ url: A, redirects: [hop(A, 308, B), hop(B, 302, C), final(C)] }),
    );
    assert.equal(chain?.evidence, `308 ${A} -> 302 ${B} -> 200 ${C}`);
    assert.equal(chain?.message, '2 redirects before the answer');
  });

  it('a Gatehouse-style directory 301 (no-cache, relative Location) gives only the chain', () => {
    const got = ids([hop(B, 301, '/a/', { 'Cache-Control': 'no-cache' }), final(`${B}/`)]);
    assert.deepEqual(got, ['redirects.chain:info']);
  });

  it('a failed hop ends the chain without inventing findings', () => {
    const got = ids([hop(A, 308, B), { url: B, error: 'ECONNREFUSED' }]);
    assert.ok(!got.some((x) => x.endsWith(':error')), got.join(' '));
  });

  it('a __proto__ field on a redirect is read as a field, not a prototype', () => {
    const headers: [string, string][] = [
      ['__proto__', '{}'],
      ['location', C],
      ['cache-control', 'max-age=31536000'],
    ];
    const got = ids([{ url: B, status: 302, headers }, final(C)]);
    assert.ok(got.includes('redirects.temporary-long-lifetime:warning'), got.join(' '));
  });

  it('findings carry area, rfc and a one-line message', () => {
    for (const f of checkRedirects(recording({ url: B, redirects: [hop(B, 302)] }))) {
      assert.equal(f.area, 'redirects');
      assert.match(f.rfc, /^RFC \d+ §/);
      assert.doesNotMatch(f.message, /\n|\.$/);
    }
  });
});

describe('resolveRedirectTarget (RFC 9110 §10.2.2)', () => {
  const cases: [string, string, string | null][] = [
    ['relative path', '/b?q=1', 'https://site.example/b?q=1'],
    ['absolute URL', 'https://other.example/', 'https://other.example/'],
    ['network-path reference', '//other.example/x', 'https://other.example/x'],
    ['fragment dropped', '/b#f', 'https://site.example/b'],
    ['empty', '', null],
    ['raw space', '/a b', null],
    ['raw non-ASCII', '/caf\u00e9', null],
    ['bad percent escape', '/a%zz', null],
    ['CR LF', '/a\r\nSet-Cookie: x=1', null],
    ['scheme without a valid URL', 'http://[::1', null],
  ];
  for (const [name, location, want] of cases) {
    it(name, () => assert.equal(resolveRedirectTarget(location, B), want));
  }
});

/** Pieces a hostile or broken site might send in redirects fields. */
const PIECES = [
  '/',
  '//',
  'http://',
  'https://',
  'a',
  '%',
  '%2',
  '%41',
  ' ',
  '#',
  '?',
  '\\\\',
  ':',
  '@',
  '[::1]',
  'max-age=',
  's-maxage=',
  'no-cache',
  '99999999999999999999',
  '0',
  ',',
  '"',
  'Wed, 25 Nov 2026 12:00:00 GMT',
  '__proto__',
];

const { hostileExchange } = hostileFuzz(PIECES);

describe('a hostile site cannot break the redirects check', () => {
  it('random chains: no throw, well-formed findings', () => {
    forAll(
      0x16a1,
      ITERATIONS / 10,
      (g) => {
        const urls = [
          'http://h.example/',
          'https://h.example/a',
          'https://h.example/b',
          'http://h.example/c',
        ];
        return Array.from({ length: 1 + g.int(8) }, () =>
          hostileExchange(g, ['location', 'cache-control', 'expires', 'date'], g.pick(urls)),
        );
      },
      (chain) =>
        assertWellFormed(checkRedirects(recording({ url: chain[0]!.url!, redirects: chain })), 'redirects'),
    );
  });
});
