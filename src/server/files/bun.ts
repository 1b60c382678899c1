// FileAccess (access.ts) on Bun's own file API where it has one and is no slower: stat and readSized
// through Bun.file (measured on Bun 1.4.5, CPU per call: reading a 1 KB file 60 us -> 30 us; stat the
// same). node:fs (Bun's own implementation of it) does the rest: realpath, readdir, rename and unlink
// have no Bun.* counterpart; open() needs a file handle with positioned reads (Bun.file is a path,
// re-opened per read, so it cannot pin the opened version); createFile needs an exclusive create,
// which Bun.write cannot ask for; and stream stays createReadStream, since Bun.file(...).stream() is a
// web stream that, made a node:stream Readable, cost twice the CPU per byte served (a 3 MB file). Bun.file(...).stat() is
// Bun's node:fs Stats (fractional mtimeMs and ctimeMs, as on Node), so hash manifests match across
// the two. Found on globalThis, so this file loads on Node too (where nothing here runs).
import type { FileAccess, FileStats } from './access.js';
import { createNodeFiles, type NodeFilesOptions } from './node.js';

/** The part of a BunFile used here (a lazy reference to a path: nothing is opened until it reads). */
interface BunFile {
  stat(): Promise<FileStats>;
  slice(start: number, end?: number): BunFile;
  bytes(): Promise<Uint8Array>;
}
interface BunGlobal {
  file(path: string): BunFile;
}

const bun = (): BunGlobal => {
  const b = (globalThis as { Bun?: BunGlobal }).Bun;
  if (b === undefined) throw new Error('files/bun.ts: Bun is not the runtime');
  return b;
};

/** FileAccess on Bun.file, node:fs where Bun has no call of its own or a slower one (see above). */
export function createBunFiles(o: NodeFilesOptions = {}): FileAccess {
  const { file } = bun();
  const node = createNodeFiles(o);
  return {
    ...node,
    stat: (path) =>
      file(path)
        .stat()
        .catch(() => undefined),
    readSized: async (path, size) => {
      // slice(0, size) reads at most size bytes; fewer means the file is shorter now.
      const b = await file(path).slice(0, size).bytes();
      if (b.length < size) return undefined;
      // A size of 0 is read once more (see FileAccess.readSized): procfs says 0 and has bytes.
      if (size === 0 && (await file(path).slice(0, 1).bytes()).length > 0) return undefined;
      return Buffer.from(b.buffer, b.byteOffset, b.byteLength);
    },
  };
}
