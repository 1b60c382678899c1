import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type EntityTag,
  entityTagListMatches,
  formatEntityTag,
  parseEntityTag,
  parseEntityTagList,
  strongMatch,
  strongTag,
  weakMatch,
  weakTag,
} from '../../src/http/etag.js';

const strong = (opaque: string): EntityTag => ({ weak: false, opaque });
const weak = (opaque: string): EntityTag => ({ weak: true, opaque });

describe('parseEntityTag', () => {
  const cases: [string, string, EntityTag | null][] = [
    ['strong tag (RFC 9110 §8.8.3)', '"xyzzy"', strong('"xyzzy"')],
    ['weak tag (RFC 9110 §8.8.3 W/)', 'W/"xyzzy"', weak('"xyzzy"')],
    ['empty opaque-tag (RFC 9110 §8.8.3 *etagc)', '""', strong('""')],
    ['empty weak opaque-tag', 'W/""', weak('""')],
    ['etagc symbols incl. "," and "\\" (RFC 9110 §8.8.3)', '"a,b\\c!#"', strong('"a,b\\c!#"')],
    ['obs-text is etagc (RFC 9110 §8.8.3)', '"caf\u00e9"', strong('"caf\u00e9"')],
    ['surrounding OWS is tolerated', ' "a" ', strong('"a"')],
    ['lowercase w/ is not the weak prefix (RFC 9110 §8.8.3 %s"W/")', 'w/"a"', null],
    ['unquoted -> null', 'xyzzy', null],
    ['space inside -> null (not etagc)', '"a b"', null],
    ['DQUOTE inside -> null', '"a"b"', null],
    ['unterminated -> null', '"abc', null],
    ['lone quote -> null', '"', null],
    ['W/ alone -> null', 'W/', null],
    ['space after W/ -> null', 'W/ "a"', null],
    ['control char -> null', '"a\x01"', null],
    ['code unit > 0xFF -> null', '"\u4e2d"', null],
    ['star is not an entity-tag', '*', null],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => assert.deepEqual(parseEntityTag(input), expected));
  }
});

describe('parseEntityTagList', () => {
  const cases: [string, string, '*' | EntityTag[]][] = [
    ['"*" alone (RFC 9110 §13.1.1, §13.1.2)', '*', '*'],
    ['"*" with OWS', ' * ', '*'],
    ['one tag', '"a"', [strong('"a"')]],
    [
      'list of tags (RFC 9110 §13.1.2 #entity-tag)',
      '"a", W/"b" ,"c"',
      [strong('"a"'), weak('"b"'), strong('"c"')],
    ],
    [
      'comma inside an opaque-tag is part of it (RFC 9110 §8.8.3 etagc)',
      '"a,b", "c"',
      [strong('"a,b"'), strong('"c"')],
    ],
    ['invalid members are skipped', '"a", junk, w/"x", "b"', [strong('"a"'), strong('"b"')]],
    ['"*" mixed with tags is not the wildcard', '*, "a"', [strong('"a"')]],
    ['two tags without a comma are one invalid member', '"a" "b", "c"', [strong('"c"')]],
    ['invalid char inside quotes skips just that member', '"a b", "c"', [strong('"c"')]],
    ['empty elements are ignored (RFC 9110 §5.6.1.2)', ', ,"a",,', [strong('"a"')]],
    ['empty value', '', []],
    ['unterminated tag swallows the rest', '"a", "b', [strong('"a"')]],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => assert.deepEqual(parseEntityTagList(input), expected));
  }
});

describe('strongMatch / weakMatch (RFC 9110 §8.8.3.2 table)', () => {
  const cases: [string, EntityTag, EntityTag, boolean, boolean][] = [
    ['W/"1" vs W/"1": strong no, weak yes', weak('"1"'), weak('"1"'), false, true],
    ['W/"1" vs W/"2": strong no, weak no', weak('"1"'), weak('"2"'), false, false],
    ['W/"1" vs "1": strong no, weak yes', weak('"1"'), strong('"1"'), false, true],
    ['"1" vs "1": strong yes, weak yes', strong('"1"'), strong('"1"'), true, true],
    ['"1" vs "2": strong no, weak no', strong('"1"'), strong('"2"'), false, false],
    ['opaque-tags are case-sensitive', strong('"a"'), strong('"A"'), false, false],
  ];
  for (const [name, a, b, s, w] of cases) {
    it(name, () => {
      assert.equal(strongMatch(a, b), s);
      assert.equal(strongMatch(b, a), s);
      assert.equal(weakMatch(a, b), w);
      assert.equal(weakMatch(b, a), w);
    });
  }
});

describe('entityTagListMatches', () => {
  const cases: [string, string, string, boolean, boolean][] = [
    // [name, field value, our tag, strong?, expected]
    ['exact single tag, weak comparison', '"a"', '"a"', false, true],
    ['exact single tag, strong comparison', '"a"', '"a"', true, true],
    ['our weak tag never matches strongly (RFC 9110 §8.8.3.2)', 'W/"a"', 'W/"a"', true, false],
    ['their weak tag never matches strongly (RFC 9110 §8.8.3.2)', 'W/"a"', '"a"', true, false],
    ['their weak tag matches weakly (RFC 9110 §8.8.3.2)', 'W/"a"', '"a"', false, true],
    ['our weak tag matches their strong one weakly', '"a"', 'W/"a"', false, true],
    ['member later in the list', '"x", "y", "a"', '"a"', true, true],
    ['no member matches', '"x", "y"', '"a"', false, false],
    ['OWS around the only member', '  "a"  ', '"a"', true, true],
    ['tag with a comma matches whole (RFC 9110 §8.8.3 etagc)', '"a,b"', '"a,b"', true, true],
    ['pieces of a comma tag do not match', '"a,b"', '"a"', false, false],
    ['invalid member does not match even if it contains our tag', 'x"a"', '"a"', false, false],
    ['prefix of a longer tag does not match', '"ab"', '"a"', false, false],
    ['wildcard is not handled here', '*', '"a"', false, false],
  ];
  for (const [name, value, etag, isStrong, expected] of cases) {
    it(name, () => assert.equal(entityTagListMatches(value, etag, isStrong), expected));
  }
});

describe('formatting entity-tags', () => {
  it('formatEntityTag writes W/ for weak tags (RFC 9110 §8.8.3)', () => {
    assert.equal(formatEntityTag(strong('"a"')), '"a"');
    assert.equal(formatEntityTag(weak('"a"')), 'W/"a"');
  });
  it('strongTag / weakTag wrap raw text in quotes (RFC 9110 §8.8.3)', () => {
    assert.equal(strongTag('5-abc'), '"5-abc"');
    assert.equal(weakTag('5-abc'), 'W/"5-abc"');
    assert.equal(strongTag(''), '""');
  });
  it('formatted tags parse back to themselves', () => {
    for (const t of [strong('"x"'), weak('"y,z"')]) assert.deepEqual(parseEntityTag(formatEntityTag(t)), t);
  });
  const throwing: [string, string][] = [
    ['a DQUOTE', 'a"b'],
    ['already quoted text', '"abc"'],
    ['a space', 'a b'],
    ['CR LF', 'a\r\n'],
    ['a code unit above 0xFF', '\u4e2d'],
  ];
  for (const [name, input] of throwing) {
    it(`strongTag/weakTag throw TypeError for ${name} (RFC 9110 §8.8.3 etagc)`, () => {
      assert.throws(() => strongTag(input), TypeError);
      assert.throws(() => weakTag(input), TypeError);
    });
  }
});
