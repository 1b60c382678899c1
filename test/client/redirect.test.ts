// redirectStep (src/client/redirect.ts): Fetch §4.4 HTTP-redirect fetch as a table.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type RedirectStep, redirectStep } from '../../src/client/redirect.js';

const A = 'http://127.0.0.1:1000/from';
const base = {
  mode: 'follow' as RequestRedirect,
  status: 301,
  location: '/to',
  currentUrl: A,
  method: 'GET',
  count: 0,
};
const creds = ['authorization', 'cookie', 'proxy-authorization'];
const body = ['content-encoding', 'content-language', 'content-location', 'content-type'];
const follow = (url: string, method: string, dropBody: boolean, dropFields: string[]): RedirectStep => ({
  kind: 'follow',
  url,
  method,
  dropBody,
  dropFields,
});

const cases: [string, Partial<typeof base>, RedirectStep][] = [
  ['200 -> returned', { status: 200 }, { kind: 'return' }],
  ['301 without Location -> returned', { location: null as unknown as string }, { kind: 'return' }],
  ["mode 'manual' -> returned", { mode: 'manual' }, { kind: 'return' }],
  ["mode 'error' -> network error", { mode: 'error' }, { kind: 'error', reason: 'redirect mode is "error"' }],
  ['same origin GET 301 -> GET, nothing dropped', {}, follow('http://127.0.0.1:1000/to', 'GET', false, [])],
  [
    'other port (another origin) -> credentials dropped',
    { location: 'http://127.0.0.1:2000/to' },
    follow('http://127.0.0.1:2000/to', 'GET', false, creds),
  ],
  // Fetch §4.4 step 13 compares origins (scheme, host, port), not hosts: a hop that changes only the
  // scheme goes to another origin, whatever the host and port.
  [
    'https -> http, same host (another origin) -> credentials dropped',
    { currentUrl: 'https://a.test/from', location: 'http://a.test/to' },
    follow('http://a.test/to', 'GET', false, creds),
  ],
  [
    'http -> https, same host (another origin) -> credentials dropped',
    { currentUrl: 'http://a.test/from', location: 'https://a.test/to' },
    follow('https://a.test/to', 'GET', false, creds),
  ],
  [
    'https -> http, same host and explicit port (another origin) -> credentials dropped',
    { currentUrl: 'https://a.test:8443/from', location: 'http://a.test:8443/to' },
    follow('http://a.test:8443/to', 'GET', false, creds),
  ],
  [
    'https -> https, same host, default port written out (same origin) -> nothing dropped',
    { currentUrl: 'https://a.test/from', location: 'https://a.test:443/to' },
    follow('https://a.test/to', 'GET', false, []),
  ],
  [
    'POST 301 -> GET, body dropped',
    { method: 'POST' },
    follow('http://127.0.0.1:1000/to', 'GET', true, body),
  ],
  [
    'POST 302 -> GET, body dropped',
    { method: 'POST', status: 302 },
    follow('http://127.0.0.1:1000/to', 'GET', true, body),
  ],
  ['PUT 301 -> PUT kept', { method: 'PUT' }, follow('http://127.0.0.1:1000/to', 'PUT', false, [])],
  ['PUT 303 -> GET', { method: 'PUT', status: 303 }, follow('http://127.0.0.1:1000/to', 'GET', true, body)],
  [
    'HEAD 303 -> HEAD',
    { method: 'HEAD', status: 303 },
    follow('http://127.0.0.1:1000/to', 'HEAD', false, []),
  ],
  [
    'POST 307 -> POST with its body',
    { method: 'POST', status: 307 },
    follow('http://127.0.0.1:1000/to', 'POST', false, []),
  ],
  [
    'POST 308 -> POST with its body',
    { method: 'POST', status: 308 },
    follow('http://127.0.0.1:1000/to', 'POST', false, []),
  ],
  [
    'POST 303 to another origin -> GET, body and credentials dropped',
    { method: 'POST', status: 303, location: 'http://localhost:1000/to' },
    follow('http://localhost:1000/to', 'GET', true, [...body, ...creds]),
  ],
  [
    '19 followed -> the 20th is followed',
    { count: 19 },
    follow('http://127.0.0.1:1000/to', 'GET', false, []),
  ],
  ['20 followed -> network error', { count: 20 }, { kind: 'error', reason: 'more than 20 redirects' }],
  [
    'Location data: -> network error',
    { location: 'data:,x' },
    { kind: 'error', reason: 'redirect to a data: URL' },
  ],
  [
    'Location unparsable -> network error',
    { location: 'http://[::1' },
    { kind: 'error', reason: 'invalid Location' },
  ],
];

describe('redirectStep (Fetch §4.4)', () => {
  for (const [name, over, want] of cases)
    it(name, () => assert.deepEqual(redirectStep({ ...base, ...over }), want));
});
