import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  parseSurrogateControl,
  parseSurrogateMaxAge,
  type SurrogateDirective,
  surrogateMemberTarget,
} from '../../src/http/surrogate-control.js';

const d = (name: string, raw: string | true = true, target: string | null = null, value = raw) =>
  ({ name, raw, value, target }) satisfies SurrogateDirective;

describe('parseSurrogateControl (Edge Architecture §2.2, §2.3)', () => {
  const cases: [string, string, SurrogateDirective[]][] = [
    ['empty', '', []],
    ['max-age (§2.2.3)', 'max-age=3600', [d('max-age', '3600')]],
    ['names lowercased', 'MaX-aGe=3600, No-Store', [d('max-age', '3600'), d('no-store')]],
    ['targeted directive (§2.3)', 'max-age=3600;gatehouse', [d('max-age', '3600', 'gatehouse')]],
    ['OWS around ";"', 'no-store ; cdn1 , max-age=5', [d('no-store', true, 'cdn1'), d('max-age', '5')]],
    ['device token keeps its case', 'no-store;CDN.Example', [d('no-store', true, 'CDN.Example')]],
    ['max-age=N+M is one token (§2.2.3)', 'max-age=60+30', [d('max-age', '60+30')]],
    [
      'content with a quoted capability list (§2.2.4)',
      'content="ESI/1.0 ESI-Inline/1.0";abc, max-age=1',
      [d('content', '"ESI/1.0 ESI-Inline/1.0"', 'abc', 'ESI/1.0 ESI-Inline/1.0'), d('max-age', '1')],
    ],
    ['quoted argument with a comma', 'foo="a, b"', [d('foo', '"a, b"', null, 'a, b')]],
    ['extension without argument', 'foobar, max-age=1', [d('foobar'), d('max-age', '1')]],
    ['duplicates kept in order', 'max-age=1, max-age=2', [d('max-age', '1'), d('max-age', '2')]],
    ['empty members ignored', ' , ,no-store,, ', [d('no-store')]],
    ['space before "=" is malformed: skipped', 'max-age =100, no-store', [d('no-store')]],
    ['space after "=" is malformed: skipped', 'max-age= 100, no-store', [d('no-store')]],
    ['empty argument: skipped', 'max-age=, no-store', [d('no-store')]],
    ['empty device token: skipped', 'max-age=1;, no-store', [d('no-store')]],
    ['two device tokens: skipped', 'max-age=1;a;b, no-store', [d('no-store')]],
    ['device token that is not a token: skipped', 'max-age=1;"a", no-store', [d('no-store')]],
    ['trailing junk: skipped', 'max-age=1 x, no-store', [d('no-store')]],
    ['unterminated quoted-string: rest skipped', 'a="x, no-store', []],
    ['bad character in quoted-string: skipped', 'a="x\x00", no-store', [d('no-store')]],
    ['no name: skipped', '=1, ;x, no-store', [d('no-store')]],
  ];
  for (const [name, value, expected] of cases) {
    it(name, () => assert.deepEqual(parseSurrogateControl(value), expected));
  }
});

describe('parseSurrogateMaxAge (Edge Architecture §2.2.3)', () => {
  const cases: [string, string, { maxAgeSec: number; staleSec: number | null } | null][] = [
    ['N', '3600', { maxAgeSec: 3600, staleSec: null }],
    ['0', '0', { maxAgeSec: 0, staleSec: null }],
    ['N+M', '60+30', { maxAgeSec: 60, staleSec: 30 }],
    ['2^31 stays', '2147483648', { maxAgeSec: 2147483648, staleSec: null }],
    ['overflow saturates (RFC 9111 §1.2.2)', '99999999999', { maxAgeSec: 2147483648, staleSec: null }],
    ['M saturates too', '1+99999999999', { maxAgeSec: 1, staleSec: 2147483648 }],
    ['empty', '', null],
    ['N+ (no M)', '60+', null],
    ['+M (no N)', '+30', null],
    ['N+M+K', '1+2+3', null],
    ['negative', '-1', null],
    ['decimal', '1.5', null],
    ['letters', 'abc', null],
  ];
  for (const [name, arg, expected] of cases) {
    it(name, () => assert.deepEqual(parseSurrogateMaxAge(arg), expected));
  }
});

describe('surrogateMemberTarget (Edge Architecture §2.3)', () => {
  const cases: [string, string, string | null][] = [
    ['untargeted', 'max-age=60', null],
    ['targeted', 'max-age=60;gatehouse', 'gatehouse'],
    ['OWS around the token', 'no-store ; cdn ', 'cdn'],
    ['malformed directive still has a target', 'max-age =1;gatehouse', 'gatehouse'],
    ['";" inside a quoted-string is not a target', 'content="a;b"', null],
    ['quoted then target', 'content="a;b";edge', 'edge'],
    ['not a token after ";"', 'max-age=1;a b', null],
    ['two targets: not a token', 'max-age=1;a;b', null],
    ['empty target', 'max-age=1;', null],
    ['unterminated quoted-string', 'a="x;y', null],
  ];
  for (const [name, member, expected] of cases) {
    it(name, () => assert.equal(surrogateMemberTarget(member), expected));
  }
});
