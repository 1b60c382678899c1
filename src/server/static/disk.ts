// The file system calls of the file view's cold path (a path seen for the first time), as plain
// promises over the callback API: fs/promises costs more per call (its FileHandle, and a stack trace
// captured for each ENOENT), and a first request does about six of them. Measured on Node 20 (rough,
// CPU per call incl. the thread pool): stat of a missing file 36 us -> 19 us; realpath 25 -> 20;
// reading a 200-byte file 122 us (readFile: open, fstat, read, read, close) -> 31 us (open, read, close).
import { close, open, read, realpath, type Stats, stat } from 'node:fs';

/** The file's stats, or undefined when there is none (or it cannot be read). */
export function statOrUndefined(path: string): Promise<Stats | undefined> {
  return new Promise((resolve) => stat(path, (err, st) => resolve(err === null ? st : undefined)));
}

/** realpath(3): every symlink resolved. */
export function realPath(path: string): Promise<string> {
  return new Promise((resolve, reject) =>
    realpath.native(path, (err, p) => (err === null ? resolve(p) : reject(err))),
  );
}

/**
 * The first `size` bytes of a file whose stat said `size`: the bytes that version's headers describe.
 * Undefined when it has fewer now (it changed since: the caller streams it instead). Its own
 * ArrayBuffer (not a slice of Node's pool), so a cached body holds only itself.
 */
export function readSized(path: string, size: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    open(path, 'r', (err, fd) => {
      if (err !== null) return reject(err);
      const buf = Buffer.allocUnsafeSlow(size);
      const done = (e: Error | null, out: Buffer | undefined) =>
        close(fd, (ce) => (e !== null || ce !== null ? reject(e ?? ce) : resolve(out)));
      const next = (at: number) => {
        if (at === size) {
          if (size > 0) return done(null, buf);
          // A size of 0 is read once more: files whose stat says 0 but that have bytes (procfs) or
          // fail to read (EIO) are not served as empty, the same as readFile did.
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
