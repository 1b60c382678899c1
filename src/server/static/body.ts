// Body sending for one variant: byte ranges (206, multipart/byteranges) and file streaming, through
// the response sink (core/body.ts writeBody streams a file's bytes with backpressure).
import { type ByteRange, formatContentRange, multipartByterangesParts } from '../../http/range.js';
import { writeBody } from '../core/body.js';
import type { ExchangeRequest, ResponseSink } from '../core/exchange.js';
import { writeHeadMerged } from '../core/vary.js';
import type { FileAccess, OpenFile } from '../files/access.js';
import { type FileResource, statFingerprint, type Variant } from './files.js';

/** Where streamed bytes come from: the variant's path, or a file the caller opened and closes. */
export type FileSource = string | OpenFile;

/**
 * Opens `path` and returns it only when it is still the file version `fingerprint` names (the stat
 * of the open file, so what is streamed from it is that version); else undefined.
 */
export async function openUnchanged(
  files: FileAccess,
  path: string,
  fingerprint: string,
): Promise<OpenFile | undefined> {
  let fh: OpenFile;
  try {
    fh = await files.open(path);
  } catch {
    return undefined;
  }
  try {
    if (statFingerprint(await fh.stat()) === fingerprint) return fh;
  } catch {
    // fall through: not verified
  }
  await fh.close().catch(() => {});
  return undefined;
}

export async function sendRanges(
  files: FileAccess,
  req: ExchangeRequest,
  res: ResponseSink,
  file: FileResource,
  v: Variant,
  base: Record<string, string>,
  ranges: ByteRange[],
  source: FileSource = v.filePath,
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
    await streamFile(files, res, source, r.start, r.end);
    return;
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
    else if (!(await streamFile(files, res, source, r.start, r.end, false))) return;
  }
  res.end(parts.trailer);
}

/**
 * Streams bytes [start, end] of a file: true once they were written, false when the client went away
 * first. From a path, the file closes on finish, error or client abort; an OpenFile stays open for
 * its owner to close. A read error destroys the response and rejects.
 */
export function streamFile(
  files: FileAccess,
  res: ResponseSink,
  source: FileSource,
  start: number,
  end: number,
  endResponse = true,
): Promise<boolean> {
  if (end < start) {
    if (endResponse) res.end();
    return Promise.resolve(true);
  }
  const stream = typeof source === 'string' ? files.stream(source, start, end) : source.stream(start, end);
  return writeBody(res, stream, endResponse);
}
