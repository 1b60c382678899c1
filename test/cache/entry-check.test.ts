// storedEntryProblem (src/cache/entry-check.ts): which entries read back from a store may be served.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { storedEntryProblem } from '../../src/cache/entry-check.js';

const MAX = 1000;
const good = (over: Record<string, unknown> = {}, response: Record<string, unknown> = {}) => ({
  varyKey: '',
  varyHeaders: {},
  ...over,
  response: {
    status: 200,
    headers: { 'content-type': 'text/plain' },
    requestTimeMs: 1,
    responseTimeMs: 2,
    ...response,
  },
});

describe('storedEntryProblem', () => {
  const ok: [string, unknown, number][] = [
    ['a plain 200', good(), 10],
    ['a 599', good({}, { status: 599 }), 10],
    ['a body of exactly maxEntryBytes', good(), MAX],
    ['obs-text and HTAB in a value', good({}, { headers: { 'x-a': 'caf\u00e9\tb' } }), 0],
    ['several Set-Cookie lines apart with LF', good({}, { headers: { 'set-cookie': 'a=1\nb=2' } }), 0],
    ['tags, discardAfterMs, markedStale', good({ tags: ['t'], discardAfterMs: 5, markedStale: true }), 0],
  ];
  for (const [name, meta, bytes] of ok)
    it(`${name} -> served`, () => assert.equal(storedEntryProblem(meta, bytes, MAX), undefined));

  const bad: [string, unknown, number, RegExp][] = [
    ['status 101', good({}, { status: 101 }), 0, /status 101/],
    ['status 99999', good({}, { status: 99999 }), 0, /status 99999/],
    ['status 199', good({}, { status: 199 }), 0, /status/],
    ['status 200.5', good({}, { status: 200.5 }), 0, /status/],
    ['status as a string', good({}, { status: '200' }), 0, /status/],
    ['CR LF in a value', good({}, { headers: { 'x-a': 'a\r\nb: c' } }), 0, /field x-a/],
    ['NUL in a value', good({}, { headers: { 'x-a': 'a\u0000' } }), 0, /field x-a/],
    ['a character above U+00FF', good({}, { headers: { 'x-a': '\u2028' } }), 0, /field x-a/],
    ['LF in a field other than Set-Cookie', good({}, { headers: { link: 'a\nb' } }), 0, /field link/],
    ['CR in a Set-Cookie line', good({}, { headers: { 'set-cookie': 'a=1\r\nb=2' } }), 0, /set-cookie/],
    ['a field name with a space', good({}, { headers: { 'x y': '1' } }), 0, /field name/],
    ['an empty field name', good({}, { headers: { '': '1' } }), 0, /field name/],
    ['an uppercase field name', good({}, { headers: { 'X-A': '1' } }), 0, /field name/],
    ['a value that is not a string', good({}, { headers: { 'x-a': 1 } }), 0, /not a string/],
    ['a body over maxEntryBytes', good(), MAX + 1, /maxEntryBytes/],
    ['a negative body length', good(), -1, /body length/],
    ['not an object', 'null', 0, /not an entry/],
    ['no response', { varyKey: '', varyHeaders: {} }, 0, /not an entry/],
    ['exchange times missing', good({}, { requestTimeMs: undefined }), 0, /exchange times/],
    ['varyKey not a string', good({ varyKey: 1 }), 0, /secondary key/],
    ['varyHeaders values not strings', good({ varyHeaders: { a: 1 } }), 0, /vary headers/],
    ['tags not strings', good({ tags: [1] }), 0, /tags/],
  ];
  for (const [name, meta, bytes, reason] of bad)
    it(`${name} -> not served`, () => assert.match(storedEntryProblem(meta, bytes, MAX) ?? 'served', reason));
});
