import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  boundaryFor,
  multipartBody,
  multipartFor,
  type StoredRangeDecision,
  storedRangeDecision,
} from '../../src/cache/stored-range.js';
import { multipartByterangesParts } from '../../src/http/range.js';

describe('storedRangeDecision (RFC 9110 §14, §13.1.5, §8.8.2.2)', () => {
  const lm = 'Mon, 02 Jan 2023 03:04:05 GMT';
  const sameSecond = lm;
  const later = 'Mon, 02 Jan 2023 03:04:06 GMT';
  const base = { 'content-type': 'text/plain', etag: '"e1"', 'last-modified': lm, date: later };
  const full: StoredRangeDecision = { kind: 'full' };
  const cases: [string, Partial<Parameters<typeof storedRangeDecision>[0]>, StoredRangeDecision][] = [
    ['no Range: full', { range: undefined }, full],
    ['one range', { range: 'bytes=2-4' }, { kind: 'ranges', ranges: [{ start: 2, end: 4 }] }],
    ['suffix range', { range: 'bytes=-3' }, { kind: 'ranges', ranges: [{ start: 7, end: 9 }] }],
    ['open range', { range: 'bytes=8-' }, { kind: 'ranges', ranges: [{ start: 8, end: 9 }] }],
    [
      'two ranges: both, for multipart/byteranges',
      { range: 'bytes=0-0, 5-6' },
      {
        kind: 'ranges',
        ranges: [
          { start: 0, end: 0 },
          { start: 5, end: 6 },
        ],
      },
    ],
    [
      'past the end: 416 with bytes */10',
      { range: 'bytes=10-' },
      { kind: 'unsatisfiable', contentRange: 'bytes */10' },
    ],
    ['another unit: ignored, full', { range: 'items=0-1' }, full],
    ['invalid syntax: ignored, full', { range: 'bytes=5-2' }, full],
    ['a stored 203 is not ranged', { range: 'bytes=0-1', status: 203 }, full],
    [
      'a stored response with Content-Range is not ranged',
      { range: 'bytes=0-1', headers: { ...base, 'content-range': 'bytes 0-9/10' } },
      full,
    ],
    [
      'If-Range with the strong ETag: ranged',
      { range: 'bytes=0-1', ifRange: '"e1"' },
      { kind: 'ranges', ranges: [{ start: 0, end: 1 }] },
    ],
    ['If-Range with another ETag: full', { range: 'bytes=0-1', ifRange: '"e2"' }, full],
    ['If-Range with a weak ETag: full (strong comparison)', { range: 'bytes=0-1', ifRange: 'W/"e1"' }, full],
    [
      'a weak stored ETag never matches If-Range',
      { range: 'bytes=0-1', ifRange: 'W/"e1"', headers: { ...base, etag: 'W/"e1"' } },
      full,
    ],
    [
      'If-Range date equal to Last-Modified, Date one second later: ranged',
      { range: 'bytes=0-1', ifRange: lm },
      { kind: 'ranges', ranges: [{ start: 0, end: 1 }] },
    ],
    [
      'If-Range date equal to Last-Modified in the second of Date: weak, full',
      { range: 'bytes=0-1', ifRange: lm, headers: { ...base, date: sameSecond } },
      full,
    ],
    [
      'If-Range date with no stored Date: weak, full',
      { range: 'bytes=0-1', ifRange: lm, headers: { etag: '"e1"', 'last-modified': lm } },
      full,
    ],
    ['If-Range date other than Last-Modified: full', { range: 'bytes=0-1', ifRange: later }, full],
    ['If-Range garbage: full', { range: 'bytes=0-1', ifRange: 'tomorrow' }, full],
  ];
  for (const [name, over, want] of cases) {
    it(name, () => {
      const got = storedRangeDecision({
        range: undefined,
        ifRange: undefined,
        status: 200,
        headers: base,
        sizeBytes: 10,
        ...over,
      });
      assert.deepEqual(got, want);
    });
  }
});

describe('multipart/byteranges from stored bytes (RFC 9110 §14.6, RFC 2046 §5.1.1)', () => {
  const bytes = new TextEncoder().encode('0123456789');
  const ranges = [
    { start: 0, end: 1 },
    { start: 7, end: 9 },
  ];
  it('builds exactly the framed body, with its announced length', () => {
    const parts = multipartByterangesParts(ranges, 10, 'text/plain', 'b');
    const out = multipartBody(bytes, ranges, parts);
    assert.equal(out.byteLength, parts.contentLength);
    assert.equal(
      new TextDecoder().decode(out),
      '--b\r\nContent-Type: text/plain\r\nContent-Range: bytes 0-1/10\r\n\r\n01' +
        '\r\n--b\r\nContent-Type: text/plain\r\nContent-Range: bytes 7-9/10\r\n\r\n789\r\n--b--\r\n',
    );
  });
  it('picks a boundary that occurs in none of the parts', () => {
    assert.equal(boundaryFor(bytes, ranges, 'x'), 'x');
    const tricky = new TextEncoder().encode('ab--gh-1--gh');
    // `gh` occurs in the second range; `gh-1` too; `gh-2` does not.
    assert.equal(boundaryFor(tricky, [{ start: 0, end: 11 }], 'gh'), 'gh-2');
    // Only the ranged bytes count: `gh` outside them is harmless.
    assert.equal(boundaryFor(tricky, [{ start: 0, end: 1 }], 'gh'), 'gh');
  });
  it('multipartFor: a Content-Type with obs-text is left out of the parts instead of throwing', () => {
    const ok = multipartFor(bytes, ranges, 'text/plain');
    assert.equal(ok.boundary, 'gatehouse-cache-2-10');
    assert.match(ok.parts.headers[0]!, /Content-Type: text\/plain/);
    const odd = multipartFor(bytes, ranges, 'text/plain; x=\u00e9');
    assert.doesNotMatch(odd.parts.headers[0]!, /Content-Type/);
    assert.equal(multipartBody(bytes, ranges, odd.parts).byteLength, odd.parts.contentLength);
  });
});
