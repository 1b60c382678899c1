// A FileAccess (src/server/files/access.ts) over a site held in memory, under a root that does not
// exist on disk: whatever the static handler reads behind its back through node:fs finds nothing. It
// counts its calls, and its watch() is driven by the test (notify).
import { dirname, join, relative, sep } from 'node:path';
import { Readable } from 'node:stream';
import type { DirEntry, FileAccess, FileStats, OpenFile } from '../../src/server/files/access.js';

interface Node {
  readonly kind: 'file' | 'dir';
  bytes: Buffer;
  ino: number;
  mtimeMs: number;
  ctimeMs: number;
}

function enoent(path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`ENOENT: no such file or directory, '${path}'`), { code: 'ENOENT', path });
}

function statsOf(n: Node): FileStats {
  return {
    ino: n.ino,
    size: n.kind === 'file' ? n.bytes.length : 4096,
    mtimeMs: n.mtimeMs,
    ctimeMs: n.ctimeMs,
    isFile: () => n.kind === 'file',
    isDirectory: () => n.kind === 'dir',
  };
}

export class MemoryFiles implements FileAccess {
  /** Calls by method name. */
  readonly calls = new Map<string, number>();
  private readonly nodes = new Map<string, Node>();
  private readonly listeners = new Set<(path: string | undefined) => void>();
  private nextIno = 100;
  /** The clock of every write: an hour ago, then a second per write (a Last-Modified within a second of
   *  now would be weak, RFC 9110 §8.8.2.2). */
  private clockMs = Date.now() - 3600_000;

  constructor(
    readonly root: string,
    files: Record<string, string | Buffer> = {},
  ) {
    this.mkdir(root);
    for (const [p, content] of Object.entries(files)) this.write(p, content);
  }

  /** Writes a file under the root (its folders made), as a new version: a new inode, a later mtime. */
  write(path: string, content: string | Buffer): void {
    const abs = join(this.root, path);
    this.mkdir(dirname(abs));
    this.clockMs += 1000;
    const isNew = !this.nodes.has(abs);
    this.nodes.set(abs, {
      kind: 'file',
      bytes: Buffer.from(content),
      ino: this.nextIno++,
      mtimeMs: this.clockMs,
      ctimeMs: this.clockMs,
    });
    if (isNew) this.touch(dirname(abs));
  }

  /** Tells the watchers that `path` (under the root) changed, as a runtime's file watcher would. */
  notify(path: string): void {
    for (const l of this.listeners) l(join(this.root, path));
  }

  watching(): number {
    return this.listeners.size;
  }

  private count(name: string): void {
    this.calls.set(name, (this.calls.get(name) ?? 0) + 1);
  }

  private mkdir(abs: string): void {
    if (this.nodes.get(abs)?.kind === 'dir') return;
    if (abs !== this.root && abs !== dirname(abs)) this.mkdir(dirname(abs));
    this.nodes.set(abs, { kind: 'dir', bytes: Buffer.alloc(0), ino: this.nextIno++, mtimeMs: 0, ctimeMs: 0 });
    this.touch(abs);
  }

  /** A folder's mtime moves when an entry is added, removed or renamed. */
  private touch(abs: string): void {
    const n = this.nodes.get(abs);
    if (n === undefined) return;
    this.clockMs += 1000;
    n.mtimeMs = n.ctimeMs = this.clockMs;
  }

  private file(path: string): Node {
    const n = this.nodes.get(path);
    if (n?.kind !== 'file') throw enoent(path);
    return n;
  }

  async stat(path: string): Promise<FileStats | undefined> {
    this.count('stat');
    const n = this.nodes.get(path);
    return n === undefined ? undefined : statsOf(n);
  }

  async realPath(path: string): Promise<string> {
    this.count('realPath');
    if (!this.nodes.has(path)) throw enoent(path);
    return path;
  }

  async readSized(path: string, sizeBytes: number): Promise<Buffer | undefined> {
    this.count('readSized');
    const n = this.file(path);
    if (n.bytes.length < sizeBytes) return undefined;
    return Buffer.from(n.bytes.subarray(0, sizeBytes));
  }

  stream(path: string, start: number, end?: number): Readable {
    this.count('stream');
    const n = this.nodes.get(path);
    if (n?.kind !== 'file') {
      const r = new Readable({ read() {} });
      process.nextTick(() => r.destroy(enoent(path)));
      return r;
    }
    return Readable.from([n.bytes.subarray(start, end === undefined ? undefined : end + 1)]);
  }

  async open(path: string): Promise<OpenFile> {
    this.count('open');
    // What is read through it stays this version, whatever is written to the name later.
    const n = { ...this.file(path) };
    return {
      stat: async () => statsOf(n),
      read: async (buffer, position) => {
        const part = n.bytes.subarray(position, position + buffer.length);
        buffer.set(part);
        return part.length;
      },
      stream: (start, end) =>
        Readable.from([n.bytes.subarray(start, end === undefined ? undefined : end + 1)]),
      close: async () => {},
    };
  }

  async readDir(path: string): Promise<DirEntry[]> {
    this.count('readDir');
    if (this.nodes.get(path)?.kind !== 'dir') throw enoent(path);
    const out: DirEntry[] = [];
    for (const [p, n] of this.nodes) {
      const rel = relative(path, p);
      if (rel === '' || rel.startsWith('..') || rel.includes(sep)) continue;
      out.push({
        name: rel,
        isFile: () => n.kind === 'file',
        isDirectory: () => n.kind === 'dir',
        isSymbolicLink: () => false,
      });
    }
    return out;
  }

  async createFile(path: string, data: string | Uint8Array): Promise<void> {
    this.count('createFile');
    if (this.nodes.has(path)) throw Object.assign(new Error(`EEXIST: '${path}'`), { code: 'EEXIST' });
    this.write(relative(this.root, path), Buffer.from(data));
  }

  async rename(from: string, to: string): Promise<void> {
    this.count('rename');
    const n = this.file(from);
    this.nodes.delete(from);
    this.nodes.set(to, n);
    this.touch(dirname(to));
  }

  async remove(path: string): Promise<void> {
    this.count('remove');
    this.file(path);
    this.nodes.delete(path);
    this.touch(dirname(path));
  }

  watch(root: string, onChange: (path: string | undefined) => void): () => void {
    this.count('watch');
    if (root !== this.root) throw new Error(`watch of ${root}, not the root ${this.root}`);
    this.listeners.add(onChange);
    return () => this.listeners.delete(onChange);
  }
}
