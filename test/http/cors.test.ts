import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  CORS_DEFAULTS,
  type CorsDecision,
  type CorsHeaderRule,
  type CorsPolicyInput,
  type CorsRequest,
  compileCorsPolicy,
  corsHeaderRule,
  corsOptionIssues,
  decideCors,
  isOriginAllowed,
  MAX_REQUEST_HEADER_NAMES,
  type OriginRule,
  parseOriginRule,
} from '../../src/http/cors.js';

const A = 'https://a.com';
const METHODS = CORS_DEFAULTS.methods.join(', ');

/** A decision as plain data: headers as an object keyed by name, so cases read like responses. */
interface Seen {
  kind: CorsDecision['kind'];
  headers?: Record<string, string>;
  vary?: string | undefined;
  status?: number;
  reason?: string;
}

function see(d: CorsDecision): Seen {
  const out: Seen = { kind: d.kind, vary: d.vary };
  if ('headers' in d) out.headers = Object.fromEntries(d.headers);
  if ('status' in d) out.status = d.status;
  if ('reason' in d) out.reason = d.reason;
  return out;
}

function req(r: Partial<CorsRequest>): CorsRequest {
  return { method: 'GET', origin: undefined, acrm: undefined, acrh: undefined, ...r };
}

function preflight(origin: string | undefined, acrm: string, acrh?: string): CorsRequest {
  return { method: 'OPTIONS', origin, acrm, acrh };
}

describe('parseOriginRule (configured origins)', () => {
  const cases: [string, string, OriginRule['kind'], string?][] = [
    ['"*" is the wildcard', '*', 'any'],
    ['"null" is the opaque origin, listed literally', 'null', 'null'],
    ['exact origin kept as is', 'https://a.com', 'exact', 'https://a.com'],
    ['scheme and host lowercased', 'HTTPS://A.Com', 'exact', 'https://a.com'],
    ['default port dropped (https 443)', 'https://a.com:443', 'exact', 'https://a.com'],
    ['default port dropped (http 80)', 'http://a.com:80', 'exact', 'http://a.com'],
    ['other port kept', 'https://a.com:8443', 'exact', 'https://a.com:8443'],
    ['trailing slash dropped', 'https://a.com/', 'exact', 'https://a.com'],
    ['IPv6 literal', 'http://[::1]:3000', 'exact', 'http://[::1]:3000'],
    ['IDN host in punycode', 'https://bücher.example', 'exact', 'https://xn--bcher-kva.example'],
    ['non-special scheme with a host (extension origin)', 'chrome-extension://abcdef', 'exact'],
    ['subdomain pattern', 'https://*.example.com', 'subdomains'],
    ['path -> invalid', 'https://a.com/app', 'invalid'],
    ['query -> invalid', 'https://a.com?x=1', 'invalid'],
    ['fragment -> invalid', 'https://a.com#x', 'invalid'],
    ['credentials -> invalid', 'https://user:pw@a.com', 'invalid'],
    ['no scheme -> invalid', 'a.com', 'invalid'],
    ['host:port without scheme -> invalid', 'localhost:3000', 'invalid'],
    ['empty host -> invalid', 'https://', 'invalid'],
    ['bad port -> invalid', 'https://a.com:99999', 'invalid'],
    ['* inside a label -> invalid', 'https://*a.com', 'invalid'],
    ['* in a later label -> invalid', 'https://a.*.com', 'invalid'],
    ['two wildcards -> invalid', 'https://*.*.com', 'invalid'],
    ['pattern without a scheme -> invalid', '*.example.com', 'invalid'],
    ['regex syntax is not special -> invalid', 'https://.*\\.example\\.com', 'invalid'],
    ['pattern over an IP literal -> invalid', 'https://*.[::1]', 'invalid'],
  ];
  for (const [name, entry, kind, origin] of cases) {
    it(name, () => {
      const r = parseOriginRule(entry);
      assert.equal(r.kind, kind, JSON.stringify(r));
      if (origin !== undefined && r.kind === 'exact') assert.equal(r.origin, origin);
    });
  }

  it('subdomain pattern normalises scheme, host and default port', () => {
    assert.deepEqual(parseOriginRule('HTTPS://*.Example.COM:443'), {
      kind: 'subdomains',
      scheme: 'https',
      suffix: '.example.com',
      port: '',
    });
    assert.deepEqual(parseOriginRule('http://*.localhost:5173'), {
      kind: 'subdomains',
      scheme: 'http',
      suffix: '.localhost',
      port: '5173',
    });
  });
});

describe('isOriginAllowed (the allow-list alone, shared with WebSocket and proxy)', () => {
  const policy = compileCorsPolicy({
    origins: ['https://a.com', 'https://*.example.com', 'http://localhost:5173', 'null'],
  });
  const cases: [string, string | undefined, boolean][] = [
    ['listed exact origin', 'https://a.com', true],
    ['no Origin', undefined, false],
    ['other scheme (http vs https)', 'http://a.com', false],
    ['other port', 'https://a.com:8443', false],
    ['explicit default port: browsers never serialise it', 'https://a.com:443', false],
    ['trailing slash: not a serialised origin', 'https://a.com/', false],
    ['host in capitals: host compared lowercased', 'https://A.COM', true],
    ['scheme in capitals: scheme compared as serialised', 'HTTPS://A.COM', false],
    ['lookalike suffix a.com.evil.net', 'https://a.com.evil.net', false],
    ['lookalike prefix evil-a.com', 'https://evil-a.com', false],
    ['trailing-dot FQDN a.com.', 'https://a.com.', false],
    ['userinfo smuggled', 'https://a.com@evil.net', false],
    ['two origins joined by a proxy', 'https://a.com, https://evil.net', false],
    ['garbage', 'not an origin', false],
    ['empty string', '', false],
    ['listed null', 'null', true],
    ['pattern: one-label subdomain', 'https://app.example.com', true],
    ['pattern: deeper subdomain', 'https://a.b.example.com', true],
    ['pattern: not the apex', 'https://example.com', false],
    ['pattern: not example.com.evil.net', 'https://example.com.evil.net', false],
    ['pattern: not evilexample.com', 'https://evilexample.com', false],
    ['pattern: not another scheme', 'http://app.example.com', false],
    ['pattern: not another port', 'https://app.example.com:8443', false],
    ['pattern: not an empty label', 'https://.example.com', false],
    ['pattern: not a literal *', 'https://*.example.com', false],
    ['port listed', 'http://localhost:5173', true],
    ['port listed, other port', 'http://localhost:5174', false],
  ];
  for (const [name, origin, allowed] of cases) {
    it(`${name} -> ${allowed ? 'allowed' : 'not allowed'}`, () => {
      assert.equal(isOriginAllowed(policy, origin), allowed);
    });
  }

  it('wildcard allows any serialised origin, but not null unless listed, nor garbage', () => {
    const any = compileCorsPolicy({ origins: ['*'] });
    assert.equal(isOriginAllowed(any, 'https://anything.example'), true);
    assert.equal(isOriginAllowed(any, 'null'), false);
    assert.equal(isOriginAllowed(any, 'garbage'), false);
    assert.equal(isOriginAllowed(compileCorsPolicy({ origins: ['*', 'null'] }), 'null'), true);
  });

  it('null is not allowed unless listed', () => {
    assert.equal(isOriginAllowed(compileCorsPolicy({ origins: [A] }), 'null'), false);
  });
});

describe('decideCors: requests that are not preflights (Fetch §4.10 CORS check)', () => {
  const listed: CorsPolicyInput = { origins: [A] };
  const cases: [string, CorsPolicyInput, Partial<CorsRequest>, Seen][] = [
    [
      'no Origin -> no CORS headers, Vary: Origin (a request with Origin gets another answer)',
      listed,
      {},
      { kind: 'none', headers: {}, vary: 'Origin' },
    ],
    [
      'allowed Origin -> Access-Control-Allow-Origin echoes it, Vary: Origin',
      listed,
      { origin: A },
      { kind: 'simple', headers: { 'Access-Control-Allow-Origin': A }, vary: 'Origin' },
    ],
    [
      'disallowed Origin -> no Access-Control-Allow-Origin, Vary: Origin',
      listed,
      { origin: 'https://b.com' },
      { kind: 'denied', vary: 'Origin' },
    ],
    [
      'allowed Origin with its host in capitals -> echoed as received',
      listed,
      { origin: 'https://A.COM' },
      { kind: 'simple', headers: { 'Access-Control-Allow-Origin': 'https://A.COM' }, vary: 'Origin' },
    ],
    [
      'garbage Origin -> denied',
      listed,
      { origin: 'https://a.com/path' },
      { kind: 'denied', vary: 'Origin' },
    ],
    ['Origin: null, not listed -> denied', listed, { origin: 'null' }, { kind: 'denied', vary: 'Origin' }],
    [
      'Origin: null, listed -> echoed "null"',
      { origins: ['null'] },
      { origin: 'null' },
      { kind: 'simple', headers: { 'Access-Control-Allow-Origin': 'null' }, vary: 'Origin' },
    ],
    [
      'wildcard, no Origin -> "*" anyway, no Vary (same answer for everyone)',
      { origins: ['*'] },
      {},
      { kind: 'none', headers: { 'Access-Control-Allow-Origin': '*' }, vary: undefined },
    ],
    [
      'wildcard, any Origin -> "*", no Vary',
      { origins: ['*'] },
      { origin: 'https://x.net' },
      { kind: 'simple', headers: { 'Access-Control-Allow-Origin': '*' }, vary: undefined },
    ],
    [
      'wildcard with a listed origin too -> still "*" for it (no echo without Vary)',
      { origins: ['*', A] },
      { origin: A },
      { kind: 'simple', headers: { 'Access-Control-Allow-Origin': '*' }, vary: undefined },
    ],
    [
      'wildcard, Origin: null -> "*" (the answer does not depend on Origin)',
      { origins: ['*'] },
      { origin: 'null' },
      { kind: 'simple', headers: { 'Access-Control-Allow-Origin': '*' }, vary: undefined },
    ],
    [
      'credentials -> echo plus Access-Control-Allow-Credentials: true (Fetch §3.2.5)',
      { origins: [A], credentials: true },
      { origin: A },
      {
        kind: 'simple',
        headers: { 'Access-Control-Allow-Origin': A, 'Access-Control-Allow-Credentials': 'true' },
        vary: 'Origin',
      },
    ],
    [
      'exposeHeaders -> Access-Control-Expose-Headers (Fetch §3.2.3)',
      { origins: [A], exposeHeaders: ['ETag', 'X-Request-Id'] },
      { origin: A },
      {
        kind: 'simple',
        headers: { 'Access-Control-Allow-Origin': A, 'Access-Control-Expose-Headers': 'ETag, X-Request-Id' },
        vary: 'Origin',
      },
    ],
    [
      'subdomain pattern match -> echo',
      { origins: ['https://*.a.com'] },
      { origin: 'https://x.a.com' },
      { kind: 'simple', headers: { 'Access-Control-Allow-Origin': 'https://x.a.com' }, vary: 'Origin' },
    ],
    [
      'subdomain pattern, apex -> denied',
      { origins: ['https://*.a.com'] },
      { origin: A },
      { kind: 'denied', vary: 'Origin' },
    ],
    [
      'OPTIONS without Access-Control-Request-Method -> not a preflight (Fetch §3.2.2), simple headers',
      listed,
      { method: 'OPTIONS', origin: A },
      { kind: 'simple', headers: { 'Access-Control-Allow-Origin': A }, vary: 'Origin' },
    ],
    [
      'Access-Control-Request-Method on a GET -> not a preflight',
      listed,
      { method: 'GET', origin: A, acrm: 'PUT' },
      { kind: 'simple', headers: { 'Access-Control-Allow-Origin': A }, vary: 'Origin' },
    ],
  ];
  for (const [name, input, r, want] of cases) {
    it(name, () => assert.deepEqual(see(decideCors(compileCorsPolicy(input), req(r))), want));
  }

  it('listed origins get one precomputed answer (no per-request allocation)', () => {
    const p = compileCorsPolicy(listed);
    assert.equal(decideCors(p, req({ origin: A })), decideCors(p, req({ origin: A })));
    assert.equal(decideCors(p, req({})), decideCors(p, req({})));
    assert.equal(
      decideCors(p, req({ origin: 'https://b.com' })),
      decideCors(p, req({ origin: 'https://x' })),
    );
  });
});

describe('decideCors: preflights (Fetch §4.8 CORS-preflight fetch)', () => {
  const base: CorsPolicyInput = { origins: [A], headers: ['Content-Type', 'X-Token'] };
  const allowed = (extra: Record<string, string> = {}, headers = 'Content-Type, X-Token'): Seen => ({
    kind: 'preflight',
    status: 200,
    headers: {
      'Access-Control-Allow-Origin': A,
      'Access-Control-Allow-Methods': METHODS,
      ...(headers ? { 'Access-Control-Allow-Headers': headers } : {}),
      'Access-Control-Max-Age': '86400',
      ...extra,
    },
    vary: 'Origin',
  });
  const denied = (reason: string, vary: string | undefined = 'Origin'): Seen => ({
    kind: 'preflight-denied',
    status: 200,
    reason,
    vary,
  });
  const cases: [string, CorsPolicyInput, CorsRequest, Seen][] = [
    ['allowed origin and method -> allowed', base, preflight(A, 'PUT'), allowed()],
    [
      'disallowed origin -> denied (no Access-Control-*)',
      base,
      preflight('https://b.com', 'PUT'),
      denied('origin'),
    ],
    ['lookalike origin -> denied', base, preflight('https://a.com.evil.net', 'PUT'), denied('origin')],
    [
      'OPTIONS with Access-Control-Request-Method but no Origin -> not a CORS request',
      base,
      preflight(undefined, 'PUT'),
      { kind: 'none', headers: {}, vary: 'Origin' },
    ],
    [
      'method not in the list -> denied',
      { ...base, methods: ['GET', 'POST'] },
      preflight(A, 'DELETE'),
      denied('method'),
    ],
    [
      'method compared case-sensitively: patch is not PATCH (RFC 9110 §9.1)',
      base,
      preflight(A, 'patch'),
      denied('method'),
    ],
    [
      'CORS-safelisted method missing from the list -> denied (stricter than the browser)',
      { ...base, methods: ['PUT'] },
      preflight(A, 'POST'),
      denied('method'),
    ],
    ['method that is not a token -> denied', base, preflight(A, 'P UT'), denied('method')],
    [
      'methods "*" without credentials -> any method',
      { ...base, methods: ['*'] },
      preflight(A, 'PROPFIND'),
      allowed({ 'Access-Control-Allow-Methods': '*' }),
    ],
    [
      'listed request headers, any case -> allowed',
      base,
      preflight(A, 'PUT', 'content-type,x-TOKEN'),
      allowed(),
    ],
    ['unlisted request header -> denied', base, preflight(A, 'PUT', 'x-token, x-other'), denied('headers')],
    [
      'CORS-safelisted names (Accept, Accept-Language, Content-Language) need no listing (Fetch §2.2.2)',
      { origins: [A], headers: [] },
      preflight(A, 'PUT', 'accept, accept-language, content-language'),
      allowed({}, ''),
    ],
    [
      'content-type listed by the browser (unsafelisted value) needs listing',
      { origins: [A], headers: [] },
      preflight(A, 'PUT', 'content-type'),
      denied('headers'),
    ],
    [
      'header name that is not a token -> denied',
      { ...base, reflectHeaders: true },
      preflight(A, 'PUT', 'x-token, x(bad)'),
      denied('headers', 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers'),
    ],
    [
      'headers "*" -> any header (Fetch §3.2.3)',
      { origins: [A], headers: ['*'] },
      preflight(A, 'PUT', 'x-anything'),
      allowed({}, '*'),
    ],
    [
      'headers "*" does not cover Authorization (CORS non-wildcard request-header name)',
      { origins: [A], headers: ['*'] },
      preflight(A, 'PUT', 'authorization'),
      denied('headers'),
    ],
    [
      'Authorization named -> allowed',
      { origins: [A], headers: ['*', 'Authorization'] },
      preflight(A, 'PUT', 'authorization, x-anything'),
      allowed({}, '*, Authorization'),
    ],
    ['Authorization not named -> denied', base, preflight(A, 'GET', 'authorization'), denied('headers')],
    [
      'reflect mode -> the requested names come back, Vary names the request fields',
      { origins: [A], reflectHeaders: true },
      preflight(A, 'PUT', 'X-Foo, x-bar'),
      {
        ...allowed({ 'Access-Control-Allow-Headers': 'x-foo, x-bar' }, ''),
        vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
      },
    ],
    [
      'reflect mode without requested headers -> no Access-Control-Allow-Headers',
      { origins: [A], reflectHeaders: true },
      preflight(A, 'PUT'),
      { ...allowed({}, ''), vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers' },
    ],
    [
      'reflect mode without a headers list -> Authorization reflected too',
      { origins: [A], reflectHeaders: true },
      preflight(A, 'PUT', 'authorization'),
      {
        ...allowed({ 'Access-Control-Allow-Headers': 'authorization' }, ''),
        vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
      },
    ],
    [
      'reflect mode with a list naming Authorization -> reflected',
      { origins: [A], reflectHeaders: true, headers: ['authorization'] },
      preflight(A, 'PUT', 'authorization'),
      {
        ...allowed({ 'Access-Control-Allow-Headers': 'authorization' }, ''),
        vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
      },
    ],
    [
      'credentials -> echo and Access-Control-Allow-Credentials: true',
      { ...base, credentials: true },
      preflight(A, 'PUT'),
      allowed({ 'Access-Control-Allow-Credentials': 'true' }),
    ],
    [
      'maxAgeSec -> Access-Control-Max-Age (Fetch §4.9 CORS-preflight cache)',
      { ...base, maxAgeSec: 600 },
      preflight(A, 'PUT'),
      allowed({ 'Access-Control-Max-Age': '600' }),
    ],
    [
      'preflightStatus 204',
      { ...base, preflightStatus: 204 },
      preflight(A, 'PUT'),
      { ...allowed(), status: 204 },
    ],
    [
      'preflightStatus 204 also on denials',
      { ...base, preflightStatus: 204 },
      preflight('https://b.com', 'PUT'),
      { ...denied('origin'), status: 204 },
    ],
    [
      'exposeHeaders are not sent on preflights (Fetch §3.2.3)',
      { ...base, exposeHeaders: ['ETag'] },
      preflight(A, 'PUT'),
      allowed(),
    ],
    [
      'wildcard with a headers list -> "*", no Vary',
      { origins: ['*'], headers: [] },
      preflight('https://x.net', 'PUT'),
      {
        kind: 'preflight',
        status: 200,
        headers: {
          'Access-Control-Allow-Origin': '*',
          'Access-Control-Allow-Methods': METHODS,
          'Access-Control-Max-Age': '86400',
        },
        vary: undefined,
      },
    ],
    [
      'wildcard in reflect mode -> Vary names only the request fields',
      { origins: ['*'], reflectHeaders: true },
      preflight('https://x.net', 'PUT', 'x-a'),
      {
        kind: 'preflight',
        status: 200,
        headers: {
          'Access-Control-Allow-Origin': '*',
          'Access-Control-Allow-Methods': METHODS,
          'Access-Control-Max-Age': '86400',
          'Access-Control-Allow-Headers': 'x-a',
        },
        vary: 'Access-Control-Request-Method, Access-Control-Request-Headers',
      },
    ],
    [
      'subdomain pattern -> echo',
      { origins: ['https://*.a.com'], headers: [] },
      preflight('https://x.a.com', 'PUT'),
      {
        kind: 'preflight',
        status: 200,
        headers: {
          'Access-Control-Allow-Origin': 'https://x.a.com',
          'Access-Control-Allow-Methods': METHODS,
          'Access-Control-Max-Age': '86400',
        },
        vary: 'Origin',
      },
    ],
  ];
  for (const [name, input, r, want] of cases) {
    it(name, () => assert.deepEqual(see(decideCors(compileCorsPolicy(input), r)), want));
  }
});

describe('corsHeaderRule (headers and reflectHeaders read together)', () => {
  const cases: [string, readonly string[] | undefined, boolean | undefined, CorsHeaderRule][] = [
    ['neither given (the default) -> reflect any', undefined, undefined, { kind: 'reflect-any' }],
    ['reflectHeaders true, no list -> reflect any', undefined, true, { kind: 'reflect-any' }],
    ['reflectHeaders false, no list -> safelisted only', undefined, false, { kind: 'safelisted' }],
    [
      'a list alone -> the list, sent as configured',
      ['X-A'],
      undefined,
      { kind: 'list', names: ['X-A'], echo: false },
    ],
    [
      'a list and reflectHeaders true -> the list, echoed',
      ['X-A'],
      true,
      { kind: 'list', names: ['X-A'], echo: true },
    ],
    [
      'an empty list -> the list (nothing beyond safelisted)',
      [],
      undefined,
      { kind: 'list', names: [], echo: false },
    ],
  ];
  for (const [name, headers, reflect, want] of cases) {
    it(name, () => assert.deepEqual(corsHeaderRule(headers, reflect), want));
  }
});

describe('decideCors: Access-Control-Request-Headers (default reflection, lists, safelisted only)', () => {
  const REFLECT_VARY = 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers';
  const names = (n: number) => Array.from({ length: n }, (_, i) => `x-h${i}`).join(', ');
  /** A passing preflight: Allow-Headers `allowHeaders` (none when undefined). */
  const ok = (
    allowHeaders: string | undefined,
    o: { vary?: string; extra?: Record<string, string> } = {},
  ): Seen => ({
    kind: 'preflight',
    status: 200,
    headers: {
      'Access-Control-Allow-Origin': A,
      ...o.extra,
      'Access-Control-Allow-Methods': METHODS,
      'Access-Control-Max-Age': '86400',
      ...(allowHeaders === undefined ? {} : { 'Access-Control-Allow-Headers': allowHeaders }),
    },
    vary: o.vary ?? REFLECT_VARY,
  });
  const no = (reason: string, vary = REFLECT_VARY): Seen => ({
    kind: 'preflight-denied',
    status: 200,
    reason,
    vary,
  });
  const dflt: CorsPolicyInput = { origins: [A] };
  const safelisted: CorsPolicyInput = { origins: [A], reflectHeaders: false };
  const list: CorsPolicyInput = { origins: [A], headers: ['Content-Type', 'X-Token'] };
  const cases: [string, CorsPolicyInput, string | undefined, Seen][] = [
    [
      'default: requested names echoed (lowercase), Vary names the request fields',
      dflt,
      'Content-Type, X-Foo',
      ok('content-type, x-foo'),
    ],
    [
      'default: Authorization echoed too (as the cors middleware)',
      dflt,
      'authorization, content-type',
      ok('authorization, content-type'),
    ],
    [
      'default: no Access-Control-Request-Headers -> no Allow-Headers, same Vary',
      dflt,
      undefined,
      ok(undefined),
    ],
    ['default: empty field -> no Allow-Headers', dflt, '', ok(undefined)],
    ['default: empty elements and OWS dropped (RFC 9110 §5.6.1)', dflt, ' , x-a ,,\tx-b ', ok('x-a, x-b')],
    ['default: a name that is not a token -> denied, nothing echoed', dflt, 'x-a, x(b)', no('headers')],
    ['default: a quoted string -> denied', dflt, '"x-a"', no('headers')],
    ['default: a space inside a name -> denied', dflt, 'x a', no('headers')],
    ['default: obs-text in a name -> denied', dflt, 'x-\u00e9', no('headers')],
    ['default: CR LF in the field -> denied (never echoed)', dflt, 'x-a\r\nSet-Cookie: a=b', no('headers')],
    ['default: a trailing colon -> denied', dflt, 'x-a:', no('headers')],
    ['default: a requested "*" -> denied (echoed it would be the wildcard)', dflt, 'x-a, *', no('headers')],
    [
      'a list "*" (no echo): a requested "*" -> passes, the list is sent',
      { origins: [A], headers: ['*'] },
      '*',
      ok('*', { vary: 'Origin' }),
    ],
    [
      `default: ${MAX_REQUEST_HEADER_NAMES} names -> echoed`,
      dflt,
      names(MAX_REQUEST_HEADER_NAMES),
      ok(names(MAX_REQUEST_HEADER_NAMES)),
    ],
    [
      `default: ${MAX_REQUEST_HEADER_NAMES + 1} names -> denied`,
      dflt,
      names(MAX_REQUEST_HEADER_NAMES + 1),
      no('headers'),
    ],
    [
      'default with credentials -> echoed, Authorization too, with Allow-Credentials',
      { origins: [A], credentials: true },
      'authorization, content-type',
      ok('authorization, content-type', { extra: { 'Access-Control-Allow-Credentials': 'true' } }),
    ],
    [
      'default under origins "*" -> Allow-Origin "*", names echoed, Vary without Origin',
      { origins: ['*'] },
      'authorization',
      {
        ...ok('authorization', { vary: 'Access-Control-Request-Method, Access-Control-Request-Headers' }),
        headers: {
          'Access-Control-Allow-Origin': '*',
          'Access-Control-Allow-Methods': METHODS,
          'Access-Control-Max-Age': '86400',
          'Access-Control-Allow-Headers': 'authorization',
        },
      },
    ],
    [
      'reflectHeaders true, no list -> as the default',
      { origins: [A], reflectHeaders: true },
      'authorization',
      ok('authorization'),
    ],
    [
      'reflectHeaders false, no list: safelisted names pass, no Allow-Headers, Vary: Origin',
      safelisted,
      'accept, content-language',
      ok(undefined, { vary: 'Origin' }),
    ],
    [
      'reflectHeaders false, no list: content-type (unsafelisted value) -> denied',
      safelisted,
      'content-type',
      no('headers', 'Origin'),
    ],
    [
      'reflectHeaders false, no list: authorization -> denied',
      safelisted,
      'authorization',
      no('headers', 'Origin'),
    ],
    [
      'reflectHeaders false, no list: no requested headers -> passes',
      safelisted,
      undefined,
      ok(undefined, { vary: 'Origin' }),
    ],
    [
      'a list: listed names in any case -> the list is sent, Vary: Origin',
      list,
      'x-token, CONTENT-TYPE',
      ok('Content-Type, X-Token', { vary: 'Origin' }),
    ],
    ['a list: an unlisted name -> denied', list, 'x-token, x-other', no('headers', 'Origin')],
    ['a list: Authorization not listed -> denied', list, 'authorization', no('headers', 'Origin')],
    [
      'a list with reflectHeaders true: listed names echoed',
      { ...list, reflectHeaders: true },
      'x-token',
      ok('x-token'),
    ],
    [
      'a list with reflectHeaders true: an unlisted name -> denied',
      { ...list, reflectHeaders: true },
      'x-other',
      no('headers'),
    ],
    ['an empty list: safelisted only', { origins: [A], headers: [] }, 'x-a', no('headers', 'Origin')],
  ];
  for (const [name, input, acrh, want] of cases) {
    it(name, () =>
      assert.deepEqual(see(decideCors(compileCorsPolicy(input), preflight(A, 'POST', acrh))), want),
    );
  }

  it('disallowed origin asking for Authorization under the default -> denied by origin, no headers', () => {
    const d = decideCors(compileCorsPolicy(dflt), preflight('https://evil.net', 'POST', 'authorization'));
    assert.deepEqual(see(d), no('origin'));
  });
});

describe('corsOptionIssues / compileCorsPolicy (bad policies refused at load)', () => {
  const cases: [string, CorsPolicyInput, string[]][] = [
    ['a good policy has no issues', { origins: [A, 'https://*.a.com', 'null'], credentials: true }, []],
    [
      '"*" with credentials -> credentials (Fetch §3.2.5)',
      { origins: ['*'], credentials: true },
      ['credentials'],
    ],
    ['"*" without credentials is fine', { origins: ['*'] }, []],
    [
      'bad origin entries -> origins[i]',
      { origins: [A, 'https://a.com/x', '*.a.com'] },
      ['origins.1', 'origins.2'],
    ],
    [
      'headers "*" with credentials -> headers[i] (a literal name then, Fetch §3.2.3)',
      { origins: [A], credentials: true, headers: ['X-A', '*'] },
      ['headers.1'],
    ],
    [
      'methods "*" with credentials -> methods[i]',
      { origins: [A], credentials: true, methods: ['*'] },
      ['methods.0'],
    ],
    [
      'exposeHeaders "*" with credentials -> exposeHeaders[i]',
      { origins: [A], credentials: true, exposeHeaders: ['*'] },
      ['exposeHeaders.0'],
    ],
    ['a header name that is not a token', { origins: [A], headers: ['X A'] }, ['headers.0']],
    ['a method that is not a token', { origins: [A], methods: ['GET,POST'] }, ['methods.0']],
  ];
  for (const [name, input, paths] of cases) {
    it(name, () => {
      assert.deepEqual(
        corsOptionIssues(input).map((i) => i.path.join('.')),
        paths,
      );
    });
  }

  it('compileCorsPolicy throws a TypeError naming the key', () => {
    assert.throws(() => compileCorsPolicy({ origins: ['*'], credentials: true }), /cors\.credentials/);
    assert.throws(() => compileCorsPolicy({ origins: ['https://a.com/x'] }), /cors\.origins\[0\]/);
    assert.throws(() => compileCorsPolicy({ origins: [A], maxAgeSec: -1 }), /cors\.maxAgeSec/);
  });
});
