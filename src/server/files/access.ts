// File access behind one interface: everything the static handler and the hash manifests do with
// files, so that a runtime brings its own (node:fs in node.ts; Bun.file or Deno's files elsewhere; a
// site held in memory in test/server/static/files.test.ts). The caller passes it in, and nothing above this
// folder imports node:fs for serving. Paths are absolute, as the static handler builds them (its root
// joined with the URL path), with the platform's separator.
import type { Readable } from 'node:stream';

/**
 * What the static handler reads from a file's metadata. A version is inode, size and mtime (the
 * handler's fingerprint); ctime is what a hash manifest adds (a rewrite in place moves it even when
 * a build pins mtimes). node:fs's Stats is one.
 */
export interface FileStats {
  readonly ino: number;
  readonly size: number;
  readonly mtimeMs: number;
  readonly ctimeMs: number;
  isFile(): boolean;
  isDirectory(): boolean;
}

/** One name in a folder, with its own kind (a symlink is not followed). node:fs's Dirent is one. */
export interface DirEntry {
  readonly name: string;
  isFile(): boolean;
  isDirectory(): boolean;
  isSymbolicLink(): boolean;
}

/**
 * A file opened for reading: everything read through it is the version its stat() describes, even
 * when the name is replaced meanwhile (a deploy). Used where bytes must match a known version.
 */
export interface OpenFile {
  stat(): Promise<FileStats>;
  /** Reads into `buffer` from byte `position` of the file; the number of bytes read (0 at its end). */
  read(buffer: Uint8Array, position: number): Promise<number>;
  /**
   * Bytes [start, end] (end inclusive; to the end of the file when undefined), in chunks of about
   * `chunkBytes`. The file stays open: its owner closes it.
   */
  stream(start: number, end?: number, chunkBytes?: number): Readable;
  close(): Promise<void>;
}

export interface FileAccess {
  /** The stats of what is at `path`, symlinks followed; undefined when nothing is (or it cannot be read). */
  stat(path: string): Promise<FileStats | undefined>;
  /** The path with every symlink resolved (the handler's check that a file stays inside its root). */
  realPath(path: string): Promise<string>;
  /**
   * The whole file, as a stat just said it is: its first `sizeBytes` bytes, in a Buffer of its own (a
   * cached body holds only itself). Undefined when it has fewer bytes now (it changed: the caller
   * streams it instead). Rejects when it cannot be read: a file whose stat says 0 bytes is read
   * once more, so that one which has bytes after all (procfs) or fails (EIO) is not served as empty.
   */
  readSized(path: string, sizeBytes: number): Promise<Buffer | undefined>;
  /**
   * Bytes [start, end] of the file at `path` (end inclusive; to the end of the file when undefined).
   * The file is closed when the stream ends, fails or is destroyed; an open error comes as the
   * stream's 'error'.
   */
  stream(path: string, start: number, end?: number): Readable;
  /** Opens a file for reading (rejects when it cannot). Never waits for a writer: a FIFO does not hang. */
  open(path: string): Promise<OpenFile>;
  /** The names in a folder with their kinds (directory listings, the hash manifest's merge). */
  readDir(path: string): Promise<DirEntry[]>;
  /** Writes a new file; rejects when something is at `path` already (the manifest's temp file). */
  createFile(path: string, data: string | Uint8Array): Promise<void>;
  /** Replaces `to` with `from` in one step (the manifest is swapped in whole). */
  rename(from: string, to: string): Promise<void>;
  remove(path: string): Promise<void>;
  /**
   * Optional: tells `onChange` what changed under the folder `root` (the absolute path of a file or
   * folder created, written, removed or renamed there; undefined when it cannot say which), until the
   * returned function is called. The static handler then checks what it holds for that path at the
   * next request instead of trusting it until static.revalidateMs has passed: a change shows at once.
   * Without it, the handler finds changes by stat alone. A notice is only a hint (the stat decides),
   * so one too many is harmless and a lost one costs at most revalidateMs.
   */
  watch?(root: string, onChange: (path: string | undefined) => void): () => void;
}

/** Everything a stream yields, as one Buffer (a JSONP body of a streamed file, an HTML page's head). */
export async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream as AsyncIterable<Uint8Array>) {
    chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(c.buffer, c.byteOffset, c.byteLength));
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}
