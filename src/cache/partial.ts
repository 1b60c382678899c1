// Partial content (RFC 9111 §3.3, §3.4): which 206 responses amount to the complete response.
import { parseContentRange } from '../http/range.js';
import { getHeader, type HeaderMap } from './types.js';

/**
 * A 206 that carries every byte of the representation (`Content-Range: bytes 0-(L-1)/L`, the answer to
 * a browser's `Range: bytes=0-`) as the complete 200 response it amounts to (§3.3: a cache may use an
 * incomplete response once it "has been made complete"): Content-Range dropped, Content-Length L. Only
 * when the request had no If-Range, since a 206 to one may leave out representation metadata the
 * client already has (RFC 9110 §15.3.7). Null for any other 206 (a part, multipart/byteranges, a
 * Content-Length that disagrees).
 */
export function completeFromPartial(
  responseHeaders: HeaderMap,
  requestHadIfRange: boolean,
): HeaderMap | null {
  if (requestHadIfRange) return null;
  const value = getHeader(responseHeaders, 'content-range');
  if (value === undefined) return null;
  const r = parseContentRange(value);
  if (r === null || r.kind !== 'range' || r.completeLength === undefined) return null;
  if (r.start !== 0 || r.end !== r.completeLength - 1) return null;
  const length = getHeader(responseHeaders, 'content-length');
  if (length !== undefined && length !== String(r.completeLength)) return null;
  const out: Record<string, string> = {};
  for (const [name, v] of Object.entries(responseHeaders)) if (name !== 'content-range') out[name] = v;
  out['content-length'] = String(r.completeLength);
  return out;
}
