// An origin route that answers Range requests as a server should (RFC 9110 §14): one range gets a 206
// with Content-Range, If-Range that does not match gets the whole 200. The representation (body and
// ETag) may change between requests; every request's Range and If-Range are recorded.
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface RangeRoute {
  /** The route handler for origin() (test/helpers/origin.ts). */
  readonly handler: (req: IncomingMessage, res: ServerResponse, n: number) => void;
  /** Range and If-Range of every request, in order (undefined: absent). */
  readonly seen: { range: string | undefined; ifRange: string | undefined }[];
}

export interface Representation {
  readonly body: Buffer;
  readonly etag: string;
  readonly cacheControl?: string;
}

/**
 * `current(n)` is the representation for the n-th request (1-based). Only `bytes=a-b`, `bytes=a-` and
 * `bytes=-n` are understood; anything else gets the 200.
 */
export function rangeRoute(current: (n: number) => Representation): RangeRoute {
  const seen: RangeRoute['seen'] = [];
  const handler = (req: IncomingMessage, res: ServerResponse, n: number) => {
    const rep = current(n);
    const range = req.headers.range;
    const ifRange = req.headers['if-range'] as string | undefined;
    seen.push({ range, ifRange });
    const size = rep.body.byteLength;
    const head = {
      'content-type': 'application/octet-stream',
      'cache-control': rep.cacheControl ?? 'max-age=3600',
      etag: rep.etag,
    };
    const m = range === undefined ? null : /^bytes=(\d*)-(\d*)$/.exec(range);
    if (m === null || (ifRange !== undefined && ifRange !== rep.etag) || (m[1] === '' && m[2] === '')) {
      res.writeHead(200, head);
      res.end(rep.body);
      return;
    }
    let start: number;
    let end: number;
    if (m[1] === '') {
      start = Math.max(0, size - Number(m[2]));
      end = size - 1;
    } else {
      start = Number(m[1]);
      end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
    }
    res.writeHead(206, { ...head, 'content-range': `bytes ${start}-${end}/${size}` });
    res.end(rep.body.subarray(start, end + 1));
  };
  return { handler, seen };
}

/** `len` bytes of printable text, distinct at each position mod 62: '0123...xyzABC...'. */
export function pattern(len: number, salt = 0): Buffer {
  const chars = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
  const out = Buffer.alloc(len);
  for (let i = 0; i < len; i++) out[i] = chars.charCodeAt((i + salt) % chars.length);
  return out;
}
