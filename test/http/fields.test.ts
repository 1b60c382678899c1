// Field names and values a sender may generate (RFC 9110 §5.1, §5.5), table-style.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isFieldName, isFieldValue } from '../../src/http/fields.js';

describe('isFieldName', () => {
  const cases: [string, string, boolean][] = [
    ['a token', 'X-Request-Id', true],
    ['all tchar punctuation', "!#$%&'*+-.^_`|~", true],
    ['empty', '', false],
    ['a space', 'X Name', false],
    ['a colon', 'X:Name', false],
    ['CR LF', 'X\r\nY', false],
    ['non-ASCII', 'Ñame', false],
  ];
  for (const [name, input, want] of cases)
    it(`${name} -> ${want}`, () => assert.equal(isFieldName(input), want));
});

describe('isFieldValue', () => {
  const cases: [string, string, boolean][] = [
    ['visible ASCII', 'max-age=60, public', true],
    ['empty', '', true],
    ['SP and HTAB', 'a b\tc', true],
    ['obs-text (latin1)', 'caf\xe9', true],
    ['CR LF (response splitting)', 'a\r\nSet-Cookie: x=1', false],
    ['LF alone', 'a\nb', false],
    ['NUL', 'a\0b', false],
    ['another control character', 'a\x01b', false],
    ['DEL', 'a\x7fb', false],
    ['above U+00FF (no octet)', 'a\u2028b', false],
  ];
  for (const [name, input, want] of cases)
    it(`${name} -> ${want}`, () => assert.equal(isFieldValue(input), want));
});
