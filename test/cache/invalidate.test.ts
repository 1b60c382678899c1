import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type InvalidationInput, invalidationUris } from '../../src/cache/invalidate.js';

const T = 'https://a.example/items/1?x=1';
const base: InvalidationInput = { method: 'POST', status: 200, targetUri: T, responseHeaders: {} };

describe('invalidationUris (RFC 9111 §4.4)', () => {
  const cases: [string, Partial<InvalidationInput>, string[]][] = [
    ['POST 200 invalidates the target', {}, [T]],
    ['DELETE 303: unsafe, 3xx is non-error (§4.4)', { method: 'DELETE', status: 303 }, [T]],
    ['PUT 204', { method: 'PUT', status: 204 }, [T]],
    ['unknown method counts as unsafe (§4.4)', { method: 'PURGEX' }, [T]],
    ['GET is safe -> nothing', { method: 'GET' }, []],
    ['HEAD, OPTIONS, TRACE are safe', { method: 'OPTIONS' }, []],
    ['4xx is an error -> nothing (§4.4 non-error)', { status: 404 }, []],
    ['5xx is an error -> nothing', { status: 503 }, []],
    ['1xx is not a final non-error status', { status: 100 }, []],
    [
      'same-origin absolute Location',
      { responseHeaders: { location: 'https://a.example/items' } },
      [T, 'https://a.example/items'],
    ],
    [
      'relative Location resolved against the target (RFC 3986 §5)',
      { responseHeaders: { location: '../list' } },
      [T, 'https://a.example/list'],
    ],
    [
      'Content-Location too',
      { responseHeaders: { 'content-location': '/items/1/v2' } },
      [T, 'https://a.example/items/1/v2'],
    ],
    [
      'cross-origin Location is ignored (§4.4)',
      { responseHeaders: { location: 'https://b.example/x' } },
      [T],
    ],
    ['other scheme is another origin', { responseHeaders: { location: 'http://a.example/x' } }, [T]],
    ['other port is another origin', { responseHeaders: { location: 'https://a.example:8443/x' } }, [T]],
    [
      'fragments are removed and duplicates dropped',
      { responseHeaders: { location: '/items/1?x=1#top', 'content-location': T } },
      [T],
    ],
    ['invalid Location is skipped', { responseHeaders: { location: 'https://[bad' } }, [T]],
    ['invalid target -> nothing', { targetUri: 'not a uri' }, []],
  ];
  for (const [name, over, expected] of cases) {
    it(name, () => assert.deepEqual(invalidationUris({ ...base, ...over }), expected));
  }
});
