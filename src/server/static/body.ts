// Body sending for one variant: byte ranges (206, multipart/byteranges) and file streaming.
import { createReadStream } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { type ByteRange, formatContentRange, multipartByterangesParts } from '../../http/range.js';
import { writeHeadMerged } from '../vary.js';
import type { FileResource, Variant } from './files.js';

export async function sendRanges(
  req: IncomingMessage,
  res: ServerResponse,
  file: FileResource,
  v: Variant,
  base: Record<string, string>,
  ranges: ByteRange[],
): Promise<void> {
  const h: Record<string, string> = { ...base };
  delete h['Content-Length'];
  if (ranges.length === 1) {
    const r = ranges[0]!;
    h['Content-Range'] = formatContentRange(r, v.size);
    h['Content-Length'] = String(r.end - r.start + 1);
    writeHeadMerged(res, 206, h);
    if (req.method === 'HEAD') return void res.end();
    if (v.body !== undefined) return void res.end(v.body.subarray(r.start, r.end + 1));
    return streamFile(res, v.filePath, r.start, r.end);
  }
  // RFC 9110 §14.6: multipart/byteranges, each part with its own Content-Range.
  const boundary = `gatehouse-${v.etag.replace(/[^A-Za-z0-9]/g, '').slice(0, 24)}-${ranges.length}`;
  const parts = multipartByterangesParts(ranges, v.size, file.contentType, boundary);
  h['Content-Type'] = `multipart/byteranges; boundary=${boundary}`;
  h['Content-Length'] = String(parts.contentLength);
  delete h['Content-Encoding'];
  if (v.coding !== 'identity') h['Content-Encoding'] = v.coding;
  writeHeadMerged(res, 206, h);
  for (let i = 0; i < ranges.length; i++) {
    const r = ranges[i]!;
    if (res.destroyed) return;
    res.write(parts.headers[i]!);
    if (v.body !== undefined) res.write(v.body.subarray(r.start, r.end + 1));
    else await streamFile(res, v.filePath, r.start, r.end, false);
  }
  res.end(parts.trailer);
}

/** Streams bytes [start, end] of a file; the descriptor closes on finish, error or client abort. */
export async function streamFile(
  res: ServerResponse,
  path: string,
  start: number,
  end: number,
  endResponse = true,
): Promise<void> {
  if (end < start) {
    if (endResponse) res.end();
    return;
  }
  await pipeline(createReadStream(path, { start, end }), res, { end: endResponse });
}
