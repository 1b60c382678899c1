// Fuzzing the reverse proxy's header rewriting (src/http/proxy-headers.ts) with seeded hostile header
// records. Oracles: no hop-by-hop field (RFC 9110 §7.6.1) and no field Connection names survives;
// every other field passes unchanged; no value gains CR, LF or NUL; our Forwarded element (RFC 7239)
// parses back to the peer, host and proto; Via gains exactly our member; Location and Set-Cookie
// rewrites keep what they must not touch. Replay a failure with the FUZZ_SEED printed in the message.
//
// Three properties the fuzzer found broken, now fixed and kept here: rewriteLocation cut the upstream
// base path without a segment boundary (`http://up/api.evil.com/` became `https://pub.evil.com/`); a
// trusted proxy's Forwarded with an unbalanced quote swallowed the element we append; rewriteSetCookie
// rewrote the cookie-pair itself when the cookie was named `domain` or `path` (RFC 6265 §4.1.1).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseForwarded, parseForwardedNode } from '../../src/http/forwarded.js';
import { formatIp, parseIp } from '../../src/http/ip.js';
import {
  appendVia,
  type HeaderRecord,
  isHopByHop,
  rewriteLocation,
  rewriteSetCookie,
  stripHopByHop,
  upstreamRequestHeaders,
} from '../../src/http/proxy-headers.js';
import { forAll, type Gen, ITERATIONS } from '../helpers/random.js';

const HOP = [
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'http2-settings',
];
const NAMES = [
  ...HOP,
  'host',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'forwarded',
  'via',
  'expect',
  'accept',
  'cookie',
  'x-secret',
  'x-a',
  'content-length',
  '__proto__',
  'constructor',
  'toString',
];
/** Field-value text a client can get past Node's parser (RFC 9110 §5.5): no CR, LF, NUL or other
 *  controls (Node answers 400 to DEL or \x01 in a field value), obs-text allowed. */
const VALUE_PIECES = [
  'a',
  '1',
  ' ',
  '\t',
  ',',
  ', ',
  ';',
  '=',
  '"',
  '\\',
  ':',
  '[',
  ']',
  '/',
  'close',
  'Upgrade',
  'x-secret',
  'X-Secret',
  'te',
  'trailers',
  'TRAILERS',
  'gzip',
  'keep-alive',
  'websocket',
  '192.0.2.1',
  '::1',
  'unknown',
  'for=',
  '\u00e9',
  '\u00ff',
];
const BAD = /[\r\n\0]/;

function value(g: Gen): string | string[] {
  if (g.chance(0.15)) return Array.from({ length: 1 + g.int(3) }, () => g.string(VALUE_PIECES, 6));
  return g.string(VALUE_PIECES, 8);
}

function headers(g: Gen): HeaderRecord {
  const h: HeaderRecord = {};
  for (let n = g.int(10); n > 0; n--) {
    const name = g.pick(NAMES);
    if (name === '__proto__')
      Object.defineProperty(h, name, {
        value: value(g),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    else h[name] = g.chance(0.05) ? undefined : value(g);
  }
  if (g.chance(0.5))
    h.connection = g
      .pick(NAMES.filter((x) => x !== '__proto__'))
      .concat(g.chance(0.5) ? `, ${g.pick(NAMES)}` : '');
  return h;
}

function listed(h: HeaderRecord): Set<string> {
  const c = h.connection;
  const out = new Set<string>();
  for (const v of c === undefined ? [] : Array.isArray(c) ? c : [c])
    for (const t of v.split(',')) if (t.trim()) out.add(t.trim().toLowerCase());
  return out;
}

/** True when a list value leaves a quoted-string open (RFC 9110 §5.6.4). */
function unbalanced(v: string | string[] | undefined): boolean {
  if (v === undefined) return false;
  const s = Array.isArray(v) ? v.join(', ') : v;
  let open = false;
  for (let k = 0; k < s.length; k++) {
    if (open && s[k] === '\\') k++;
    else if (s[k] === '"') open = !open;
  }
  return open;
}

function assertClean(out: Record<string, string | string[]>): void {
  for (const [name, v] of Object.entries(out)) {
    for (const s of Array.isArray(v) ? v : [v]) {
      assert.equal(typeof s, 'string', name);
      assert.ok(!BAD.test(s), `${name}: CR, LF or NUL in ${JSON.stringify(s)}`);
    }
  }
}

describe('fuzz: stripHopByHop (RFC 9110 §7.6.1)', () => {
  it(`${ITERATIONS * 2} hostile header records (Connection naming fields, TE lists, arrays, __proto__): hop-by-hop gone, the rest unchanged`, () => {
    forAll(
      0x9a01,
      ITERATIONS * 2,
      (g) => ({ h: headers(g), keep: g.chance(0.3) ? new Set(['upgrade', 'connection']) : undefined }),
      ({ h, keep }) => {
        const out = stripHopByHop(h, keep);
        const named = listed(h);
        assertClean(out);
        for (const name of Object.keys(out)) {
          if (name === 'te' && out.te === 'trailers') continue; // RFC 9110 §10.1.4: "TE: trailers" may pass
          if (keep?.has(name)) continue;
          assert.ok(!isHopByHop(name), `hop-by-hop ${name} survived`);
          assert.ok(!named.has(name), `${name}, named by Connection, survived`);
        }
        for (const name of Object.keys(h)) {
          // A field named __proto__ cannot be set on a plain object; Node's own req.headers drops it too.
          if (h[name] === undefined || isHopByHop(name) || named.has(name) || name === '__proto__') continue;
          assert.deepEqual(out[name], h[name], `${name} passes unchanged`);
        }
      },
    );
  });
});

describe('fuzz: upstreamRequestHeaders', () => {
  const PEERS = [undefined, '', '192.0.2.7', '::ffff:192.0.2.8', '2001:db8::9', '::1'];

  it(`${ITERATIONS * 2} hostile requests (forged X-Forwarded-*, Forwarded, Via, quotes in Host): clean values, our hop appended`, () => {
    forAll(
      0x9a02,
      ITERATIONS * 2,
      (g) => ({
        h: headers(g),
        peer: g.pick(PEERS),
        peerTrusted: g.chance(0.5),
        proto: g.pick(['http', 'https'] as const),
        changeOrigin: g.chance(0.5),
        xForwarded: g.chance(0.7),
        forwarded: g.chance(0.7),
        via: g.chance(0.5) ? 'gatehouse' : undefined,
        upgrade: g.chance(0.2),
      }),
      (i) => {
        const out = upstreamRequestHeaders({ ...i, headers: i.h, upstreamHost: 'up.internal:3000' });
        assertClean(out);
        const named = listed(i.h);
        for (const name of Object.keys(out)) {
          if (name === 'te' && out.te === 'trailers') continue;
          if (i.upgrade && (name === 'upgrade' || name === 'connection')) continue;
          assert.ok(!isHopByHop(name), `hop-by-hop ${name} survived`);
          if (
            ![
              'x-forwarded-for',
              'x-forwarded-host',
              'x-forwarded-proto',
              'forwarded',
              'via',
              'host',
            ].includes(name)
          )
            assert.ok(!named.has(name), `${name}, named by Connection, survived`);
        }
        assert.equal(out.expect, undefined);
        if (i.upgrade) assert.equal(out.connection, 'Upgrade');
        if (i.changeOrigin) assert.equal(out.host, 'up.internal:3000');
        const peer = (i.peer ?? '').replace(/^::ffff:(?=\d+\.)/, '');
        if (i.xForwarded) {
          const xff = String(out['x-forwarded-for']);
          assert.ok(xff === peer || xff.endsWith(`, ${peer}`), xff);
          if (!i.peerTrusted) assert.equal(xff, peer, 'an untrusted client cannot forge earlier hops');
          if (!i.peerTrusted) assert.equal(out['x-forwarded-proto'], i.proto);
        } else {
          for (const n of ['x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto'])
            assert.equal(out[n], undefined, n);
        }
        if (i.forwarded) {
          const elements = parseForwarded(String(out.forwarded));
          if (!i.peerTrusted)
            assert.equal(elements.length, 1, `an untrusted client's Forwarded is dropped: ${out.forwarded}`);
          const ours = elements.at(-1);
          assert.ok(ours, `our element parses: ${out.forwarded}`);
          assert.equal(ours.proto, i.proto);
          const host = Array.isArray(i.h.host) ? i.h.host[0] : i.h.host;
          assert.equal(ours.host, host || undefined, 'host round-trips through quoting');
          const node = parseForwardedNode(ours.for ?? '');
          assert.ok(node, `for=${ours.for}`);
          const peerBytes = parseIp(peer);
          if (peer)
            assert.equal(
              node.kind === 'ip' ? node.address : null,
              peerBytes && formatIp(peerBytes),
              'for= is the peer',
            );
          else assert.equal(node.kind, 'unknown');
        } else if (!i.peerTrusted) {
          assert.equal(out.forwarded, undefined);
        }
        if (i.via) assert.ok(String(out.via).endsWith('1.1 gatehouse'));
      },
    );
  });

  it(`${ITERATIONS} Forwarded from a trusted proxy with an unbalanced quote: our appended element still parses`, () => {
    forAll(
      0x9a07,
      ITERATIONS,
      (g) => `${g.string(VALUE_PIECES, 4)}"${g.string(VALUE_PIECES, 4)}`,
      (prev) => {
        if (!unbalanced(prev)) return;
        const out = upstreamRequestHeaders({
          headers: { forwarded: prev, host: 'pub' },
          peer: '192.0.2.7',
          peerTrusted: true,
          proto: 'https',
          upstreamHost: 'up',
          changeOrigin: false,
          xForwarded: false,
          forwarded: true,
          via: undefined,
        });
        const ours = parseForwarded(String(out.forwarded)).at(-1);
        assert.equal(ours?.for, '192.0.2.7', String(out.forwarded));
      },
    );
  });

  it(`${ITERATIONS} Via chains (lists, arrays, empty members): exactly one member added, at the end`, () => {
    forAll(
      0x9a03,
      ITERATIONS,
      (g) => ({ prev: g.chance(0.2) ? undefined : value(g), version: g.pick(['1.1', '2', '1.0']) }),
      ({ prev, version }) => {
        const v = appendVia(prev, 'gatehouse', version);
        assert.ok(!BAD.test(v));
        const joined = prev === undefined ? '' : Array.isArray(prev) ? prev.join(', ') : prev;
        assert.equal(v, joined ? `${joined}, ${version} gatehouse` : `${version} gatehouse`);
      },
    );
  });
});

describe('fuzz: response rewrites for the public address', () => {
  const LOC_PIECES = [
    '/',
    '/',
    '//',
    'api',
    '/api',
    '.evil.com',
    '?',
    '#',
    'x',
    '%2F',
    'http://up:3000',
    'https://pub',
    ':',
    '@',
    '\\',
    ' ',
    'http:',
    '..',
  ];

  function rewriteInput(g: Gen) {
    const upstreamPrefix = g.pick(['', '/api', '/a/b']);
    const publicPrefix = g.pick(['', '/pub', '/api']);
    const location = g.chance(0.5)
      ? g.pick(['http://up:3000', '']) + g.string(LOC_PIECES, 6)
      : g.string(LOC_PIECES, 6);
    return {
      location,
      rw: { upstreamOrigin: 'http://up:3000', publicOrigin: 'https://pub', publicPrefix, upstreamPrefix },
    };
  }

  it(`${ITERATIONS * 2} hostile Locations ('//', lookalike origins, '..', '@'): foreign ones untouched, upstream URLs under the base path stay on the public origin`, () => {
    forAll(0x9a04, ITERATIONS * 2, rewriteInput, ({ location, rw }) => {
      const got = rewriteLocation(location, rw);
      assert.ok(!BAD.test(got));
      const absolute =
        location === rw.upstreamOrigin ||
        location.startsWith(`${rw.upstreamOrigin}/`) ||
        location.startsWith(`${rw.upstreamOrigin}?`);
      const pathAbsolute = location.startsWith('/') && !location.startsWith('//');
      if (!absolute && !pathAbsolute)
        return assert.equal(got, location, 'a Location elsewhere is left alone');
      const path = pathAbsolute ? location : location.slice(rw.upstreamOrigin.length);
      const under =
        rw.upstreamPrefix === '' || path === rw.upstreamPrefix || path.startsWith(`${rw.upstreamPrefix}/`);
      if (absolute && under) assert.ok(got.startsWith(`${rw.publicOrigin}/`), `${location} -> ${got}`);
      // A path-absolute result that would read as protocol-relative is sent absolute instead.
      if (pathAbsolute && under)
        assert.ok(
          (got.startsWith('/') && !got.startsWith('//')) || got.startsWith(`${rw.publicOrigin}/`),
          `${location} -> ${got}`,
        );
    });
  });

  it(`${ITERATIONS * 2} Locations outside the base path ('/apix', '/api.evil.com/') or with '//' after it stay on the public origin`, () => {
    forAll(0x9a04, ITERATIONS * 2, rewriteInput, ({ location, rw }) => {
      const got = rewriteLocation(location, rw);
      if (location.startsWith(`${rw.upstreamOrigin}/`) || location === rw.upstreamOrigin)
        assert.ok(got.startsWith(`${rw.publicOrigin}/`), `${location} -> ${got}`);
      if (location.startsWith('/') && !location.startsWith('//'))
        assert.ok(
          (got.startsWith('/') && !got.startsWith('//')) || got.startsWith(`${rw.publicOrigin}/`),
          `${location} -> ${got}`,
        );
    });
  });

  const COOKIE_PIECES = [
    'a=1',
    'domain=up',
    'Domain=UP',
    'Domain=.up',
    'domain=other',
    'Path=/',
    'path=/x',
    'Secure',
    'HttpOnly',
    'SameSite=Lax',
    ';',
    '; ',
    '=',
    ' ',
    '"',
    ',',
    'Expires=Wed, 21 Oct 2015 07:28:00 GMT',
  ];

  it(`${ITERATIONS * 2} hostile Set-Cookie values (repeated Domain/Path, odd spacing): only Domain and Path attributes change`, () => {
    forAll(
      0x9a05,
      ITERATIONS * 2,
      (g) => ({
        cookie: `sid=${g.string(['x', '1', '='], 4)}${g.string(COOKIE_PIECES, 8)}`,
        prefix: g.pick(['', '/api']),
      }),
      ({ cookie, prefix }) => {
        const got = rewriteSetCookie(cookie, 'up', 'pub', prefix);
        assert.ok(!BAD.test(got));
        const before = cookie.split(';');
        const after = got.split(';');
        assert.equal(after.length, before.length, 'no attribute added or removed');
        before.forEach((part, i) => {
          const name = part.split('=')[0]!.trim().toLowerCase();
          if (i > 0 && part.includes('=') && (name === 'domain' || name === 'path')) return;
          assert.equal(after[i], part, `segment ${i} unchanged`);
        });
      },
    );
  });

  it(`${ITERATIONS} cookies named 'domain' or 'path' keep their name and value`, () => {
    forAll(
      0x9a06,
      ITERATIONS,
      (g) => `${g.pick(['domain=up', 'path=/x', 'Domain=.up'])}${g.string(COOKIE_PIECES, 4)}`,
      (cookie) => {
        const got = rewriteSetCookie(cookie, 'up', 'pub', '/api');
        assert.equal(got.split(';')[0], cookie.split(';')[0]);
      },
    );
  });
});
