import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  applyRedirect,
  type CanonicalOptions,
  canonicalPath,
  collapseLeadingSlashes,
  compileFrom,
  compileRedirect,
  encodeCapture,
  encodeUnsafe,
  findRedirect,
  httpsRedirect,
  isUriReferenceText,
  matchPath,
  parseHost,
  RedirectRuleError,
  type RedirectRuleInput,
} from '../../src/http/redirect.js';
import { mulberry32, SEED_OFFSET } from '../helpers/random.js';

describe('path patterns (from)', () => {
  const cases: [string, string, string, Record<string, string | undefined> | null][] = [
    ['exact path matches itself', '/old', '/old', {}],
    ['exact path: trailing slash is another path', '/old', '/old/', null],
    ['exact path: longer path does not match', '/old', '/older', null],
    [':name takes one segment', '/blog/:slug', '/blog/hello', { slug: 'hello' }],
    [':name does not cross /', '/blog/:slug', '/blog/a/b', null],
    [':name needs a non-empty segment', '/blog/:slug', '/blog/', null],
    ['two :names', '/b/:year/:slug', '/b/2024/hi', { year: '2024', slug: 'hi' }],
    [':name inside a segment', '/v:major/x', '/v2/x', { major: '2' }],
    ['* takes the rest across segments', '/docs/*', '/docs/a/b/c', { splat: 'a/b/c' }],
    ['trailing /* also matches the bare path', '/docs/*', '/docs', { splat: undefined }],
    ['trailing /* matches the slash form with an empty splat', '/docs/*', '/docs/', { splat: '' }],
    ['trailing /* does not match a longer name', '/docs/*', '/docsx', null],
    [':name* is a named splat', '/files/:rest*', '/files/a/b', { rest: 'a/b' }],
    ['* in the middle', '/a/*/end', '/a/x/y/end', { splat: 'x/y' }],
    ['captures stay percent-encoded', '/blog/:slug', '/blog/a%20b', { slug: 'a%20b' }],
    ['literal non-ASCII matches its UTF-8 escapes', '/café', '/caf%C3%A9', {}],
    ['regex must match the whole path', '^/a', '/ab', null],
    ['regex with $', '^/v(\\d+)/(.*)$', '/v2/a/b', {}],
    ['regex named group', '^/item/(?<id>[0-9]+)$', '/item/42', { id: '42' }],
    ['regex alternation is anchored as a whole', '^/a|/b$', '/a/x', null],
    ['regex escaping the wrapper still matches whole paths only', '^/a)|(/b$', '/a/x', null],
    ['regex escaping the wrapper: suffix only does not match', '^/a)|(/b$', '/x/b', null],
  ];
  for (const [name, from, path, expected] of cases) {
    it(name, () => {
      const m = matchPath(compileFrom(from), path);
      if (expected === null) assert.equal(m, null);
      else assert.deepEqual({ ...m?.named }, expected);
    });
  }

  it('regex groups are numbered', () => {
    const m = matchPath(compileFrom('^/v(\\d+)/(.*)$'), '/v2/a/b');
    assert.deepEqual([m?.groups[1], m?.groups[2]], ['2', 'a/b']);
  });
});

describe('compileRedirect: bad rules throw naming the field', () => {
  const cases: [string, RedirectRuleInput, 'from' | 'to', RegExp][] = [
    ['from not starting with /', { from: 'old', to: '/new' }, 'from', /start with \//],
    ['from with a query', { from: '/old?x=1', to: '/new' }, 'from', /path only/],
    ['from with the same capture twice', { from: '/:a/:a', to: '/new' }, 'from', /twice/],
    ['from with two splats', { from: '/*/x/*', to: '/new' }, 'from', /one splat/],
    ['regex that does not compile', { from: '^/(a', to: '/new' }, 'from', /Invalid regular expression/],
    ['to naming a capture from lacks', { from: '/a/:x', to: '/b/:y' }, 'to', /:y is not captured/],
    ['to with * but from has no splat', { from: '/a/:x', to: '/b/*' }, 'to', /no splat/],
    ['to with $3 and two groups', { from: '^/(a)/(b)$', to: '/$3' }, 'to', /\$3/],
    ['to starting with //', { from: '/a', to: '//evil.com/x' }, 'to', /another host/],
    ['to starting with /\\', { from: '/a', to: '/\\evil.com' }, 'to', /percent-encode/],
    ['relative to', { from: '/a', to: 'new' }, 'to', /path starting with \/ or an absolute/],
    ['javascript: URL', { from: '/a', to: 'javascript:alert(1)' }, 'to', /absolute http/],
    ['protocol-relative via scheme-less host', { from: '/a', to: 'evil.com/x' }, 'to', /absolute http/],
    ['capture in the host', { from: '/:h', to: 'https://:h/x' }, 'to', /host and port must be literal/],
    ['capture glued to the host', { from: '/*', to: 'https://example.com*' }, 'to', /literal/],
    ['capture as the port', { from: '/:p', to: 'https://example.com:p/' }, 'to', /must be literal/],
    ['user info in the host', { from: '/a', to: 'https://example.com@evil.com/' }, 'to', /no user info/],
    ['CR LF in to', { from: '/a', to: '/b\r\nSet-Cookie: x=1' }, 'to', /control character/],
    ['space in to', { from: '/a', to: '/b c' }, 'to', /percent-encode/],
    ['non-ASCII in to', { from: '/a', to: '/café' }, 'to', /percent-encode/],
    ['lone % in to', { from: '/a', to: '/100%' }, 'to', /%XX/],
  ];
  for (const [name, rule, field, message] of cases) {
    it(`${name} -> ${field}`, () => {
      assert.throws(
        () => compileRedirect(rule),
        (err: unknown) =>
          err instanceof RedirectRuleError && err.field === field && message.test(err.message),
      );
    });
  }

  it('defaults: status 308, keepQuery true', () => {
    const r = compileRedirect({ from: '/a', to: '/b' });
    assert.equal(r.status, 308);
    assert.equal(r.keepQuery, true);
  });
});

describe('applyRedirect', () => {
  const cases: [string, RedirectRuleInput, string, string | undefined, string | null][] = [
    ['exact', { from: '/old', to: '/new' }, '/old', undefined, '/new'],
    ['no match -> null', { from: '/old', to: '/new' }, '/other', undefined, null],
    ['query kept', { from: '/old', to: '/new' }, '/old', 'a=1&b=2', '/new?a=1&b=2'],
    ['empty query is dropped', { from: '/old', to: '/new' }, '/old', '', '/new'],
    [
      'query dropped with keepQuery false',
      { from: '/old', to: '/new', keepQuery: false },
      '/old',
      'a=1',
      '/new',
    ],
    ['query merged after the query of to', { from: '/old', to: '/new?x=1' }, '/old', 'a=1', '/new?x=1&a=1'],
    ['query inserted before the fragment', { from: '/old', to: '/new#top' }, '/old', 'a=1', '/new?a=1#top'],
    ['to query kept without request query', { from: '/old', to: '/new?x=1' }, '/old', undefined, '/new?x=1'],
    [':name substitution', { from: '/blog/:slug', to: '/posts/:slug' }, '/blog/hi', undefined, '/posts/hi'],
    [
      'two names and literal text',
      { from: '/b/:y/:s', to: '/p/:y-:s' },
      '/b/2024/hi',
      undefined,
      '/p/2024-hi',
    ],
    ['* substitution keeps /', { from: '/docs/*', to: '/guide/*' }, '/docs/a/b', undefined, '/guide/a/b'],
    [':splat is the splat', { from: '/docs/*', to: '/guide/:splat' }, '/docs/a/b', undefined, '/guide/a/b'],
    ['named splat', { from: '/files/:rest*', to: '/f/:rest' }, '/files/a/b', undefined, '/f/a/b'],
    ['bare path of a trailing /*', { from: '/docs/*', to: '/guide/*' }, '/docs', undefined, '/guide/'],
    ['regex $1 $2', { from: '^/v(\\d+)/(.*)$', to: '/api/v$1/$2' }, '/v2/a/b', undefined, '/api/v2/a/b'],
    [
      'regex named group as :name',
      { from: '^/i/(?<id>\\d+)$', to: '/items/:id' },
      '/i/42',
      undefined,
      '/items/42',
    ],
    ['regex group not taken -> empty', { from: '^/a(/x)?$', to: '/b$1' }, '/a', undefined, '/b'],
    [
      'absolute to',
      { from: '/ext/*', to: 'https://example.com/*' },
      '/ext/a',
      'q=1',
      'https://example.com/a?q=1',
    ],
    ['$ not followed by a digit is literal', { from: '/a', to: '/b$x' }, '/a', undefined, '/b$x'],
    ['capture keeps its escapes', { from: '/b/:s', to: '/p/:s' }, '/b/a%20b', undefined, '/p/a%20b'],
    ['escapes normalise to encodeURIComponent', { from: '/b/:s', to: '/p/:s' }, '/b/%7e', undefined, '/p/~'],
    [
      '%2F inside a segment stays encoded',
      { from: '/b/*', to: '/p/*' },
      '/b/a%2Fb/c',
      undefined,
      '/p/a%2Fb/c',
    ],
    [
      'CR LF in a capture is encoded',
      { from: '/old/:x', to: '/new/:x' },
      '/old/%0d%0aSet-Cookie:x',
      undefined,
      '/new/%0D%0ASet-Cookie%3Ax',
    ],
    [
      'CR LF in a splat is encoded',
      { from: '/old/*', to: '/new/*' },
      '/old/a/%0d%0a/b',
      undefined,
      '/new/a/%0D%0A/b',
    ],
    [
      'raw CR LF in the query is encoded',
      { from: '/a', to: '/b' },
      '/a',
      'x=\r\nSet-Cookie:1',
      '/b?x=%0D%0ASet-Cookie:1',
    ],
    ['non-ASCII in the query is encoded', { from: '/a', to: '/b' }, '/a', 'q=é', '/b?q=%C3%A9'],
    ['valid escapes in the query are kept', { from: '/a', to: '/b' }, '/a', 'q=%20%zz', '/b?q=%20%25zz'],
    [
      'malformed escape in a capture -> no redirect',
      { from: '/a/:x', to: '/b/:x' },
      '/a/%zz',
      undefined,
      null,
    ],
    // Open redirects: the path form never leaves the site.
    ['splat //evil.com collapses', { from: '/go/*', to: '/*' }, '/go//evil.com', undefined, '/evil.com'],
    ['whole path //evil.com collapses', { from: '/*', to: '/*' }, '//evil.com', undefined, '/evil.com'],
    [
      'regex capture //evil.com collapses',
      { from: '^/(.*)$', to: '/$1' },
      '//evil.com/x',
      undefined,
      '/evil.com/x',
    ],
    [
      'encoded //evil.com stays encoded',
      { from: '/go/*', to: '/*' },
      '/go/%2f%2fevil.com',
      undefined,
      '/%2F%2Fevil.com',
    ],
    ['backslash is encoded', { from: '/go/*', to: '/*' }, '/go/\\evil.com', undefined, '/%5Cevil.com'],
    [
      'encoded backslash stays encoded',
      { from: '/go/*', to: '/*' },
      '/go/%5cevil.com',
      undefined,
      '/%5Cevil.com',
    ],
    [
      '@evil.com cannot change the host',
      { from: '/ext/:path*', to: 'https://example.com/:path' },
      '/ext/@evil.com',
      undefined,
      'https://example.com/%40evil.com',
    ],
    [
      'user info through a capture cannot change the host',
      { from: '/ext/:path*', to: 'https://example.com/:path' },
      '/ext/x:y@evil.com/',
      undefined,
      'https://example.com/x%3Ay%40evil.com/',
    ],
  ];
  for (const [name, rule, path, query, expected] of cases) {
    it(name, () => assert.equal(applyRedirect(compileRedirect(rule), path, query), expected));
  }

  it('first matching rule wins', () => {
    const rules = [
      compileRedirect({ from: '/a/:x', to: '/first/:x', status: 301 }),
      compileRedirect({ from: '/a/*', to: '/second/*', status: 302 }),
    ];
    assert.deepEqual(findRedirect(rules, '/a/b', undefined), { status: 301, location: '/first/b' });
    assert.deepEqual(findRedirect(rules, '/a/b/c', undefined), { status: 302, location: '/second/b/c' });
    assert.equal(findRedirect(rules, '/z', undefined), null);
  });

  // Seeded fuzz: hostile paths through every from/to form never yield an unsafe Location.
  it('fuzz: Locations are URI text, stay on-site or on the literal host', () => {
    const rand = mulberry32(20240601 + SEED_OFFSET);
    const atoms = [
      '/',
      '//',
      '\\',
      '%2f',
      '%5c',
      '%0d%0a',
      '\r\n',
      '@',
      ':',
      '?',
      '#',
      'evil.com',
      '%',
      'é',
      ' ',
      '..',
      'x',
    ];
    const rules = [
      compileRedirect({ from: '/*', to: '/*' }),
      compileRedirect({ from: '/:a*', to: '/x/:a?q=:a#:a' }),
      compileRedirect({ from: '^/(.*)$', to: '/$1' }),
      compileRedirect({ from: '/*', to: 'https://example.com/*' }),
      compileRedirect({ from: '/*', to: 'https://example.com*'.replace('*', '/*') }),
    ];
    const iterations = Number(process.env.FUZZ_ITERATIONS ?? 2000);
    for (let i = 0; i < iterations; i++) {
      let path = '/';
      const n = 1 + Math.floor(rand() * 6);
      for (let k = 0; k < n; k++) path += atoms[Math.floor(rand() * atoms.length)];
      const query = rand() < 0.5 ? undefined : atoms[Math.floor(rand() * atoms.length)];
      for (const rule of rules) {
        const loc = applyRedirect(rule, path, query);
        if (loc === null) continue;
        assert.ok(
          isUriReferenceText(loc),
          `unsafe Location ${JSON.stringify(loc)} for ${JSON.stringify(path)}`,
        );
        const u = new URL(loc, 'http://site.test/');
        if (rule.to.form === 'path') {
          assert.ok(!loc.startsWith('//'), loc);
          assert.equal(u.host, 'site.test', `${JSON.stringify(path)} -> ${loc}`);
        } else assert.equal(u.host, 'example.com', `${JSON.stringify(path)} -> ${loc}`);
      }
    }
  });
});

describe('encoding helpers', () => {
  const unsafe: [string, string, string][] = [
    ['safe text unchanged', '/a/b?c=d&e', '/a/b?c=d&e'],
    ['CR LF', 'a\r\nb', 'a%0D%0Ab'],
    ['space and quotes', 'a b"c', 'a%20b%22c'],
    ['angle brackets and backslash', '<\\>', '%3C%5C%3E'],
    ['valid escape kept', '%41', '%41'],
    ['lone % escaped', '%4', '%254'],
    ['hash escaped', 'a#b', 'a%23b'],
    ['non-ASCII as UTF-8', 'é', '%C3%A9'],
  ];
  for (const [name, input, expected] of unsafe) {
    it(`encodeUnsafe: ${name}`, () => assert.equal(encodeUnsafe(input), expected));
  }

  const captures: [string, string, string | null][] = [
    ['empty', '', ''],
    ['segments keep their /', 'a/b', 'a/b'],
    ['reserved characters are encoded', 'a@b:c?d#e', 'a%40b%3Ac%3Fd%23e'],
    ['escapes normalise', '%61%2f', 'a%2F'],
    ['malformed escape -> null', '%zz', null],
  ];
  for (const [name, input, expected] of captures) {
    it(`encodeCapture: ${name}`, () => assert.equal(encodeCapture(input), expected));
  }

  const slashes: [string, string][] = [
    ['/a', '/a'],
    ['//a', '/a'],
    ['////a//b', '/a//b'],
    ['/', '/'],
  ];
  for (const [input, expected] of slashes) {
    it(`collapseLeadingSlashes: ${input} -> ${expected}`, () =>
      assert.equal(collapseLeadingSlashes(input), expected));
  }
});

describe('canonicalPath', () => {
  const add: CanonicalOptions = { trailingSlash: 'add', indexHtml: true };
  const remove: CanonicalOptions = { trailingSlash: 'remove', indexHtml: true };
  const ignore: CanonicalOptions = { trailingSlash: 'ignore', indexHtml: true };
  const cases: [string, string, CanonicalOptions, string | null][] = [
    ['/index.html -> /', '/index.html', ignore, '/'],
    ['/dir/index.html -> /dir/', '/dir/index.html', ignore, '/dir/'],
    ['index.html off: unchanged', '/dir/index.html', { trailingSlash: 'ignore', indexHtml: false }, null],
    [
      'other index names',
      '/d/index.htm',
      { trailingSlash: 'ignore', indexHtml: true, indexNames: ['index.htm'] },
      '/d/',
    ],
    ['a file named like an index elsewhere stays', '/dir/index.html.bak', ignore, null],
    ['add: /about -> /about/', '/about', add, '/about/'],
    ['add: file with extension stays', '/app.js', add, null],
    ['add: already slashed', '/about/', add, null],
    ['add: root', '/', add, null],
    ['add with index: /dir/index.html -> /dir/', '/dir/index.html', add, '/dir/'],
    ['remove: /about/ -> /about', '/about/', remove, '/about'],
    ['remove: several slashes', '/about//', remove, '/about'],
    ['remove: root keeps its slash', '/', remove, null],
    ['remove with index: /dir/index.html -> /dir in one step', '/dir/index.html', remove, '/dir'],
    ['remove with index at the root: /index.html -> /', '/index.html', remove, '/'],
    ['//evil.com/index.html never gives //', '//evil.com/index.html', ignore, '/evil.com/'],
    ['/\\evil.com/index.html: backslash encoded', '/\\evil.com/index.html', ignore, '/%5Cevil.com/'],
    ['ignore and no index: unchanged', '/a/', { trailingSlash: 'ignore', indexHtml: false }, null],
  ];
  for (const [name, path, o, expected] of cases) {
    it(name, () => assert.equal(canonicalPath(path, o), expected));
  }
});

describe('parseHost', () => {
  const cases: [string, string | undefined, ReturnType<typeof parseHost>][] = [
    ['name', 'example.com', { hostname: 'example.com', port: undefined }],
    ['name and port', 'example.com:8080', { hostname: 'example.com', port: 8080 }],
    ['uppercase is lowered', 'EXAMPLE.com', { hostname: 'example.com', port: undefined }],
    ['trailing dot dropped', 'example.com.', { hostname: 'example.com', port: undefined }],
    ['IPv4', '127.0.0.1:80', { hostname: '127.0.0.1', port: 80 }],
    ['IPv6 literal', '[::1]:8443', { hostname: '[::1]', port: 8443 }],
    ['single label', 'localhost', { hostname: 'localhost', port: undefined }],
    ['missing -> null', undefined, null],
    ['empty -> null', '', null],
    ['path in Host -> null', 'evil.com/x', null],
    ['user info -> null', 'a@evil.com', null],
    ['backslash -> null', 'evil.com\\x', null],
    ['space -> null', 'a b', null],
    ['CR LF -> null', 'a\r\nb', null],
    ['empty port -> null', 'example.com:', null],
    ['port over 65535 -> null', 'example.com:70000', null],
    ['label starting with - -> null', '-a.com', null],
    ['empty label -> null', 'a..com', null],
    ['IPv6 without brackets -> null', '::1', null],
    ['label over 63 -> null', `${'a'.repeat(64)}.com`, null],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => assert.deepEqual(parseHost(input), expected));
  }
});

describe('httpsRedirect', () => {
  const cases: [string, string, string | undefined, number | undefined, string | null][] = [
    ['path and query kept', '/a/b?x=1', 'example.com', undefined, 'https://example.com/a/b?x=1'],
    ['request port dropped, 443 not written', '/', 'example.com:80', 443, 'https://example.com/'],
    ['other https port written', '/a', 'example.com:8080', 8443, 'https://example.com:8443/a'],
    ['IPv6 host', '/', '[::1]:80', 8443, 'https://[::1]:8443/'],
    [
      'absolute-form target wins over Host',
      'http://Site.test/p?q',
      'other.test',
      undefined,
      'https://site.test/p?q',
    ],
    ['absolute-form without a path', 'http://site.test', undefined, undefined, 'https://site.test/'],
    [
      '//evil.com path stays a path on the host',
      '//evil.com/x',
      'site.test',
      undefined,
      'https://site.test//evil.com/x',
    ],
    ['unsafe characters encoded', '/a b\\c', 'site.test', undefined, 'https://site.test/a%20b%5Cc'],
    ['bad Host -> bad', '/', 'evil.com/x', undefined, null],
    ['Host with user info -> bad', '/', 'u@evil.com', undefined, null],
    ['missing Host -> bad', '/', undefined, undefined, null],
    ['asterisk-form -> bad', '*', 'site.test', undefined, null],
  ];
  for (const [name, target, host, port, expected] of cases) {
    it(name, () => {
      const d = httpsRedirect(target, host, port);
      if (expected === null) assert.equal(d.kind, 'bad');
      else assert.deepEqual(d.kind === 'redirect' ? d.location : d, expected);
    });
  }
});
