import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { storedEntryProblem } from '../../src/cache/entry-check.js';
import {
  type CombineResult,
  combinePieces,
  completionFits,
  completionProblem,
  type HeldPieces,
  heldProblem,
  ifRangeFor,
  missingOf,
  type NewPiece,
  pieceOf,
  rangeHeaderFor,
  type StoredPieces,
  sliceHeld,
  spanOf,
  strongValidatorOf,
} from '../../src/cache/pieces.js';

const bytes = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array) => new TextDecoder().decode(b);
/** The representation every piece below is cut from. */
const REP = '0123456789abcdefghij'; // 20 bytes

describe('pieceOf (RFC 9110 §14.4, §15.3.7)', () => {
  const cases: [string, Record<string, string>, number, string][] = [
    ['one range with its length', { 'content-range': 'bytes 4-9/20', 'content-length': '6' }, 6, 'ok 4-9/20'],
    ['no Content-Length: the body counts', { 'content-range': 'bytes 0-0/1' }, 1, 'ok 0-0/1'],
    [
      'body shorter than the range (the suite: bytes 4-9/10 over 5 bytes)',
      { 'content-range': 'bytes 4-9/10' },
      5,
      'body length disagrees with Content-Range',
    ],
    [
      'Content-Length lies',
      { 'content-range': 'bytes 4-9/20', 'content-length': '7' },
      6,
      'Content-Length disagrees with Content-Range',
    ],
    ['unknown complete length', { 'content-range': 'bytes 0-4/*' }, 5, 'unknown complete length'],
    ['end past the length', { 'content-range': 'bytes 0-20/20' }, 21, 'Content-Range is not a byte range'],
    ['first after last', { 'content-range': 'bytes 9-4/20' }, 6, 'Content-Range is not a byte range'],
    ['unsatisfied form', { 'content-range': 'bytes */20' }, 0, 'Content-Range is not a byte range'],
    [
      'absurd length (over 15 digits)',
      { 'content-range': 'bytes 0-0/99999999999999999999' },
      1,
      'Content-Range is not a byte range',
    ],
    [
      'huge length, one byte: a piece (its bytes are what is bounded)',
      { 'content-range': 'bytes 0-0/999999999999999' },
      1,
      'ok 0-0/999999999999999',
    ],
    [
      'multipart/byteranges (no Content-Range)',
      { 'content-type': 'multipart/byteranges; boundary=b' },
      10,
      'no Content-Range (multipart/byteranges is not stored)',
    ],
  ];
  for (const [name, headers, n, want] of cases)
    it(name, () => {
      const r = pieceOf(headers, n);
      assert.equal(r.ok ? `ok ${r.start}-${r.end}/${r.lengthBytes}` : r.reason, want);
    });
});

describe('strongValidatorOf / ifRangeFor (RFC 9110 §8.8.2.2, §8.8.3, §13.1.5)', () => {
  const lm = 'Mon, 02 Jan 2023 03:04:05 GMT';
  const cases: [string, Record<string, string>, string | undefined, string | undefined][] = [
    ['strong ETag', { etag: '"a"' }, 'etag "a"', '"a"'],
    [
      'weak ETag: none, even with a strong Last-Modified',
      { etag: 'W/"a"', 'last-modified': lm, date: 'Mon, 02 Jan 2023 04:00:00 GMT' },
      undefined,
      undefined,
    ],
    [
      'Last-Modified a second before Date: strong',
      { 'last-modified': lm, date: 'Mon, 02 Jan 2023 03:04:06 GMT' },
      `lm ${Date.parse(lm)}`,
      lm,
    ],
    ['Last-Modified equal to Date: weak', { 'last-modified': lm, date: lm }, undefined, undefined],
    ['Last-Modified without Date: weak', { 'last-modified': lm }, undefined, undefined],
    ['nothing', {}, undefined, undefined],
  ];
  for (const [name, headers, v, ifRange] of cases) {
    it(name, () => {
      assert.equal(strongValidatorOf(headers), v);
      assert.equal(ifRangeFor(headers), ifRange);
    });
  }
});

describe('spanOf / missingOf / rangeHeaderFor / sliceHeld', () => {
  const held: HeldPieces = { lengthBytes: 20, pieces: [2, 4, 8, 11] };
  const body = bytes(REP.slice(2, 5) + REP.slice(8, 12));
  const spans: [string, string | undefined, string][] = [
    ['no Range: the whole representation', undefined, '0-19'],
    ['one range', 'bytes=3-9', '3-9'],
    ['suffix', 'bytes=-5', '15-19'],
    ['open', 'bytes=8-', '8-19'],
    ['invalid Range is ignored: the whole', 'bytes=x', '0-19'],
    ['several ranges: other', 'bytes=0-1,5-6', 'other'],
    ['unsatisfiable: other', 'bytes=30-', 'other'],
  ];
  for (const [name, range, want] of spans) {
    it(`spanOf: ${name}`, () => {
      const s = spanOf(range, 20);
      assert.equal(s.kind === 'span' ? `${s.start}-${s.end}` : s.kind, want);
    });
  }
  const coverage: [string, number, number, string][] = [
    ['inside one piece', 2, 4, 'held'],
    ['inside the other', 9, 10, 'held'],
    ['across the gap', 3, 9, 'missing 5-7'],
    ['before every piece', 0, 3, 'missing 0-1'],
    ['after every piece', 10, 19, 'missing 12-19'],
    ['the whole: first to last missing byte', 0, 19, 'missing 0-19'],
    ['from a piece to the end', 8, 19, 'missing 12-19'],
    ['nothing held in it', 5, 7, 'missing 5-7'],
  ];
  for (const [name, a, b, want] of coverage) {
    it(`missingOf: ${name}`, () => {
      const c = missingOf(held, a, b);
      assert.equal(c.kind === 'held' ? 'held' : `missing ${c.start}-${c.end}`, want);
    });
  }
  it('rangeHeaderFor: open at the end, closed elsewhere', () => {
    assert.equal(rangeHeaderFor(5, 9, 10), 'bytes=5-');
    assert.equal(rangeHeaderFor(5, 8, 10), 'bytes=5-8');
  });
  it('sliceHeld: the bytes of a held span; a span not held throws', () => {
    assert.equal(text(sliceHeld(held, body, 3, 4)), '34');
    assert.equal(text(sliceHeld(held, body, 8, 11)), '89ab');
    assert.throws(() => sliceHeld(held, body, 4, 8), RangeError);
  });
});

describe('combinePieces (RFC 9111 §3.4)', () => {
  const limits = { maxPieces: 3, maxBytes: 15 };
  const stored = (pieces: number[], validator: string | undefined = 'etag "a"'): StoredPieces => {
    let b = '';
    for (let i = 0; i < pieces.length; i += 2) b += REP.slice(pieces[i]!, pieces[i + 1]! + 1);
    return { held: { lengthBytes: 20, pieces }, body: bytes(b), validator };
  };
  const piece = (start: number, end: number, o: Partial<NewPiece> = {}): NewPiece => ({
    start,
    end,
    lengthBytes: 20,
    body: bytes(REP.slice(start, end + 1)),
    validator: 'etag "a"',
    ...o,
  });
  const show = (r: CombineResult) =>
    r.kind === 'refused'
      ? `refused: ${r.reason}`
      : `${r.kind} ${r.held.pieces.join(',')} ${text(r.body)}${r.complete ? ' complete' : ''}`;
  const cases: [string, StoredPieces | undefined, NewPiece, string][] = [
    ['nothing stored: the piece alone', undefined, piece(2, 4), 'replaced 2,4 234'],
    ['apart: inserted in order', stored([8, 9]), piece(2, 4), 'combined 2,4,8,9 23489'],
    ['adjacent: merged', stored([2, 4]), piece(5, 6), 'combined 2,6 23456'],
    ['overlapping, same bytes: merged', stored([2, 6]), piece(5, 9), 'combined 2,9 23456789'],
    ['bridging two pieces', stored([0, 2, 6, 8]), piece(3, 5), 'combined 0,8 012345678'],
    ['inside a held piece', stored([2, 9]), piece(4, 5), 'combined 2,9 23456789'],
    [
      'covering every byte, over maxBytes (15): refused',
      stored([0, 9]),
      piece(10, 19, { body: bytes(REP.slice(10)) }),
      'refused: pieces over the bounds',
    ],
    [
      'another strong validator: replaced, never mixed',
      stored([2, 4]),
      piece(5, 6, { validator: 'etag "b"' }),
      'replaced 5,6 56',
    ],
    [
      'no validator on the new piece: replaced',
      stored([2, 4]),
      piece(5, 6, { validator: undefined }),
      'replaced 5,6 56',
    ],
    [
      'no validator on either: replaced',
      stored([2, 4], undefined),
      piece(5, 6, { validator: undefined }),
      'replaced 5,6 56',
    ],
    [
      'another complete length: replaced',
      stored([2, 4]),
      piece(5, 6, { lengthBytes: 21 }),
      'replaced 5,6 56',
    ],
    [
      'overlap with other bytes, same validator: replaced (pieces disagree)',
      stored([2, 6]),
      piece(5, 7, { body: bytes('XY7') }),
      'replaced 5,7 XY7',
    ],
    [
      'a fourth piece apart: refused (maxPieces 3)',
      stored([0, 0, 2, 2, 4, 4]),
      piece(6, 6),
      'refused: pieces over the bounds',
    ],
    ['over maxBytes combined: refused', stored([0, 9]), piece(11, 16), 'refused: pieces over the bounds'],
    [
      'one piece over maxBytes alone: refused',
      undefined,
      piece(0, 15, { body: bytes(REP.slice(0, 16)) }),
      'refused: piece over the bounds',
    ],
  ];
  for (const [name, s, p, want] of cases)
    it(name, () => assert.equal(show(combinePieces(s, p, limits)), want));
  it('a set that covers every byte is complete', () => {
    const r = combinePieces(stored([0, 9]), piece(10, 19), { maxPieces: 4, maxBytes: 20 });
    assert.equal(show(r), `combined 0,19 ${REP} complete`);
  });
  it('maxPieces 0 stores no piece', () => {
    assert.equal(
      show(combinePieces(undefined, piece(1, 1), { maxPieces: 0, maxBytes: 20 })),
      'refused: piece over the bounds',
    );
  });
});

describe('completionFits: the missing bytes beside the held ones within maxEntryBytes (RFC 9111 §3.4)', () => {
  const held: HeldPieces = { lengthBytes: 1_000_000_000_000_000, pieces: [0, 9, 20, 29] }; // 20 bytes held
  const cases: [string, number, number, number, boolean][] = [
    ['10 missing bytes, 30 allowed', 10, 19, 30, true],
    ['11 missing bytes, 30 allowed', 10, 20, 30, false],
    ['a petabyte missing (an absurd Content-Range)', 30, 999_999_999_999_999, 1 << 30, false],
  ];
  for (const [name, start, end, maxBytes, fits] of cases)
    it(name, () => assert.equal(completionFits(held, start, end, maxBytes), fits));
});

describe('completionProblem: an answer to our request for the missing bytes', () => {
  const ok = (start: number, end: number, lengthBytes = 20) => ({
    ok: true as const,
    start,
    end,
    lengthBytes,
  });
  const cases: [string, Parameters<typeof completionProblem>[0], string | undefined][] = [
    ['exactly what was asked', ok(5, 9), undefined],
    ['inside what was asked', ok(6, 8), undefined],
    [
      'starts before what was asked (overlapping Content-Range)',
      ok(0, 9),
      'Content-Range outside the range asked for',
    ],
    ['ends after it', ok(5, 12), 'Content-Range outside the range asked for'],
    ['another complete length', ok(5, 9, 40), 'another complete length'],
    [
      'not a piece',
      { ok: false, reason: 'body length disagrees with Content-Range' },
      'body length disagrees with Content-Range',
    ],
  ];
  for (const [name, piece, want] of cases)
    it(name, () => assert.equal(completionProblem(piece, 5, 9, 20), want));
});

describe('heldProblem / storedEntryProblem: pieces read back from a store', () => {
  const meta = (partial: unknown, status = 206) => ({
    response: { status, headers: {}, requestTimeMs: 1, responseTimeMs: 1 },
    varyKey: '',
    varyHeaders: {},
    partial,
  });
  const cases: [string, unknown, number, string | undefined][] = [
    ['well-formed', { lengthBytes: 20, pieces: [0, 1, 5, 6] }, 4, undefined],
    [
      'bytes disagree with the body',
      { lengthBytes: 20, pieces: [0, 1] },
      3,
      'pieces disagree with the body length',
    ],
    ['overlapping', { lengthBytes: 20, pieces: [0, 3, 2, 5] }, 8, 'piece bounds'],
    ['adjacent (not merged)', { lengthBytes: 20, pieces: [0, 1, 2, 3] }, 4, 'piece bounds'],
    ['past the length', { lengthBytes: 5, pieces: [3, 5] }, 3, 'piece bounds'],
    ['odd list', { lengthBytes: 5, pieces: [3] }, 1, 'piece list'],
    ['not numbers', { lengthBytes: 5, pieces: ['0', '1'] }, 2, 'piece bounds'],
    ['no length', { pieces: [0, 1] }, 2, 'complete length'],
  ];
  for (const [name, partial, n, want] of cases) {
    it(name, () => {
      assert.equal(heldProblem(partial, n), want);
      assert.equal(
        storedEntryProblem(meta(partial), n, 100),
        want === undefined ? undefined : `partial: ${want}`,
      );
    });
  }
  it('a 206 without pieces, or pieces on a 200, is not served', () => {
    assert.equal(storedEntryProblem(meta(undefined), 3, 100), 'status 206 without pieces');
    assert.equal(
      storedEntryProblem(meta({ lengthBytes: 20, pieces: [0, 2] }, 200), 3, 100),
      'partial entry without status 206',
    );
  });
});
