// Body sending for one variant: byte ranges (206, multipart/byteranges) and file streaming.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { type ByteRange, formatContentRange, multipartByterangesParts } from '../../http/range.js';
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
  req: IncomingMessage,
  res: ServerResponse,
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
    return streamFile(files, res, source, r.start, r.end);
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
    else await streamFile(files, res, source, r.start, r.end, false);
  }
  res.end(parts.trailer);
}

/**
 * Streams bytes [start, end] of a file. From a path, the file closes on finish, error or client
 * abort; an OpenFile stays open for its owner to close.
 */
export async function streamFile(
  files: FileAccess,
  res: ServerResponse,
  source: FileSource,
  start: number,
  end: number,
  endResponse = true,
): Promise<void> {
  if (end < start) {
    if (endResponse) res.end();
    return;
  }
  const stream = typeof source === 'string' ? files.stream(source, start, end) : source.stream(start, end);
  await pipeline(stream, res, { end: endResponse });
}
