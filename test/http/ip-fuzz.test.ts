// Fuzzing IP and CIDR parsing and matching (src/http/ip.ts) with seeded hostile input. Oracles: Node's
// own address parser (net.isIP) and the WHATWG URL host serialiser for what is an address and how it
// is written, BigInt arithmetic for masks and prefix matches, and the round trip
// parseIp(formatIp(b)) = b. Replay a failure with the FUZZ_SEED printed in the message.
import assert from 'node:assert/strict';
import { isIP } from 'node:net';
import { describe, it } from 'node:test';
import {
  createIpMatcher,
  formatIp,
  type IpBytes,
  type IpRange,
  inRange,
  isIpv4Mapped,
  maskIp,
  parseIp,
  parseIpRange,
} from '../../src/http/ip.js';
import { forAll, type Gen, ITERATIONS, randomIpBytes } from '../helpers/random.js';

const PIECES = [
  '0',
  '1',
  '9',
  '00',
  '01',
  '255',
  '256',
  'a',
  'F',
  'ffff',
  'fffff',
  'g',
  ':',
  ':',
  '::',
  '.',
  '.',
  '%',
  '/',
  ' ',
  '-',
  '\0',
  '\u0661',
];

function toBig(b: IpBytes): bigint {
  let n = 0n;
  for (const x of b) n = (n << 8n) | BigInt(x);
  return n;
}

function fromBig(n: bigint): IpBytes {
  const b = new Uint8Array(16);
  for (let i = 15; i >= 0; i--) {
    b[i] = Number(n & 0xffn);
    n >>= 8n;
  }
  return b;
}

const ALL = (1n << 128n) - 1n;
const maskBits = (bits: number): bigint => (bits === 0 ? 0n : (ALL << BigInt(128 - bits)) & ALL);

/** Text forms of an address: RFC 5952, uncompressed, leading zeros, upper case, dotted tail. */
function addressText(g: Gen, b: IpBytes): string {
  const canonical = formatIp(b);
  if (!canonical.includes(':')) return g.chance(0.3) ? `::ffff:${canonical}` : canonical;
  const words: string[] = [];
  for (let i = 0; i < 16; i += 2) words.push(((b[i]! << 8) | b[i + 1]!).toString(16));
  switch (g.int(4)) {
    case 0:
      return canonical;
    case 1:
      return words
        .map((w) => w.padStart(4, '0'))
        .join(':')
        .toUpperCase();
    case 2:
      return `${words.slice(0, 6).join(':')}:${b[12]}.${b[13]}.${b[14]}.${b[15]}`;
    default:
      return words.join(':');
  }
}

describe('fuzz: parseIp / formatIp', () => {
  it(`${ITERATIONS * 2} random addresses round-trip: parseIp(formatIp(b)) = b, every text form gives the same bytes`, () => {
    forAll(
      0x1a01,
      ITERATIONS * 2,
      (g) => {
        const b = randomIpBytes(g);
        return { hex: Buffer.from(b).toString('hex'), text: addressText(g, b) };
      },
      ({ hex, text }) => {
        const b = Uint8Array.from(Buffer.from(hex, 'hex'));
        assert.deepEqual(parseIp(formatIp(b)), b);
        assert.deepEqual(parseIp(text), b, text);
        assert.equal(formatIp(parseIp(text)!), formatIp(b));
      },
    );
  });

  it(`${ITERATIONS * 2} canonical IPv6 text matches the WHATWG URL serialiser (RFC 5952 §4)`, () => {
    forAll(
      0x1a02,
      ITERATIONS * 2,
      (g) => Buffer.from(randomIpBytes(g)).toString('hex'),
      (hex) => {
        const b = Uint8Array.from(Buffer.from(hex, 'hex'));
        if (isIpv4Mapped(b)) return assert.match(formatIp(b), /^\d+\.\d+\.\d+\.\d+$/);
        const full = hex.match(/.{4}/g)!.join(':');
        assert.equal(`[${formatIp(b)}]`, new URL(`http://[${full}]/`).hostname);
      },
    );
  });

  it(`${ITERATIONS * 3} mutated and random strings (leading zeros, ':::', stray dots, zones, NUL): parseIp agrees with net.isIP`, () => {
    forAll(
      0x1a03,
      ITERATIONS * 3,
      (g) => (g.chance(0.7) ? g.mutate(addressText(g, randomIpBytes(g)), PIECES) : g.string(PIECES, 12)),
      (s) => {
        const got = parseIp(s);
        const pct = s.indexOf('%');
        if (pct === -1) {
          assert.equal(got !== null, isIP(s) !== 0, `net.isIP(${JSON.stringify(s)}) = ${isIP(s)}`);
          if (got && isIP(s) === 4) assert.ok(isIpv4Mapped(got));
        } else if (got) {
          // RFC 6874: a non-empty zone after an IPv6 address is ignored.
          assert.ok(pct < s.length - 1);
          assert.deepEqual(parseIp(s.slice(0, pct)), got);
          assert.equal(isIP(s.slice(0, pct)), 6);
        }
        if (got) assert.deepEqual(parseIp(formatIp(got)), got, 'canonical text re-parses');
      },
    );
  });
});

describe('fuzz: ranges and matching', () => {
  it(`${ITERATIONS * 2} random CIDRs: accepted iff no host bits are set; matching agrees with BigInt prefix arithmetic`, () => {
    forAll(
      0x1a04,
      ITERATIONS * 2,
      (g) => {
        const b = randomIpBytes(g);
        const v4 = isIpv4Mapped(b) && g.chance(0.8);
        const bits = g.int((v4 ? 32 : 128) + 1);
        const cleared = g.chance(0.6);
        const prefixBits = v4 ? 96 + bits : bits;
        const base = cleared ? maskIp(b, prefixBits) : b;
        const text = v4 ? formatIp(base) : addressText(g, base).replace(/^(\d+\.)/, '::ffff:$1');
        const probes = [randomIpBytes(g), b, base].map((p) => Buffer.from(p).toString('hex'));
        return { entry: `${text}/${bits}`, hex: Buffer.from(base).toString('hex'), prefixBits, probes };
      },
      ({ entry, hex, prefixBits, probes }) => {
        const base = toBig(Uint8Array.from(Buffer.from(hex, 'hex')));
        const hostBitsSet = (base & ~maskBits(prefixBits) & ALL) !== 0n;
        const r = parseIpRange(entry);
        if (hostBitsSet) {
          assert.equal(r.kind, 'invalid', entry);
          if (r.kind === 'invalid') {
            // The suggested correction is itself a valid range.
            const suggestion = /did you mean (\S+)\?/.exec(r.reason)?.[1];
            assert.ok(suggestion, r.reason);
            assert.equal(parseIpRange(suggestion).kind, 'ok', suggestion);
          }
          return;
        }
        assert.equal(r.kind, 'ok', entry);
        if (r.kind !== 'ok') return;
        assert.equal(r.ranges.length, 1);
        const range = r.ranges[0]!;
        assert.equal(range.prefixBits, prefixBits);
        assert.equal(toBig(range.bytes), base);
        for (const p of probes) {
          const addr = Uint8Array.from(Buffer.from(p, 'hex'));
          const want = (toBig(addr) & maskBits(prefixBits)) === base;
          assert.equal(inRange(addr, range), want, `${formatIp(addr)} in ${entry}`);
        }
      },
    );
  });

  it(`${ITERATIONS} maskIp agrees with BigInt masking for every prefix length`, () => {
    forAll(
      0x1a05,
      ITERATIONS,
      (g) => ({ hex: Buffer.from(randomIpBytes(g)).toString('hex'), bits: g.int(129) }),
      ({ hex, bits }) => {
        const b = Uint8Array.from(Buffer.from(hex, 'hex'));
        assert.deepEqual(maskIp(b, bits), fromBig(toBig(b) & maskBits(bits)));
      },
    );
  });

  it(`${ITERATIONS} matchers over random range lists agree with "any range contains it"`, () => {
    forAll(
      0x1a06,
      ITERATIONS,
      (g) => {
        const ranges: { hex: string; bits: number }[] = [];
        for (let n = g.int(5); n > 0; n--) {
          const bits = g.int(129);
          ranges.push({ hex: Buffer.from(maskIp(randomIpBytes(g), bits)).toString('hex'), bits });
        }
        const probes: string[] = [];
        for (let n = 0; n < 8; n++) {
          // Probes near the ranges as well as anywhere.
          const near =
            ranges.length && g.chance(0.5)
              ? Uint8Array.from(Buffer.from(g.pick(ranges).hex, 'hex'))
              : randomIpBytes(g);
          if (g.chance(0.5)) {
            const at = g.int(16);
            near[at] = near[at]! ^ (1 << g.int(8));
          }
          probes.push(Buffer.from(near).toString('hex'));
        }
        return { ranges, probes };
      },
      ({ ranges, probes }) => {
        const rs: IpRange[] = ranges.map((r) => ({
          bytes: Uint8Array.from(Buffer.from(r.hex, 'hex')),
          prefixBits: r.bits,
        }));
        const match = createIpMatcher(rs);
        for (const p of probes) {
          const addr = toBig(Uint8Array.from(Buffer.from(p, 'hex')));
          const want = ranges.some(
            (r) => (addr & maskBits(r.bits)) === toBig(Uint8Array.from(Buffer.from(r.hex, 'hex'))),
          );
          assert.equal(match(Uint8Array.from(Buffer.from(p, 'hex'))), want, p);
        }
      },
    );
  });

  it(`${ITERATIONS * 2} hostile range entries (keywords, '/', '%', spaces, signs): never throw, 'ok' only for real ranges`, () => {
    const pieces = [
      ...PIECES,
      '/',
      '/0',
      '/33',
      '/129',
      '/+8',
      '/08',
      'loopback',
      'PRIVATE',
      'linklocal',
      '\n',
    ];
    forAll(
      0x1a07,
      ITERATIONS * 2,
      (g) =>
        g.chance(0.5) ? g.mutate(`${formatIp(randomIpBytes(g))}/${g.int(129)}`, pieces) : g.string(pieces, 8),
      (entry) => {
        const r = parseIpRange(entry);
        if (r.kind === 'invalid') return assert.equal(typeof r.reason, 'string');
        assert.ok(r.ranges.length >= 1);
        for (const range of r.ranges) {
          assert.ok(Number.isInteger(range.prefixBits) && range.prefixBits >= 0 && range.prefixBits <= 128);
          assert.deepEqual(maskIp(range.bytes, range.prefixBits), range.bytes, 'no host bits');
        }
      },
    );
  });
});
