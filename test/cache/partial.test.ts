import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { completeFromPartial } from '../../src/cache/partial.js';

describe('completeFromPartial (RFC 9111 §3.3, RFC 9110 §15.3.7)', () => {
  const base = { 'content-type': 'video/mp4', etag: '"e"', 'cache-control': 'max-age=60' };
  const cases: [string, Record<string, string>, boolean, Record<string, string> | null][] = [
    [
      'every byte: the complete response, Content-Range dropped',
      { ...base, 'content-range': 'bytes 0-9/10', 'content-length': '10' },
      false,
      { ...base, 'content-length': '10' },
    ],
    [
      'no Content-Length: set from the range',
      { ...base, 'content-range': 'bytes 0-0/1' },
      false,
      { ...base, 'content-length': '1' },
    ],
    ['a part (not from 0)', { ...base, 'content-range': 'bytes 1-9/10' }, false, null],
    ['a part (not to the end)', { ...base, 'content-range': 'bytes 0-8/10' }, false, null],
    ['unknown complete length', { ...base, 'content-range': 'bytes 0-9/*' }, false, null],
    [
      'Content-Length disagrees',
      { ...base, 'content-range': 'bytes 0-9/10', 'content-length': '9' },
      false,
      null,
    ],
    [
      'no Content-Range (multipart/byteranges)',
      { ...base, 'content-type': 'multipart/byteranges; boundary=x' },
      false,
      null,
    ],
    ['invalid Content-Range', { ...base, 'content-range': 'bytes 0-10/10' }, false, null],
    ['another unit', { ...base, 'content-range': 'items 0-9/10' }, false, null],
    ['answer to If-Range: metadata may be missing', { ...base, 'content-range': 'bytes 0-9/10' }, true, null],
  ];
  for (const [name, headers, ifRange, want] of cases) {
    it(name, () => assert.deepEqual(completeFromPartial(headers, ifRange), want));
  }
});
