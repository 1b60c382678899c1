// resolveLocation: Location references resolved against the request target (RFC 9110 §10.2.2,
// RFC 3986 §5.2), table-style.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type LocationResult, resolveLocation } from '../../src/http/location.js';

describe('resolveLocation', () => {
  const path = (location: string): LocationResult => ({ kind: 'path', location });
  const absolute = (location: string): LocationResult => ({ kind: 'absolute', location });
  const cases: [string, string, string, LocationResult | RegExp][] = [
    ['absolute path -> as given', '/api/items/7', '/api/items', path('/api/items/7')],
    [
      'relative path, target without trailing slash -> sibling',
      'items/7',
      '/api/items',
      path('/api/items/7'),
    ],
    [
      'relative name, collection target with trailing slash -> child',
      '7',
      '/api/items/',
      path('/api/items/7'),
    ],
    [
      'relative path, collection target with trailing slash -> RFC 3986 §5.2.3 merge',
      'items/7',
      '/api/items/',
      path('/api/items/items/7'),
    ],
    ['dot segments are removed (RFC 3986 §5.2.4)', '../users/1', '/api/items/7', path('/api/users/1')],
    ['dot segments cannot climb above the root', '../../../../x', '/a/b', path('/x')],
    [
      'the target query is dropped for a path reference',
      'items/7',
      '/api/items?page=2',
      path('/api/items/7'),
    ],
    [
      'a query-only reference keeps the target path',
      '?page=3',
      '/api/items?page=2',
      path('/api/items?page=3'),
    ],
    [
      'a fragment-only reference keeps path and query',
      '#top',
      '/api/items?page=2',
      path('/api/items?page=2#top'),
    ],
    ['query and fragment are kept', '/a?b=1#c', '/x', path('/a?b=1#c')],
    ['non-ASCII and spaces are percent-encoded', '/items/é a', '/x', path('/items/%C3%A9%20a')],
    ['percent-encoding is kept as given', '/items/a%2Fb', '/x', path('/items/a%2Fb')],
    ['a colon after the first segment is a path', './a:b', '/api/x', path('/api/a:b')],
    [
      'a resolved path starting with // gets /. (not a network-path reference)',
      '/.//evil.example/x',
      '/',
      path('/.//evil.example/x'),
    ],
    ['dot segments leaving // at the start get /.', '/a/..//evil.example', '/', path('/.//evil.example')],
    ['target * resolves against /', 'items/7', '*', path('/items/7')],
    [
      'absolute https URL with another origin -> sent absolute',
      'https://other.example/items/7',
      '/x',
      absolute('https://other.example/items/7'),
    ],
    [
      'absolute http URL is normalised (scheme and host lowercased)',
      'HTTP://Example.COM/a/../b',
      '/x',
      absolute('http://example.com/b'),
    ],
    [
      'absolute URL with an IDN host -> punycode',
      'https://bücher.example/',
      '/x',
      absolute('https://xn--bcher-kva.example/'),
    ],
    ['network-path reference -> invalid', '//evil.example/x', '/x', /authority/],
    ['backslash network-path (WHATWG reads \\ as /) -> invalid', '/\\evil.example', '/x', /authority/],
    ['two backslashes -> invalid', '\\\\evil.example', '/x', /authority/],
    ['network-path reference to a stand-in origin -> invalid', '//a.invalid/x', '/x', /authority/],
    ['javascript: -> invalid', 'javascript:alert(1)', '/x', /scheme javascript:/],
    ['data: -> invalid', 'data:text/html,<script>', '/x', /scheme data:/],
    ['mailto: -> invalid', 'mailto:a@b.example', '/x', /scheme mailto:/],
    ['a relative path with a colon in its first segment is a scheme -> invalid', 'a:b', '/x', /scheme a:/],
    ['http: without //authority -> invalid', 'http:foo', '/x', /without \/\/authority/],
    ['https:/one-slash -> invalid', 'https:/evil.example', '/x', /without \/\/authority/],
    ['userinfo -> invalid (RFC 9110 §4.2.4)', 'https://bank.example@evil.example/', '/x', /userinfo/],
    ['unparseable absolute URL -> invalid', 'http://[::1/', '/x', /not a valid URL/],
    ['unparseable network-path -> invalid', '//[::1/', '/x', /not a valid URI reference/],
    ['CR LF -> invalid', '/a\r\nSet-Cookie: x=1', '/x', /control character/],
    ['LF alone -> invalid', '/a\nb', '/x', /control character/],
    ['TAB (WHATWG would drop it) -> invalid', '/a\tb', '/x', /control character/],
    ['NUL -> invalid', '/a\0', '/x', /control character/],
    ['DEL -> invalid', '/a\x7f', '/x', /control character/],
    ['empty -> invalid', '', '/x', /empty/],
    ['leading space -> invalid', ' //evil.example', '/x', /spaces/],
    ['trailing space -> invalid', '/a ', '/x', /spaces/],
  ];
  for (const [name, reference, target, want] of cases) {
    it(name, () => {
      const got = resolveLocation(reference, target);
      if (want instanceof RegExp) {
        assert.equal(got.kind, 'invalid');
        assert.match((got as { reason: string }).reason, want);
      } else {
        assert.deepEqual(got, want);
      }
    });
  }
});
