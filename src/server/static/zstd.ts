// zstd (RFC 8878) from node:zlib, where this Node has it (22.15+ / 23.8+; Node 20 has none). Read once,
// without types that Node 20's @types lack: the static handler compresses with it on the fly, and
// `gatehouse precompress --zstd` writes .zst siblings with it.
import type { Transform } from 'node:stream';
import { promisify } from 'node:util';
import * as zlib from 'node:zlib';

type ZstdOptions = { params: Record<number, number> };
interface ZstdApi {
  zstdCompress(buf: Buffer, o: ZstdOptions, cb: (e: Error | null, out: Buffer) => void): void;
  createZstdCompress(o: ZstdOptions): Transform;
}

const api = zlib as unknown as Partial<ZstdApi>;
/** ZSTD_c_compressionLevel (zstd.h: 100), named by node:zlib's constants where it has them. */
const LEVEL =
  (zlib.constants as unknown as { ZSTD_c_compressionLevel?: number }).ZSTD_c_compressionLevel ?? 100;
const compress =
  api.zstdCompress === undefined
    ? undefined
    : (promisify(api.zstdCompress) as (buf: Buffer, o: ZstdOptions) => Promise<Buffer>);

/** True when node:zlib has zstd. */
export const ZSTD_AVAILABLE = compress !== undefined && api.createZstdCompress !== undefined;

/** zstd of `buf` at `level` (1-22); rejects on a Node without zstd. */
export function zstdCompress(buf: Buffer, level: number): Promise<Buffer> {
  if (compress === undefined) return Promise.reject(new Error('zstd needs Node 22.15 or later'));
  return compress(buf, { params: { [LEVEL]: level } });
}

/** A zstd compressing stream at `level`; throws on a Node without zstd. */
export function createZstdCompress(level: number): Transform {
  if (api.createZstdCompress === undefined) throw new Error('zstd needs Node 22.15 or later');
  return api.createZstdCompress({ params: { [LEVEL]: level } });
}
