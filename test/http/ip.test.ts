import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  canonicalIp,
  compileIpRanges,
  formatIp,
  inRange,
  isIpv4Mapped,
  maskIp,
  parseIp,
  parseIpRange,
} from '../../src/http/ip.js';

describe('parseIp / canonicalIp', () => {
  const cases: [string, string, string | null][] = [
    ['IPv4 dotted quad', '192.0.2.1', '192.0.2.1'],
    ['IPv4 zeros', '0.0.0.0', '0.0.0.0'],
    ['IPv4 broadcast', '255.255.255.255', '255.255.255.255'],
    ['IPv4 part over 255 -> invalid', '256.0.0.1', null],
    ['IPv4 leading zero is refused (octal to inet_aton, decimal elsewhere)', '010.0.0.1', null],
    ['IPv4 three parts -> invalid', '10.0.1', null],
    ['IPv4 five parts -> invalid', '1.2.3.4.5', null],
    ['IPv4 trailing dot -> invalid', '1.2.3.4.', null],
    ['IPv4 hex part -> invalid', '0x7f.0.0.1', null],
    ['IPv4 with a port is not an address', '1.2.3.4:80', null],
    [
      'IPv6 full form -> RFC 5952 §4 compressed, lowercase',
      '2001:0DB8:0000:0000:0000:0000:0000:0001',
      '2001:db8::1',
    ],
    ['IPv6 loopback', '::1', '::1'],
    ['IPv6 unspecified', '::', '::'],
    ['IPv6 trailing ::', '2001:db8::', '2001:db8::'],
    ['IPv6 longest zero run is compressed (RFC 5952 §4.2.3)', '2001:0:0:1:0:0:0:1', '2001:0:0:1::1'],
    ['IPv6 first of equal runs is compressed (RFC 5952 §4.2.3)', '2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    [
      'IPv6 single zero group is not compressed (RFC 5952 §4.2.2)',
      '2001:db8:0:1:1:1:1:1',
      '2001:db8:0:1:1:1:1:1',
    ],
    ['IPv6 :: standing for one group is accepted', '1:2:3:4:5:6:7::', '1:2:3:4:5:6:7:0'],
    ['IPv6 two :: -> invalid', '1::2::3', null],
    ['IPv6 nine groups -> invalid', '1:2:3:4:5:6:7:8:9', null],
    ['IPv6 seven groups without :: -> invalid', '1:2:3:4:5:6:7', null],
    ['IPv6 group of five digits -> invalid', '12345::1', null],
    ['IPv6 lone leading colon -> invalid', ':1::2', null],
    ['IPv6 lone trailing colon -> invalid', '1::2:', null],
    ['IPv6 triple colon -> invalid', ':::', null],
    ['IPv6 non-hex -> invalid', '2001:db8::g', null],
    ['IPv4-mapped IPv6 reads as IPv4 (same client)', '::ffff:192.0.2.1', '192.0.2.1'],
    ['IPv4-mapped in hex reads as IPv4', '::ffff:c000:201', '192.0.2.1'],
    ['IPv6 with embedded IPv4 that is not mapped stays IPv6', '64:ff9b::192.0.2.1', '64:ff9b::c000:201'],
    ['IPv6 embedded IPv4 must be last', '::1.2.3.4:1', null],
    ['zone index is accepted and dropped (RFC 6874)', 'fe80::1%eth0', 'fe80::1'],
    ['zone index on IPv4 -> invalid', '1.2.3.4%eth0', null],
    ['empty -> invalid', '', null],
    ['brackets are not part of an address', '[::1]', null],
    ['a hostname is not an address', 'localhost', null],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => assert.equal(canonicalIp(input), expected));
  }

  it('IPv4 is stored IPv4-mapped: ::ffff:0:0/96 (RFC 4291 §2.5.5.2)', () => {
    const b = parseIp('1.2.3.4')!;
    assert.ok(isIpv4Mapped(b));
    assert.deepEqual([...b], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 1, 2, 3, 4]);
    assert.equal(isIpv4Mapped(parseIp('::1')!), false);
  });

  it('formatIp round-trips every canonical form', () => {
    for (const s of ['1.2.3.4', '::', '::1', '2001:db8::', 'fe80::1:2', '2001:db8:0:1:1:1:1:1']) {
      assert.equal(formatIp(parseIp(s)!), s);
    }
  });

  it('maskIp keeps the prefix bits only', () => {
    assert.equal(formatIp(maskIp(parseIp('2001:db8:1:2:3:4:5:6')!, 64)), '2001:db8:1:2::');
    assert.equal(formatIp(maskIp(parseIp('10.1.2.3')!, 96 + 12)), '10.0.0.0');
    assert.equal(formatIp(maskIp(parseIp('10.31.2.3')!, 96 + 12)), '10.16.0.0');
  });
});

describe('parseIpRange', () => {
  const invalid: [string, string, RegExp][] = [
    ['host bits set: suggests the network', '10.1.2.3/8', /did you mean 10\.0\.0\.0\/8/],
    [
      'host bits set in an IPv4-mapped IPv6 range: suggests it in the same IPv6 form (a /111 is no IPv4 prefix)',
      '::ffff:145.127.23.5/111',
      /did you mean ::ffff:145\.126\.0\.0\/111\?/,
    ],
    ['IPv4 prefix over 32', '10.0.0.0/33', /0-32/],
    ['IPv6 prefix over 128', '::/129', /0-128/],
    ['prefix with a leading zero', '10.0.0.0/08', /0-32/],
    ['empty prefix', '10.0.0.0/', /0-32/],
    ['not an address', 'proxy.internal', /not an IPv4\/IPv6 address/],
    ['zone index in a range', 'fe80::1%eth0', /zone/],
  ];
  for (const [name, entry, message] of invalid) {
    it(`${name} -> invalid`, () => {
      const r = parseIpRange(entry);
      assert.equal(r.kind, 'invalid');
      assert.match(r.kind === 'invalid' ? r.reason : '', message);
    });
  }

  const matches: [string, string, string, boolean][] = [
    ['single IPv4 address matches itself', '192.0.2.1', '192.0.2.1', true],
    ['single IPv4 address, another address', '192.0.2.1', '192.0.2.2', false],
    ['IPv4 CIDR matches inside', '10.0.0.0/8', '10.200.3.4', true],
    ['IPv4 CIDR does not match outside', '10.0.0.0/8', '11.0.0.1', false],
    ['IPv4 /12 boundary: 172.31.x inside', '172.16.0.0/12', '172.31.255.255', true],
    ['IPv4 /12 boundary: 172.32.x outside', '172.16.0.0/12', '172.32.0.0', false],
    ['IPv4 CIDR matches the IPv4-mapped form of a peer', '10.0.0.0/8', '::ffff:10.1.1.1', true],
    ['IPv4-mapped CIDR matches plain IPv4', '::ffff:10.0.0.0/104', '10.9.9.9', true],
    ['IPv4 /0 matches every IPv4 address', '0.0.0.0/0', '203.0.113.9', true],
    ['IPv4 /0 does not match IPv6', '0.0.0.0/0', '2001:db8::1', false],
    ['IPv6 CIDR matches inside', '2001:db8::/32', '2001:db8:ffff::1', true],
    ['IPv6 CIDR does not match outside', '2001:db8::/32', '2001:db9::1', false],
    ['IPv6 /0 matches IPv4 too (all of the 16-byte space)', '::/0', '1.2.3.4', true],
    ['IPv6 single address in non-canonical text', '2001:DB8:0::1', '2001:db8::1', true],
    ['keyword loopback: 127.0.0.0/8', 'loopback', '127.0.0.2', true],
    ['keyword loopback: ::1', 'loopback', '::1', true],
    ['keyword loopback: mapped 127.0.0.1 from a dual-stack socket', 'loopback', '::ffff:127.0.0.1', true],
    ['keyword loopback does not match private', 'loopback', '10.0.0.1', false],
    ['keyword private: RFC 1918 192.168/16', 'private', '192.168.1.1', true],
    ['keyword private: unique local fc00::/7 (RFC 4193)', 'private', 'fd12:3456::1', true],
    ['keyword private: public address', 'private', '8.8.8.8', false],
    ['keyword linklocal: fe80::/10', 'linklocal', 'fe80::1%eth0', true],
    ['keywords are case-insensitive', 'LOOPBACK', '127.0.0.1', true],
  ];
  for (const [name, entry, addr, expected] of matches) {
    it(name, () => {
      const r = parseIpRange(entry);
      assert.equal(r.kind, 'ok');
      const ranges = r.kind === 'ok' ? r.ranges : [];
      assert.equal(
        ranges.some((range) => inRange(parseIp(addr)!, range)),
        expected,
      );
    });
  }

  it('compileIpRanges: any entry matches; empty list matches nothing', () => {
    const m = compileIpRanges(['10.0.0.0/8', '2001:db8::/32']);
    assert.equal(m(parseIp('10.1.1.1')!), true);
    assert.equal(m(parseIp('2001:db8::5')!), true);
    assert.equal(m(parseIp('192.0.2.1')!), false);
    assert.equal(compileIpRanges([])(parseIp('10.1.1.1')!), false);
  });

  it('compileIpRanges throws on a bad entry, naming it', () => {
    assert.throws(() => compileIpRanges(['10.0.0.0/8', 'nope']), /"nope"/);
  });
});
