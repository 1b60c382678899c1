import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  clientAddress,
  formatForwardedElement,
  MAX_FORWARDED_HOPS,
  nodeText,
  parseForwarded,
  parseForwardedNode,
  parseXForwardedFor,
} from '../../src/http/forwarded.js';
import { compileIpRanges } from '../../src/http/ip.js';

describe('parseForwardedNode (RFC 7239 §6)', () => {
  const cases: [string, string, boolean, string | null, string?][] = [
    ['IPv4 (§6.1)', '192.0.2.43', false, '192.0.2.43'],
    ['IPv4 with port (§6.1)', '192.0.2.43:47011', false, '192.0.2.43', '47011'],
    ['bracketed IPv6 (§6.1)', '[2001:db8:cafe::17]', false, '2001:db8:cafe::17'],
    ['bracketed IPv6 with port (§6.1)', '[2001:db8::1]:4711', false, '2001:db8::1', '4711'],
    ['IPv6 is canonicalised', '[2001:DB8:0::1]', false, '2001:db8::1'],
    ['unknown (§6.2), any case', 'UnKnown', false, 'unknown'],
    ['obfuscated identifier (§6.3)', '_hidden', false, '_hidden'],
    ['obfuscated identifier with obfuscated port (§6.3)', '_SEVKISEK:_p1', false, '_SEVKISEK', '_p1'],
    ['unbracketed IPv6 is refused in Forwarded (§6: IPv6 needs brackets)', '2001:db8::1', false, null],
    ['unbracketed IPv6 is accepted in X-Forwarded-For', '2001:db8::1', true, '2001:db8::1'],
    ['IPv4 in brackets is refused', '[192.0.2.1]', false, null],
    ['unclosed bracket', '[2001:db8::1', false, null],
    ['junk after the bracket', '[2001:db8::1]x', false, null],
    ['port over five digits', '192.0.2.1:123456', false, null],
    ['empty port', '192.0.2.1:', false, null],
    ['underscore alone is not an identifier', '_', false, null],
    ['a hostname is not a node', 'proxy.example', false, null],
    ['empty', '', false, null],
  ];
  for (const [name, input, bare, text, port] of cases) {
    it(name, () => {
      const n = parseForwardedNode(input, bare);
      if (text === null) return assert.equal(n, null);
      assert.ok(n);
      assert.equal(nodeText(n), text);
      assert.equal(n.port, port);
    });
  }
});

describe('parseForwarded (RFC 7239 §4)', () => {
  it('the §4 examples: one element per proxy, parameters unquoted', () => {
    assert.deepEqual(parseForwarded('for="_gazonk"'), [{ for: '_gazonk' }]);
    assert.deepEqual(parseForwarded('For="[2001:db8:cafe::17]:4711"'), [{ for: '[2001:db8:cafe::17]:4711' }]);
    assert.deepEqual(parseForwarded('for=192.0.2.60;proto=http;by=203.0.113.43'), [
      { for: '192.0.2.60', proto: 'http', by: '203.0.113.43' },
    ]);
    assert.deepEqual(parseForwarded('for=192.0.2.43, for=198.51.100.17'), [
      { for: '192.0.2.43' },
      { for: '198.51.100.17' },
    ]);
  });

  const cases: [string, string, unknown[]][] = [
    [
      'parameter names are case-insensitive (§4)',
      'FOR=1.2.3.4;PROTO=https',
      [{ for: '1.2.3.4', proto: 'https' }],
    ],
    ['a comma inside a quoted value does not split', 'for="_a,b";host="x"', [{ for: '_a,b', host: 'x' }]],
    ['OWS around ";" is tolerated', 'for=1.2.3.4 ; proto=https', [{ for: '1.2.3.4', proto: 'https' }]],
    ['a repeated parameter makes the element malformed (§4 MUST NOT)', 'for=1.1.1.1;for=2.2.2.2', [null]],
    ['a pair without "=" is malformed', 'for', [null]],
    ['an empty value is malformed', 'for=', [null]],
    ['an unterminated quoted-string is malformed', 'for="[::1]', [null]],
    [
      'a malformed element keeps its place',
      'for=1.1.1.1, junk junk, for=2.2.2.2',
      [{ for: '1.1.1.1' }, null, { for: '2.2.2.2' }],
    ],
    ['unknown parameters are ignored (extension point, §5.5)', 'for=1.1.1.1;secret=x', [{ for: '1.1.1.1' }]],
    ['empty list members are dropped', ', for=1.1.1.1 ,', [{ for: '1.1.1.1' }]],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => assert.deepEqual(parseForwarded(input), expected));
  }
});

describe('parseXForwardedFor', () => {
  it('a list of nodes, client first; ports and brackets stripped; junk is null', () => {
    const nodes = parseXForwardedFor('203.0.113.7, [2001:db8::1]:443, 10.0.0.1:8080, 2001:db8::2, junk');
    assert.deepEqual(
      nodes.map((n) => (n ? nodeText(n) : null)),
      ['203.0.113.7', '2001:db8::1', '10.0.0.1', '2001:db8::2', null],
    );
  });
});

describe('clientAddress (walk right to left through trusted hops)', () => {
  const isTrusted = compileIpRanges(['10.0.0.0/8', '::1/128', '127.0.0.1']);
  const cases: [string, { peer: string; xff?: string; forwarded?: string }, string][] = [
    ['untrusted peer: the peer, XFF ignored', { peer: '203.0.113.9', xff: '1.2.3.4' }, '203.0.113.9'],
    [
      'untrusted peer: the peer, Forwarded ignored',
      { peer: '203.0.113.9', forwarded: 'for=1.2.3.4' },
      '203.0.113.9',
    ],
    ['untrusted IPv4-mapped peer reads as IPv4', { peer: '::ffff:203.0.113.9' }, '203.0.113.9'],
    ['trusted peer without headers: the peer', { peer: '10.0.0.1' }, '10.0.0.1'],
    ['trusted peer, one XFF hop: that hop', { peer: '10.0.0.1', xff: '203.0.113.7' }, '203.0.113.7'],
    [
      'client-forged XFF left of the real client is not reached',
      { peer: '10.0.0.1', xff: '6.6.6.6, 203.0.113.7' },
      '203.0.113.7',
    ],
    [
      'trusted hops are skipped to the first untrusted one',
      { peer: '10.0.0.1', xff: '6.6.6.6, 203.0.113.7, 10.0.0.2, 10.0.0.3' },
      '203.0.113.7',
    ],
    ['every hop trusted: the leftmost', { peer: '10.0.0.1', xff: '10.0.0.5, 10.0.0.2' }, '10.0.0.5'],
    [
      'trusted IPv4-mapped peer (dual-stack socket)',
      { peer: '::ffff:10.0.0.1', xff: '203.0.113.7' },
      '203.0.113.7',
    ],
    ['XFF hop with a port', { peer: '10.0.0.1', xff: '203.0.113.7:51000' }, '203.0.113.7'],
    ['XFF unbracketed IPv6 hop, canonicalised', { peer: '::1', xff: '2001:DB8::0:1' }, '2001:db8::1'],
    ['XFF empty members are skipped', { peer: '10.0.0.1', xff: '203.0.113.7, , ' }, '203.0.113.7'],
    [
      'XFF malformed hop: unknown, nothing further left is believed',
      { peer: '10.0.0.1', xff: '1.1.1.1, bogus' },
      'unknown',
    ],
    ['XFF empty value: the peer', { peer: '10.0.0.1', xff: '' }, '10.0.0.1'],
    [
      'Forwarded for= IPv4 (RFC 7239 §5.2)',
      { peer: '10.0.0.1', forwarded: 'for=192.0.2.60;proto=https' },
      '192.0.2.60',
    ],
    [
      'Forwarded quoted IPv6 with port (RFC 7239 §6.1)',
      { peer: '10.0.0.1', forwarded: 'for="[2001:db8::1]:4711"' },
      '2001:db8::1',
    ],
    [
      'Forwarded walks right to left over trusted elements',
      { peer: '10.0.0.1', forwarded: 'for=6.6.6.6, for=192.0.2.60, for=10.0.0.2' },
      '192.0.2.60',
    ],
    [
      'Forwarded obfuscated client (RFC 7239 §6.3)',
      { peer: '10.0.0.1', forwarded: 'for=_hidden' },
      '_hidden',
    ],
    ['Forwarded unknown client (RFC 7239 §6.2)', { peer: '10.0.0.1', forwarded: 'for=unknown' }, 'unknown'],
    [
      'Forwarded element without for=: unknown (the proxy did not say)',
      { peer: '10.0.0.1', forwarded: 'for=1.1.1.1, proto=https' },
      'unknown',
    ],
    ['Forwarded malformed element: unknown', { peer: '10.0.0.1', forwarded: 'for=1.1.1.1, for=' }, 'unknown'],
    [
      'both headers given: Forwarded is read (callers pass only the one their proxies write)',
      { peer: '10.0.0.1', xff: '1.1.1.1', forwarded: 'for=2.2.2.2' },
      '2.2.2.2',
    ],
    ['peer that is not an address is returned as is', { peer: '' }, ''],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => assert.equal(clientAddress({ ...input, isTrusted }), expected));
  }

  it(`at most ${MAX_FORWARDED_HOPS} hops are examined; then the last trusted one counts`, () => {
    const xff = `6.6.6.6, ${Array.from({ length: 40 }, (_, i) => `10.0.1.${i}`).join(', ')}`;
    assert.equal(clientAddress({ peer: '10.0.0.1', xff, isTrusted }), '10.0.1.8');
  });
});

describe('formatForwardedElement (RFC 7239 §4, §6)', () => {
  const cases: [string, Parameters<typeof formatForwardedElement>[0], string][] = [
    ['IPv4 for is a bare token', { for: '192.0.2.60' }, 'for=192.0.2.60'],
    ['IPv6 for is bracketed and quoted (§6)', { for: '2001:db8::1' }, 'for="[2001:db8::1]"'],
    ['IPv6 is canonicalised', { for: '2001:0db8:0::1' }, 'for="[2001:db8::1]"'],
    ['IPv4-mapped peer is written as IPv4', { for: '::ffff:192.0.2.1' }, 'for=192.0.2.1'],
    ['port makes it quoted', { for: '192.0.2.60', forPort: 8080 }, 'for="192.0.2.60:8080"'],
    ['IPv6 with port', { for: '2001:db8::1', forPort: 4711 }, 'for="[2001:db8::1]:4711"'],
    ['unknown and obfuscated are tokens', { for: 'unknown', by: '_gw1' }, 'for=unknown;by=_gw1'],
    ['proto is lowercased', { for: '192.0.2.1', proto: 'HTTPS' }, 'for=192.0.2.1;proto=https'],
    ['host with a port is quoted', { host: 'example.com:8443' }, 'host="example.com:8443"'],
    ['host without a port is a token', { host: 'example.com' }, 'host=example.com'],
    [
      'all together',
      { for: '2001:db8::1', by: '10.0.0.1', proto: 'https', host: 'example.com' },
      'for="[2001:db8::1]";by=10.0.0.1;proto=https;host=example.com',
    ],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => assert.equal(formatForwardedElement(input), expected));
  }

  it('what it formats parses back (round trip)', () => {
    const v = formatForwardedElement({
      for: '2001:db8::1',
      forPort: 4711,
      proto: 'https',
      host: 'a.example:8443',
    });
    const [e] = parseForwarded(v);
    assert.deepEqual(e, { for: '[2001:db8::1]:4711', proto: 'https', host: 'a.example:8443' });
    assert.equal(nodeText(parseForwardedNode(e!.for!)!), '2001:db8::1');
  });

  const bad: [string, Parameters<typeof formatForwardedElement>[0]][] = [
    ['a hostname as for', { for: 'proxy.example' }],
    ['a bad proto', { proto: 'ht tp' }],
    ['a host with CR LF', { host: 'a\r\nb' }],
    ['a host with a comma', { host: 'a,b' }],
    ['a bad port', { for: '1.2.3.4', forPort: 'x' }],
  ];
  for (const [name, input] of bad) {
    it(`${name} -> TypeError`, () => assert.throws(() => formatForwardedElement(input), TypeError));
  }
});
