// FileAccess (access.ts) on node:fs: the default of the static handler and what the CLI's hash
// manifests use. The calls of a first request for a path (stat, realpath, reading a small file) are
// plain promises over the callback API: fs/promises costs more per call (its FileHandle, and a stack
// trace captured for each ENOENT), and a first request does about six of them. Measured on Node 20
// (rough, CPU per call incl. the thread pool): stat of a missing file 36 us -> 19 us; realpath 25 -> 20;
// reading a 200-byte file 122 us (readFile: open, fstat, read, read, close) -> 31 us (open, read, close).
import {
  close,
  constants,
  createReadStream,
  type FSWatcher,
  open,
  read,
  realpath,
  stat,
  watch,
} from 'node:fs';
import { type FileHandle, open as openHandle, readdir, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { DirEntry, FileAccess, FileStats, OpenFile } from './access.js';

function statOrUndefined(path: string): Promise<FileStats | undefined> {
  return new Promise((resolve) => stat(path, (err, st) => resolve(err === null ? st : undefined)));
}

function realPath(path: string): Promise<string> {
  return new Promise((resolve, reject) =>
    realpath.native(path, (err, p) => (err === null ? resolve(p) : reject(err))),
  );
}

function readSized(path: string, size: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    open(path, 'r', (err, fd) => {
      if (err !== null) return reject(err);
      const buf = Buffer.allocUnsafeSlow(size);
      const done = (e: Error | null, out: Buffer | undefined) =>
        close(fd, (ce) => (e !== null || ce !== null ? reject(e ?? ce) : resolve(out)));
      const next = (at: number) => {
        if (at === size) {
          if (size > 0) return done(null, buf);
          // A size of 0 is read once more (see FileAccess.readSized).
          return read(fd, Buffer.alloc(1), 0, 1, 0, (re, n) =>
            done(re, re === null && n === 0 ? buf : undefined),
          );
        }
        read(fd, buf, at, size - at, at, (re, n) => {
          if (re !== null) done(re, undefined);
          else if (n === 0) done(null, undefined);
          else next(at + n);
        });
      };
      next(0);
    });
  });
}

class NodeOpenFile implements OpenFile {
  constructor(private readonly fh: FileHandle) {}
  stat(): Promise<FileStats> {
    return this.fh.stat();
  }
  async read(buffer: Uint8Array, position: number): Promise<number> {
    return (await this.fh.read(buffer, 0, buffer.length, position)).bytesRead;
  }
  stream(start: number, end?: number, chunkBytes?: number): Readable {
    return this.fh.createReadStream({ start, end, autoClose: false, highWaterMark: chunkBytes });
  }
  close(): Promise<void> {
    return this.fh.close();
  }
}

/**
 * fs.watch over the whole tree. On Linux, Node's recursive mode walks the tree when it starts and
 * holds an inotify watch per folder, and a tree past the kernel's limit fails: the handler is then
 * told once that anything may have changed, and goes on finding changes by stat.
 */
function watchTree(root: string, onChange: (path: string | undefined) => void): () => void {
  let w: FSWatcher;
  try {
    w = watch(root, { recursive: true, persistent: false }, (_event, name) =>
      onChange(name === null ? undefined : join(root, name.toString())),
    );
  } catch {
    onChange(undefined);
    return () => {};
  }
  w.on('error', () => {
    w.close();
    onChange(undefined);
  });
  return () => w.close();
}

export interface NodeFilesOptions {
  /**
   * Offer FileAccess.watch through fs.watch (recursive), so a change on disk shows before
   * static.revalidateMs has passed. Off by default: a stat per kept path every revalidateMs costs
   * less than watching a large tree, and fs.watch is not available on every file system (NFS).
   */
  readonly watch?: boolean;
}

/** FileAccess on node:fs. */
export function createNodeFiles(o: NodeFilesOptions = {}): FileAccess {
  return {
    stat: statOrUndefined,
    realPath,
    readSized,
    stream: (path, start, end) => createReadStream(path, { start, end }),
    // O_NONBLOCK: a FIFO under a served name (or a manifest's) must not hold a thread of the pool.
    // It changes nothing for a regular file.
    open: async (path) => new NodeOpenFile(await openHandle(path, constants.O_RDONLY | constants.O_NONBLOCK)),
    readDir: (path): Promise<DirEntry[]> => readdir(path, { withFileTypes: true }),
    createFile: (path, data) => writeFile(path, data, { flag: 'wx' }),
    rename,
    remove: unlink,
    ...(o.watch === true ? { watch: watchTree } : {}),
  };
}

/** The default FileAccess: node:fs, changes found by stat. */
export const nodeFiles: FileAccess = createNodeFiles();
