import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type ByteRange,
  formatContentRange,
  formatUnsatisfiedRange,
  multipartByterangesParts,
  parseContentRange,
  parseRange,
  type RangeDecision,
} from '../../src/http/range.js';
import { mulberry32, SEED_OFFSET } from '../helpers/random.js';

const IGNORE: RangeDecision = { kind: 'ignore' };
const UNSAT: RangeDecision = { kind: 'unsatisfiable' };
const R = (...pairs: [number, number][]): RangeDecision => ({
  kind: 'ranges',
  ranges: pairs.map(([start, end]) => ({ start, end })),
});

describe('parseRange (RFC 9110 §14)', () => {
  const cases: [string, string, number, RangeDecision, number?][] = [
    // [name, Range value, size, expected, maxRanges]
    ['first 500 bytes (RFC 9110 §14.1.1 int-range)', 'bytes=0-499', 1000, R([0, 499])],
    [
      'bytes=-500 is the LAST 500 bytes, not 0-500 (RFC 9110 §14.1.1 suffix-range)',
      'bytes=-500',
      1000,
      R([500, 999]),
    ],
    ['bytes=0-0 is the first byte (RFC 9110 §14.1.1)', 'bytes=0-0', 1000, R([0, 0])],
    ['bytes=-1 is the last byte (RFC 9110 §14.1.1)', 'bytes=-1', 1000, R([999, 999])],
    ['bytes=500- runs to the end (RFC 9110 §14.1.1 open range)', 'bytes=500-', 1000, R([500, 999])],
    ['last byte by position', 'bytes=999-999', 1000, R([999, 999])],
    ['last-pos beyond the end is clamped (RFC 9110 §14.1.1)', 'bytes=0-5000', 1000, R([0, 999])],
    [
      'suffix longer than the representation is all of it (RFC 9110 §14.1.1)',
      'bytes=-5000',
      1000,
      R([0, 999]),
    ],
    ['huge last-pos is clamped', 'bytes=10-99999999999999999999', 1000, R([10, 999])],
    ['overlapping ranges are coalesced (RFC 9110 §14.2)', 'bytes=0-99,50-149', 1000, R([0, 149])],
    ['adjacent ranges are coalesced (RFC 9110 §15.3.7.2)', 'bytes=0-99,100-199', 1000, R([0, 199])],
    ['a contained range disappears into its container', 'bytes=0-499,100-199', 1000, R([0, 499])],
    [
      'ranges come back sorted (RFC 9110 §15.3.7.2 coalescing)',
      'bytes=500-599,0-99',
      1000,
      R([0, 99], [500, 599]),
    ],
    ['suffix and int-range overlap -> coalesced', 'bytes=0-499,-600', 1000, R([0, 999])],
    ['disjoint ranges stay separate', 'bytes=0-9,20-29,40-', 50, R([0, 9], [20, 29], [40, 49])],
    ['OWS around commas (RFC 9110 §5.6.1)', 'bytes=0-9 , 20-29', 100, R([0, 9], [20, 29])],
    ['empty list elements are allowed (RFC 9110 §5.6.1.2)', 'bytes=,0-9,,20-29,', 100, R([0, 9], [20, 29])],
    ['OWS after "=" is tolerated', 'bytes= 0-9 ', 100, R([0, 9])],
    ['unit is case-insensitive (RFC 9110 §14.1)', 'Bytes=0-9', 100, R([0, 9])],
    ['uppercase unit (RFC 9110 §14.1)', 'BYTES=-10', 100, R([90, 99])],
    [
      'unsatisfiable specs are dropped, the rest served (RFC 9110 §14.1.1)',
      'bytes=1000-2000, 0-1',
      1000,
      R([0, 1]),
    ],
    // Unsatisfiable -> 416
    ['first-pos at the size -> 416 (RFC 9110 §14.1.1, §15.5.17)', 'bytes=1000-', 1000, UNSAT],
    ['first-pos beyond the size -> 416 (RFC 9110 §15.5.17)', 'bytes=1000-2000', 1000, UNSAT],
    ['bytes=-0 -> 416 (RFC 9110 §14.1.1 zero suffix-length)', 'bytes=-0', 1000, UNSAT],
    ['all specs unsatisfiable -> 416', 'bytes=2000-,-0', 1000, UNSAT],
    ['huge first-pos -> 416', 'bytes=99999999999999999999-', 1000, UNSAT],
    ['size 0: int-range -> 416', 'bytes=0-0', 0, UNSAT],
    ['size 0: open range -> 416', 'bytes=0-', 0, UNSAT],
    [
      'size 0: suffix-range -> 416 (departure from RFC 9110 §14.1.1: no 206 for zero bytes)',
      'bytes=-5',
      0,
      UNSAT,
    ],
    // Ignored -> 200
    ['bytes=1-0 (last < first) invalidates the header -> 200 (RFC 9110 §14.1.1)', 'bytes=1-0', 1000, IGNORE],
    ['one invalid spec among valid ones -> 200 (RFC 9110 §14.2)', 'bytes=0-1,5-2', 1000, IGNORE],
    [
      'last < first with huge numbers is still invalid',
      'bytes=99999999999999999999-99999999999999999998',
      1000,
      IGNORE,
    ],
    ['last < first is checked before size 0', 'bytes=1-0', 0, IGNORE],
    ['unknown unit -> 200 (RFC 9110 §14.2 MUST ignore)', 'items=0-5', 1000, IGNORE],
    ['unit prefix only -> 200', 'byte=0-5', 1000, IGNORE],
    ['space before "=" -> 200', 'bytes =0-5', 1000, IGNORE],
    ['missing "=" -> 200', 'bytes 0-5', 1000, IGNORE],
    ['no unit -> 200', '0-5', 1000, IGNORE],
    ['empty range-set -> 200 (RFC 9110 §14.1.1 1#range-spec)', 'bytes=', 1000, IGNORE],
    ['only commas -> 200', 'bytes=,, ,', 1000, IGNORE],
    ['not digits -> 200', 'bytes=abc', 1000, IGNORE],
    ['trailing garbage spec -> 200', 'bytes=0-1,x', 1000, IGNORE],
    ['space inside a spec -> 200', 'bytes=0 -1', 1000, IGNORE],
    ['space after "-" -> 200', 'bytes=0- 1', 1000, IGNORE],
    ['double dash -> 200', 'bytes=--1', 1000, IGNORE],
    ['first-pos without "-" -> 200', 'bytes=1', 1000, IGNORE],
    ['three positions -> 200', 'bytes=0-1-2', 1000, IGNORE],
    ['signed number -> 200', 'bytes=+1-2', 1000, IGNORE],
    ['hex -> 200', 'bytes=0x10-20', 1000, IGNORE],
    ['lone "-" -> 200', 'bytes=-', 1000, IGNORE],
    ['empty value -> 200', '', 1000, IGNORE],
    [
      '16 specs are allowed by default',
      `bytes=${Array.from({ length: 16 }, (_, i) => `${i * 10}-${i * 10}`).join(',')}`,
      1000,
      R(...Array.from({ length: 16 }, (_, i): [number, number] => [i * 10, i * 10])),
    ],
    [
      '17 specs exceed the default of 16 -> 200 (RFC 9110 §14.2)',
      `bytes=${Array.from({ length: 17 }, (_, i) => `${i * 10}-${i * 10}`).join(',')}`,
      1000,
      IGNORE,
    ],
    ['maxRanges option: 3 specs with a limit of 2 -> 200', 'bytes=0-1,5-6,9-10', 1000, IGNORE, 2],
    ['maxRanges option: 2 specs with a limit of 2', 'bytes=0-1,5-6', 1000, R([0, 1], [5, 6]), 2],
  ];
  for (const [name, value, size, expected, maxRanges] of cases) {
    it(name, () =>
      assert.deepEqual(
        parseRange(value, size, maxRanges === undefined ? undefined : { maxRanges }),
        expected,
      ),
    );
  }

  it('fast path and general path agree for single ranges', () => {
    for (const v of ['0-0', '0-99', '5-', '999-1500', '1000-', '7-3', '0-999']) {
      assert.deepEqual(parseRange(`bytes=${v}`, 1000), parseRange(`bytes=${v} `, 1000), v);
    }
  });
});

describe('Content-Range (RFC 9110 §14.4)', () => {
  it('formats a satisfied range', () =>
    assert.equal(formatContentRange({ start: 0, end: 99 }, 1000), 'bytes 0-99/1000'));
  it('formats the 416 form (RFC 9110 §15.5.17)', () =>
    assert.equal(formatUnsatisfiedRange(1000), 'bytes */1000'));
  it('formats an empty representation', () => assert.equal(formatUnsatisfiedRange(0), 'bytes */0'));

  const cases: [string, ReturnType<typeof parseContentRange>][] = [
    ['bytes 0-99/1000', { kind: 'range', start: 0, end: 99, completeLength: 1000 }],
    ['bytes 0-0/1', { kind: 'range', start: 0, end: 0, completeLength: 1 }],
    ['BYTES 5-9/10', { kind: 'range', start: 5, end: 9, completeLength: 10 }],
    [' bytes 5-9/10 ', { kind: 'range', start: 5, end: 9, completeLength: 10 }],
    ['bytes 5-9/*', { kind: 'range', start: 5, end: 9 }],
    ['bytes */1000', { kind: 'unsatisfied', completeLength: 1000 }],
    ['bytes 9-5/10', null], // first > last
    ['bytes 0-10/10', null], // last not below the complete length
    ['bytes 4-9/5', null],
    ['items 0-9/10', null], // another unit
    ['bytes  0-9/10', null],
    ['bytes 0-9', null],
    ['bytes -1-9/10', null],
    ['bytes 0-9/10, 20-29/100', null],
    ['bytes 0x1-9/10', null],
    ['bytes 0-9999999999999999/99999999999999999', null], // beyond 15 digits
    ['', null],
    ['bytes */*', null],
  ];
  for (const [value, want] of cases) {
    it(`parses ${JSON.stringify(value)}`, () => assert.deepEqual(parseContentRange(value), want));
  }
  it('never throws on hostile values; what it returns is a valid range (fuzz)', () => {
    const alphabet = [
      'bytes',
      'BYTES',
      ' ',
      '-',
      '/',
      '*',
      '0',
      '1',
      '9',
      '99999999999999999',
      ',',
      '\t',
      'x',
    ];
    const next = mulberry32(99 + SEED_OFFSET);
    const below = (n: number) => Math.floor(next() * n);
    for (let i = 0; i < 20_000; i++) {
      let v = '';
      const n = below(9);
      for (let j = 0; j < n; j++) v += alphabet[below(alphabet.length)];
      const r = parseContentRange(v);
      if (r === null) continue;
      if (r.kind === 'unsatisfied') {
        assert.ok(Number.isSafeInteger(r.completeLength), v);
        continue;
      }
      assert.ok(Number.isSafeInteger(r.start) && Number.isSafeInteger(r.end) && r.start <= r.end, v);
      if (r.completeLength !== undefined) assert.ok(r.end < r.completeLength, v);
    }
  });

  it('parses what it formats', () => {
    for (const [start, end, size] of [
      [0, 0, 1],
      [0, 99, 1000],
      [999, 999, 1000],
      [123456789, 223456789, 999999999999],
    ] as const) {
      assert.deepEqual(parseContentRange(formatContentRange({ start, end }, size)), {
        kind: 'range',
        start,
        end,
        completeLength: size,
      });
    }
    assert.deepEqual(parseContentRange(formatUnsatisfiedRange(7)), {
      kind: 'unsatisfied',
      completeLength: 7,
    });
  });
});

describe('multipartByterangesParts (RFC 9110 §14.6, RFC 2046 §5.1.1)', () => {
  const body = 'abcdefghijklmnopqrstuvwxyz';
  const assemble = (ranges: ByteRange[], parts: ReturnType<typeof multipartByterangesParts>) =>
    parts.headers.map((h, i) => h + body.slice(ranges[i]!.start, ranges[i]!.end + 1)).join('') +
    parts.trailer;

  it('frames each part with its boundary, Content-Type and Content-Range', () => {
    const ranges = [
      { start: 0, end: 2 },
      { start: 10, end: 12 },
    ];
    const parts = multipartByterangesParts(ranges, body.length, 'text/plain', 'SEP');
    assert.deepEqual(parts.headers, [
      '--SEP\r\nContent-Type: text/plain\r\nContent-Range: bytes 0-2/26\r\n\r\n',
      '\r\n--SEP\r\nContent-Type: text/plain\r\nContent-Range: bytes 10-12/26\r\n\r\n',
    ]);
    assert.equal(parts.trailer, '\r\n--SEP--\r\n');
    const text = assemble(ranges, parts);
    assert.equal(
      text,
      '--SEP\r\nContent-Type: text/plain\r\nContent-Range: bytes 0-2/26\r\n\r\nabc' +
        '\r\n--SEP\r\nContent-Type: text/plain\r\nContent-Range: bytes 10-12/26\r\n\r\nklm' +
        '\r\n--SEP--\r\n',
    );
    assert.equal(parts.contentLength, Buffer.byteLength(text));
  });

  it('omits Content-Type in parts when the representation has none', () => {
    const parts = multipartByterangesParts([{ start: 0, end: 0 }], 26, undefined, 'b');
    assert.equal(parts.headers[0], '--b\r\nContent-Range: bytes 0-0/26\r\n\r\n');
    assert.equal(parts.contentLength, assemble([{ start: 0, end: 0 }], parts).length);
  });

  const throwing: [string, string, string][] = [
    ['an empty boundary', '', 'text/plain'],
    ['a boundary over 70 chars', 'x'.repeat(71), 'text/plain'],
    ['a boundary ending in a space', 'ab ', 'text/plain'],
    ['a boundary with CR LF', 'a\r\nb', 'text/plain'],
    ['a non-ASCII content type', 'b', 'text/plain; x=\u00e9'],
    ['a content type with CR LF', 'b', 'text/plain\r\nX: y'],
  ];
  for (const [name, boundary, type] of throwing) {
    it(`throws TypeError for ${name}`, () =>
      assert.throws(() => multipartByterangesParts([{ start: 0, end: 0 }], 1, type, boundary), TypeError));
  }
});
