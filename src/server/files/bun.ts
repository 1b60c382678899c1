// FileAccess (access.ts) on Bun's own file API where it has one: stat, readSized and stream through
// Bun.file. Bun has no native call for the rest, so node:fs (Bun's own implementation of it) does them:
// realpath, readdir, rename and unlink have no Bun.* counterpart; open() needs a file handle with
// positioned reads (Bun.file is a path, re-opened per read, so it cannot pin the opened version);
// createFile needs an exclusive create, which Bun.write cannot ask for. Bun.file(...).stat() is
// Bun's node:fs Stats (fractional mtimeMs and ctimeMs, as on Node), so hash manifests match across
// the two. Found on globalThis, so this file loads on Node too (where nothing here runs).
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { FileAccess, FileStats } from './access.js';
import { createNodeFiles, type NodeFilesOptions } from './node.js';

/** The part of a BunFile used here (a lazy reference to a path: nothing is opened until it reads). */
interface BunFile {
  stat(): Promise<FileStats>;
  slice(start: number, end?: number): BunFile;
  bytes(): Promise<Uint8Array>;
  stream(chunkBytes?: number): ReadableStream<Uint8Array>;
}
interface BunGlobal {
  file(path: string): BunFile;
}

const bun = (): BunGlobal => {
  const b = (globalThis as { Bun?: BunGlobal }).Bun;
  if (b === undefined) throw new Error('files/bun.ts: Bun is not the runtime');
  return b;
};

/** FileAccess on Bun.file, node:fs for what Bun has no call of its own (see above). */
export function createBunFiles(o: NodeFilesOptions = {}): FileAccess {
  const { file } = bun();
  const node = createNodeFiles(o);
  return {
    ...node,
    stat: (path) =>
      file(path)
        .stat()
        .then(
          (st) => st,
          () => undefined,
        ),
    readSized: async (path, size) => {
      // slice(0, size) reads at most size bytes; fewer means the file is shorter now.
      const b = await file(path).slice(0, size).bytes();
      if (b.length < size) return undefined;
      // A size of 0 is read once more (see FileAccess.readSized): procfs says 0 and has bytes.
      if (size === 0 && (await file(path).slice(0, 1).bytes()).length > 0) return undefined;
      return Buffer.from(b.buffer, b.byteOffset, b.byteLength);
    },
    // Cancelling the web stream (the Readable destroyed) closes the file; so do its end and errors.
    stream: (path, start, end) =>
      Readable.fromWeb(
        file(path)
          .slice(start, end === undefined ? undefined : end + 1)
          .stream() as unknown as WebReadableStream<Uint8Array>,
      ),
  };
}
