// FileAccess (access.ts) on Deno's own file API: Deno.stat, Deno.open, Deno.readDir, Deno.realPath,
// Deno.rename, Deno.remove, Deno.watchFs. Found on globalThis, so this file loads on Node too (where
// nothing here runs). Deno's stat has ctime in whole seconds (mtime in milliseconds), as its node:fs
// does: a hash manifest written under Node never matches here (docs/runtimes.md). Measured on Deno
// 2.9.6 against its node:fs (CPU per call): stat 24 -> 20 us, stat of a missing file 36 -> 28 us,
// reading a 1 KB file about the same (38 us). Streaming a file by path stays node:fs's createReadStream:
// Deno.open read into a Readable cost 10-30% more CPU per byte served (a 3 MB file, 3 runs).
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import type { DirEntry, FileAccess, FileStats, OpenFile } from './access.js';

/** The parts of Deno's API used here (lib.deno.d.ts). */
interface DenoFileInfo {
  readonly isFile: boolean;
  readonly isDirectory: boolean;
  readonly isSymlink: boolean;
  readonly size: number;
  readonly mtime: Date | null;
  readonly ctime: Date | null;
  readonly ino: number | null;
}
interface DenoFsFile {
  read(p: Uint8Array): Promise<number | null>;
  seek(offset: number, whence: 0): Promise<number>;
  stat(): Promise<DenoFileInfo>;
  close(): void;
}
interface DenoGlobal {
  stat(path: string): Promise<DenoFileInfo>;
  realPath(path: string): Promise<string>;
  open(path: string, o: { read?: boolean; write?: boolean; createNew?: boolean }): Promise<DenoFsFile>;
  readDir(
    path: string,
  ): AsyncIterable<{ name: string; isFile: boolean; isDirectory: boolean; isSymlink: boolean }>;
  writeFile(path: string, data: Uint8Array, o: { createNew: boolean }): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  remove(path: string): Promise<void>;
  watchFs(
    path: string,
    o: { recursive: boolean },
  ): AsyncIterable<{ kind: string; paths: string[] }> & { close(): void };
}

const deno = (): DenoGlobal => {
  const d = (globalThis as { Deno?: DenoGlobal }).Deno;
  if (d === undefined) throw new Error('files/deno.ts: Deno is not the runtime');
  return d;
};

/** FileStats from Deno's FileInfo: times as epoch milliseconds (0 where the platform has none). */
function statsOf(i: DenoFileInfo): FileStats {
  return {
    ino: i.ino ?? 0,
    size: i.size,
    mtimeMs: i.mtime?.getTime() ?? 0,
    ctimeMs: i.ctime?.getTime() ?? 0,
    isFile: () => i.isFile,
    isDirectory: () => i.isDirectory,
  };
}

const CHUNK_BYTES = 64 * 1024;

/**
 * A Deno file read at positions. Deno's FsFile has a cursor (seek, then read) and no pread, so the
 * reads of one file take turns: a stream and a read() of the same file never move each other's cursor.
 */
class DenoOpenFile implements OpenFile {
  private turn: Promise<unknown> = Promise.resolve();
  private closed = false;
  /** Where the cursor is: a read that starts there (a stream's next chunk) needs no seek. */
  private cursor = 0;
  constructor(private readonly f: DenoFsFile) {}

  private inTurn<T>(op: () => Promise<T>): Promise<T> {
    const p = this.turn.then(op);
    this.turn = p.catch(() => {});
    return p;
  }
  async stat(): Promise<FileStats> {
    return statsOf(await this.f.stat());
  }
  read(buffer: Uint8Array, position: number): Promise<number> {
    return this.inTurn(async () => {
      // After a failure the cursor is unknown (-1): the next read seeks.
      const at0 = this.cursor;
      this.cursor = -1;
      const cursor = position === at0 ? at0 : await this.f.seek(position, 0);
      let at = 0;
      // FsFile.read may return fewer bytes than asked before the end: fill what it can.
      while (at < buffer.length) {
        const n = await this.f.read(buffer.subarray(at));
        if (n === null || n === 0) break;
        at += n;
      }
      this.cursor = cursor + at;
      return at;
    });
  }
  stream(start: number, end?: number, chunkBytes = CHUNK_BYTES): Readable {
    return rangeStream(this, start, end, chunkBytes);
  }
  close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      this.f.close();
    }
    return Promise.resolve();
  }
}

/** Bytes [start, end] of an open file, as a Readable; the file stays open (its owner closes it). */
function rangeStream(
  file: DenoOpenFile,
  start: number,
  end: number | undefined,
  chunkBytes: number,
): Readable {
  let at = start;
  return new Readable({
    highWaterMark: chunkBytes,
    read() {
      const want = end === undefined ? chunkBytes : Math.min(chunkBytes, end + 1 - at);
      if (want <= 0) return void this.push(null);
      const buf = Buffer.allocUnsafe(want);
      file.read(buf, at).then(
        (n) => {
          at += n;
          this.push(n === 0 ? null : buf.subarray(0, n));
        },
        (e: Error) => this.destroy(e),
      );
    },
  });
}

/** Reads the whole file at `path` if it has `size` bytes (see FileAccess.readSized). */
async function readSized(path: string, size: number): Promise<Buffer | undefined> {
  const f = new DenoOpenFile(await deno().open(path, { read: true }));
  try {
    const buf = Buffer.allocUnsafeSlow(size);
    if ((await f.read(buf, 0)) < size) return undefined;
    // A size of 0 is read once more: procfs says 0 and has bytes; a read error rejects.
    if (size === 0 && (await f.read(Buffer.alloc(1), 0)) > 0) return undefined;
    return buf;
  } finally {
    await f.close();
  }
}

/**
 * Opens a regular file. Deno.open has no O_NONBLOCK, and opening a FIFO waits for a writer, so what
 * is not a regular file is refused after a stat, before the open. A FIFO put in its place between
 * the two would still wait: that window is Deno's to close (node.ts opens with O_NONBLOCK).
 */
async function open(path: string): Promise<DenoOpenFile> {
  const d = deno();
  const st = await d.stat(path);
  if (!st.isFile)
    throw Object.assign(new Error(`not a regular file: ${path}`), {
      code: st.isDirectory ? 'EISDIR' : 'EINVAL',
    });
  return new DenoOpenFile(await d.open(path, { read: true }));
}

async function readDir(path: string): Promise<DirEntry[]> {
  const out: DirEntry[] = [];
  for await (const e of deno().readDir(path)) {
    out.push({
      name: e.name,
      isFile: () => e.isFile,
      isDirectory: () => e.isDirectory,
      isSymbolicLink: () => e.isSymlink,
    });
  }
  return out;
}

/**
 * Deno.watchFs over the tree (recursive: inotify per folder on Linux). When it fails to start or
 * ends with an error, the handler is told once that anything may have changed.
 */
function watchTree(root: string, onChange: (path: string | undefined) => void): () => void {
  let w: ReturnType<DenoGlobal['watchFs']>;
  try {
    w = deno().watchFs(root, { recursive: true });
  } catch {
    onChange(undefined);
    return () => {};
  }
  let stopped = false;
  void (async () => {
    try {
      for await (const ev of w) {
        if (ev.paths.length === 0) onChange(undefined);
        for (const p of ev.paths) onChange(p);
      }
    } catch {
      if (!stopped) onChange(undefined);
    }
  })();
  return () => {
    stopped = true;
    w.close();
  };
}

export interface DenoFilesOptions {
  /** Offer FileAccess.watch through Deno.watchFs (as NodeFilesOptions.watch: off by default). */
  readonly watch?: boolean;
}

/** FileAccess on Deno's own file API. */
export function createDenoFiles(o: DenoFilesOptions = {}): FileAccess {
  const d = deno();
  const text = new TextEncoder();
  return {
    stat: (path) => d.stat(path).then(statsOf, () => undefined),
    realPath: (path) => d.realPath(path),
    readSized,
    // node:fs: a Readable over Deno.open cost 10-30% more CPU per byte served (a 3 MB file).
    stream: (path, start, end) => createReadStream(path, { start, end }),
    open,
    readDir,
    createFile: (path, data) =>
      d.writeFile(path, typeof data === 'string' ? text.encode(data) : data, { createNew: true }),
    rename: (from, to) => d.rename(from, to),
    remove: (path) => d.remove(path),
    ...(o.watch === true ? { watch: watchTree } : {}),
  };
}
