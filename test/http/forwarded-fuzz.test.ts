// Fuzzing RFC 7239 Forwarded and X-Forwarded-For parsing (src/http/forwarded.ts) with seeded hostile
// input. Oracles: a node is refused exactly where RFC 7239's grammar (with node:net's isIP for the
// addresses) refuses it; addresses come back canonical and re-parse to the same bytes; formatted elements
// parse back to what was formatted; clientAddress agrees with a slow reference walk written from its
// documentation. Replay a failure with the FUZZ_SEED printed in the message.
import assert from 'node:assert/strict';
import { isIP } from 'node:net';
import { describe, it } from 'node:test';
import {
  clientAddress,
  type ForwardedNode,
  formatForwardedElement,
  MAX_FORWARDED_HOPS,
  nodeText,
  parseForwarded,
  parseForwardedNode,
  parseXForwardedFor,
} from '../../src/http/forwarded.js';
import { compileIpRanges, formatIp, type IpBytes, parseIp } from '../../src/http/ip.js';
import { forAll, type Gen, ITERATIONS, randomIpBytes } from '../helpers/random.js';

const PORT = /^(?:\d{1,5}|_[A-Za-z0-9._-]+)$/;
const OBFUSCATED = /^_[A-Za-z0-9._-]+$/;
const HOSTILE = [
  '[',
  ']',
  ':',
  '::',
  '.',
  '%',
  '%1',
  '%eth0',
  '_',
  '"',
  '\\',
  ',',
  ';',
  '=',
  ' ',
  '\t',
  '\r\n',
  '\0',
  'for=',
  'FOR=',
  'by=',
  'host=',
  'proto=',
  'unknown',
  '0',
  '1',
  '255',
  '256',
  '010',
  'ffff',
  'g',
  '\u00e9',
  '\u2028',
  '\ud800',
];

/** Text forms of an address that all name the same bytes: canonical, upper case, uncompressed. */
function addressText(g: Gen, b: IpBytes): string {
  const canonical = formatIp(b);
  if (!canonical.includes(':')) return g.chance(0.2) ? `::ffff:${canonical}` : canonical;
  const form = g.int(3);
  if (form === 0) return canonical;
  if (form === 1) return canonical.toUpperCase();
  const words: string[] = [];
  for (let i = 0; i < 16; i += 2) words.push(((b[i]! << 8) | b[i + 1]!).toString(16).padStart(4, '0'));
  return words.join(':');
}

function randomPort(g: Gen): string | undefined {
  if (g.chance(0.5)) return undefined;
  return g.chance(0.7) ? String(g.int(65536)) : `_${g.string(['a', 'Z', '9', '.', '_', '-'], 6) || 'p'}`;
}

/** A well-formed RFC 7239 node and what it must parse to. */
function validNode(g: Gen): { text: string; node: ForwardedNode } {
  const port = randomPort(g);
  const withPort = port === undefined ? {} : { port };
  const suffix = port === undefined ? '' : `:${port}`;
  const kind = g.int(4);
  if (kind === 0)
    return {
      text: `${g.pick(['unknown', 'UNKNOWN', 'Unknown'])}${suffix}`,
      node: { kind: 'unknown', ...withPort },
    };
  if (kind === 1) {
    const id = `_${g.string(['a', 'B', '7', '.', '_', '-'], 10) || 'x'}`;
    return { text: id + suffix, node: { kind: 'obfuscated', id, ...withPort } };
  }
  const bytes = randomIpBytes(g);
  const text = addressText(g, bytes);
  const address = formatIp(bytes);
  return {
    text: text.includes(':') ? `[${text}]${suffix}` : text + suffix,
    node: { kind: 'ip', address, bytes, ...withPort },
  };
}

function assertNodeInvariants(n: ForwardedNode): void {
  if (n.port !== undefined) assert.match(n.port, PORT);
  if (n.kind === 'ip') {
    assert.equal(n.address, formatIp(n.bytes), 'address is canonical');
    assert.deepEqual(parseIp(n.address), n.bytes, 'address re-parses to the same bytes');
    assert.ok(!n.address.includes('%'), 'no zone index');
  } else if (n.kind === 'obfuscated') {
    assert.match(n.id, OBFUSCATED);
  }
}

/**
 * Whether `text` is a node, written from RFC 7239 §6 with node:net's isIP as the address oracle:
 * node = nodename [ ":" node-port ]; nodename = IPv4address / "[" IPv6address "]" / "unknown" /
 * obfnode. With `bare` (X-Forwarded-For) an unbracketed IPv6 address without a port is one too.
 * No zone index (RFC 6874 is for URIs, not these fields).
 */
function referenceIsNode(text: string, bare: boolean): boolean {
  if (text.includes('%')) return false;
  if (bare && isIP(text) === 6) return true;
  const m = /^(\[[^\]]*\]|[^:]*)(?::(.*))?$/s.exec(text);
  if (m === null) return false;
  const [, name = '', port] = m;
  if (port !== undefined && !PORT.test(port)) return false;
  if (name.startsWith('[')) return isIP(name.slice(1, -1)) === 6;
  return name.toLowerCase() === 'unknown' || OBFUSCATED.test(name) || isIP(name) === 4;
}

describe('fuzz: Forwarded nodes (RFC 7239 §6)', () => {
  it(`${ITERATIONS} well-formed nodes in mixed text forms parse to the node they name`, () => {
    forAll(
      0xf0a1,
      ITERATIONS,
      (g) => validNode(g),
      ({ text, node }) => {
        const got = parseForwardedNode(text);
        assert.ok(got, 'parses');
        assert.deepEqual({ ...got }, { ...node });
        assertNodeInvariants(got);
      },
    );
  });

  it(`${ITERATIONS * 2} mutated nodes (brackets, colons, zones, quotes, controls): never throw, results canonical`, () => {
    let nulls = 0;
    forAll(
      0xf0a2,
      ITERATIONS * 2,
      (g) => {
        const bare = g.chance(0.5);
        const { text } = validNode(g);
        // X-Forwarded-For writes an IPv6 address without brackets (and without a port).
        const base = bare && g.chance(0.5) ? text.replace(/^\[([^\]]*)\](?::.*)?$/, '$1') : text;
        return { text: g.chance(0.8) ? g.mutate(base, HOSTILE) : g.string(HOSTILE, 8), bare };
      },
      ({ text, bare }) => {
        const got = parseForwardedNode(text, bare);
        // Refused exactly where the grammar refuses: a parser that returned null too often would
        // otherwise pass, every invariant below skipped.
        assert.equal(got !== null, referenceIsNode(text, bare), got === null ? 'refused' : 'accepted');
        if (got === null) {
          nulls++;
          return;
        }
        assertNodeInvariants(got);
        // Only an X-Forwarded-For node may be an unbracketed IPv6 address without a port.
        if (!bare && got.kind === 'ip' && got.address.includes(':')) assert.equal(text.charCodeAt(0), 0x5b);
      },
    );
    // Most hostile edits make a malformed node (about 89%, each refusal checked above); the invariants
    // must still have run on a real share of the inputs.
    const parsed = ITERATIONS * 2 - nulls;
    assert.ok(
      parsed >= Math.floor((ITERATIONS * 2) / 20),
      `only ${parsed} of ${ITERATIONS * 2} inputs parsed`,
    );
  });
});

describe('fuzz: Forwarded elements (RFC 7239 §4)', () => {
  /** Host values: legal field-value text, including quotes, backslashes, spaces and obs-text. */
  const HOST_PIECES = ['a', 'Z', '0', '.', '-', ':', '[', ']', '"', '\\', ' ', '=', '\u00e9', '\u00ff', '_'];

  it(`${ITERATIONS} formatted element lists (quotes, backslashes, IPv6, obs-text) parse back to what was formatted`, () => {
    forAll(
      0xf0b1,
      ITERATIONS,
      (g) => {
        const elements = [];
        for (let k = 1 + g.int(3); k > 0; k--) {
          const f = g.chance(0.8) ? validNode(g) : undefined;
          const b = g.chance(0.3) ? validNode(g) : undefined;
          elements.push({
            for: f?.node,
            by: b?.node,
            host: g.chance(0.6) ? g.string(HOST_PIECES, 12) || 'h' : undefined,
            proto: g.chance(0.5) ? g.pick(['http', 'HTTPS', 'ws', 'x+y.z-1']) : undefined,
          });
        }
        return elements;
      },
      (elements) => {
        const text = elements
          .map((e) => {
            const input: Record<string, unknown> = {};
            if (e.for) input.for = e.for;
            if (e.by) input.by = e.by;
            if (e.host !== undefined) input.host = e.host;
            if (e.proto !== undefined) input.proto = e.proto;
            return formatForwardedElement(input);
          })
          .join(', ');
        assert.ok(!/[\r\n\0]/.test(text), 'no CR, LF or NUL in the field value');
        const parsed = parseForwarded(text);
        // An element with no parameters formats to '' and vanishes from the list (RFC 9110 §5.6.1).
        const expected = elements.filter(
          (e) => e.for || e.by || e.host !== undefined || e.proto !== undefined,
        );
        assert.equal(parsed.length, expected.length, text);
        expected.forEach((e, i) => {
          const p = parsed[i];
          assert.ok(p, `element ${i} parses: ${text}`);
          assert.equal(p.host, e.host);
          assert.equal(p.proto, e.proto?.toLowerCase());
          for (const key of ['for', 'by'] as const) {
            const want = e[key];
            if (!want) {
              assert.equal(p[key], undefined);
              continue;
            }
            const node = parseForwardedNode(p[key]!);
            assert.ok(node, `${key}=${p[key]} parses`);
            assert.equal(nodeText(node), nodeText(want));
            assert.equal(node.port, want.port);
          }
        });
      },
    );
  });

  it(`${ITERATIONS} hostile hosts and protos (CR, LF, NUL, commas, semicolons): a TypeError or a clean value`, () => {
    forAll(
      0xf0b2,
      ITERATIONS,
      (g) => ({
        host: g.chance(0.5) ? g.anyString(12) : g.string(HOSTILE, 6),
        proto: g.chance(0.3) ? g.string(HOSTILE, 3) : 'https',
      }),
      ({ host, proto }) => {
        let text: string;
        try {
          text = formatForwardedElement({ for: '192.0.2.1', host, proto });
        } catch (err) {
          assert.ok(err instanceof TypeError, `only TypeError: ${err}`);
          return;
        }
        assert.ok(!/[\r\n\0]/.test(text), 'no CR, LF or NUL in the field value');
        const [e, ...rest] = parseForwarded(text);
        assert.equal(rest.length, 0, 'exactly one element');
        assert.ok(e);
        assert.equal(e.host, host);
        assert.equal(e.proto, proto.toLowerCase());
      },
    );
  });

  it(`${ITERATIONS * 2} hostile Forwarded values (quotes, escapes, repeats, controls): never throw, plain string fields`, () => {
    forAll(
      0xf0b3,
      ITERATIONS * 2,
      (g) =>
        g.chance(0.7)
          ? g.mutate(
              formatForwardedElement({ for: validNode(g).node, host: 'example.com', proto: 'https' }),
              HOSTILE,
              4,
            )
          : g.string(HOSTILE, 16),
      (value) => {
        for (const e of parseForwarded(value)) {
          if (e === null) continue;
          for (const [k, v] of Object.entries(e)) {
            assert.ok(['for', 'by', 'host', 'proto'].includes(k), k);
            assert.equal(typeof v, 'string');
          }
        }
        for (const n of parseXForwardedFor(value)) if (n) assertNodeInvariants(n);
      },
    );
  });
});

describe('fuzz: clientAddress agrees with a reference walk', () => {
  const isTrusted = compileIpRanges(['10.0.0.0/8', 'fd00::/8']);
  const POOL = [
    '10.0.0.1',
    '10.9.8.7',
    '::ffff:10.1.1.1',
    'fd00::1',
    '[fd00::2]',
    '192.0.2.1',
    '2001:db8::1',
    '[2001:db8::2]:80',
    '198.51.100.7:4711',
    'unknown',
    '_hidden',
    '_h:_p',
    '',
    ' ',
    'junk',
    '1.2.3',
    '"10.0.0.2"',
    '10.0.0.3%eth0',
  ];

  /** XFF has no quoted-strings: split on every comma, trim OWS, drop empty members. */
  function referenceXff(peer: IpBytes, xff: string): string {
    let client = formatIp(peer);
    const members = xff
      .split(',')
      .map((m) => m.replace(/^[ \t]+|[ \t]+$/g, ''))
      .filter((m) => m !== '');
    for (const m of members.reverse().slice(0, MAX_FORWARDED_HOPS)) {
      const node = parseForwardedNode(m, true);
      if (!node) return 'unknown';
      if (node.kind !== 'ip' || !isTrusted(node.bytes)) return nodeText(node);
      client = node.address;
    }
    return client;
  }

  function referenceForwarded(peer: IpBytes, value: string): string {
    let client = formatIp(peer);
    for (const e of parseForwarded(value).reverse().slice(0, MAX_FORWARDED_HOPS)) {
      const node = e?.for === undefined ? null : parseForwardedNode(e.for);
      if (!node) return 'unknown';
      if (node.kind !== 'ip' || !isTrusted(node.bytes)) return nodeText(node);
      client = node.address;
    }
    return client;
  }

  it(`${ITERATIONS * 2} random hop lists (trusted runs, junk, quotes, > ${MAX_FORWARDED_HOPS} hops) give the reference answer`, () => {
    forAll(
      0xf0c1,
      ITERATIONS * 2,
      (g) => {
        const hops: string[] = [];
        for (let n = g.chance(0.1) ? 40 : g.int(6); n > 0; n--)
          hops.push(g.chance(0.9) ? g.pick(POOL) : g.string(HOSTILE, 4));
        const peer = g.pick(['10.0.0.9', '::ffff:10.0.0.9', 'fd00::9', '203.0.113.5', 'not-an-ip']);
        const sep = () => g.pick([',', ', ', ' ,', ',,', ',\t']);
        const xff = hops.join(sep());
        const fwd = hops.map((h) => (g.chance(0.8) ? `for="${h}"` : `for=${h}`)).join(sep());
        return { peer, xff, fwd, useForwarded: g.chance(0.5) };
      },
      ({ peer, xff, fwd, useForwarded }) => {
        const got = clientAddress(
          useForwarded ? { peer, forwarded: fwd, xff, isTrusted } : { peer, xff, isTrusted },
        );
        const peerBytes = parseIp(peer);
        if (!peerBytes) return assert.equal(got, peer, 'an unparsable peer comes back as is');
        if (!isTrusted(peerBytes))
          return assert.equal(got, formatIp(peerBytes), 'an untrusted peer is the client');
        assert.equal(got, useForwarded ? referenceForwarded(peerBytes, fwd) : referenceXff(peerBytes, xff));
      },
    );
  });
});
