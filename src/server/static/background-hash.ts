// Content hashes of large files computed off the request path: a FIFO of file versions, a few hashed
// at a time, each streamed in chunks (the event loop serves requests between them). A hash counts
// only when the open descriptor was the requested version before and after reading (fstat), so a file
// replaced while it was read never gets the old version's hash.
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { CONTENT_HASH_CHARS } from '../../http/file-validators.js';
import type { FileAccess, FileStats, OpenFile } from '../files/access.js';

/** Files hashed at once (the box serving may have two cores). */
const CONCURRENCY = 2;
/** Versions waiting beyond this are dropped; the next resolve of such a file asks again. */
const MAX_QUEUED = 4096;
const CHUNK_BYTES = 1024 * 1024;

export interface HashJobResult {
  readonly absPath: string;
  readonly fingerprint: string;
  readonly stats: FileStats;
  readonly hash: string;
}

export class BackgroundHasher {
  private readonly queue: { absPath: string; fingerprint: string }[] = [];
  /** absPath + fingerprint of every queued or running job (no version is hashed twice at once). */
  private readonly jobs = new Set<string>();
  private readonly running = new Set<Readable>();
  /** Versions whose read failed: not tried again (nor warned about) until the file changes. */
  private readonly failed = new Set<string>();
  private active = 0;
  private closed = false;

  constructor(
    private readonly files: FileAccess,
    private readonly fingerprintOf: (st: FileStats) => string,
    private readonly onDone: (r: HashJobResult) => void,
    private readonly onError: (absPath: string, err: unknown) => void,
  ) {}

  /** Queues a version (once); a no-op when it is queued or running already, or the queue is full. */
  request(absPath: string, fingerprint: string): void {
    const key = `${absPath}\0${fingerprint}`;
    if (this.closed || this.jobs.has(key) || this.failed.has(key) || this.queue.length >= MAX_QUEUED) return;
    this.jobs.add(key);
    this.queue.push({ absPath, fingerprint });
    this.pump();
  }

  /** Stops: queued jobs are dropped, running reads destroyed. */
  close(): void {
    this.closed = true;
    this.queue.length = 0;
    for (const s of this.running) s.destroy();
  }

  private pump(): void {
    while (!this.closed && this.active < CONCURRENCY && this.queue.length > 0) {
      const job = this.queue.shift()!;
      this.active++;
      this.hashOne(job.absPath, job.fingerprint)
        .then(
          (r) => {
            if (r !== undefined && !this.closed) this.onDone(r);
          },
          (err) => {
            if (this.closed) return;
            if (this.failed.size >= MAX_QUEUED) this.failed.clear();
            this.failed.add(`${job.absPath}\0${job.fingerprint}`);
            this.onError(job.absPath, err);
          },
        )
        .finally(() => {
          this.active--;
          this.jobs.delete(`${job.absPath}\0${job.fingerprint}`);
          this.pump();
        });
    }
  }

  private async hashOne(absPath: string, fingerprint: string): Promise<HashJobResult | undefined> {
    let fh: OpenFile;
    try {
      fh = await this.files.open(absPath);
    } catch {
      return undefined; // gone since: the next resolve sees that
    }
    try {
      const before = await fh.stat();
      if (this.fingerprintOf(before) !== fingerprint) return undefined;
      const h = createHash('sha256');
      const stream = fh.stream(0, undefined, CHUNK_BYTES);
      this.running.add(stream);
      try {
        for await (const chunk of stream) h.update(chunk as Buffer);
      } finally {
        this.running.delete(stream);
      }
      if (this.closed) return undefined;
      const after = await fh.stat();
      if (this.fingerprintOf(after) !== fingerprint || after.ctimeMs !== before.ctimeMs) return undefined;
      return { absPath, fingerprint, stats: after, hash: h.digest('base64url').slice(0, CONTENT_HASH_CHARS) };
    } finally {
      await fh.close().catch(() => {});
    }
  }
}
