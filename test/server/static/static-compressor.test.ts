// The compressor of the static file view (src/server/static/compressor.ts): real worker threads, real
// zlib. Its bounds (queued jobs, queued bytes, one compression per thread), the order of its two levels,
// what it drops, a thread that dies, and its lifecycle: close(), a process that ends with a compression
// running, a server embedded with createHandler.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { parseConfig, toServerOptions } from '../../../src/config/load.js';
import { createHandler } from '../../../src/server/app/handler.js';
import {
  type CompressJob,
  Compressor,
  MAX_CRASHES,
  MAX_QUEUED_BYTES,
  MAX_QUEUED_JOBS,
  type Tier,
} from '../../../src/server/static/compressor.js';
import { makeSite, removeSite } from '../../helpers/http.js';
import { REPO_ROOT } from '../../helpers/page-server.js';
import { WAIT_DEADLINE_MS, waitUntil } from '../../helpers/wait.js';

const TEXT = Buffer.from('export const answer = 42; // gatehouse\n'.repeat(8000));

interface Outcome {
  readonly name: string;
  readonly out: Buffer | undefined;
  readonly outcome: 'ok' | 'dropped' | 'failed';
}

/** A job over `src` that records how it ended in `log`. */
function job(
  log: Outcome[],
  name: string,
  o: { tier?: Tier; coding?: 'br' | 'gzip'; src?: Buffer; wanted?: () => boolean } = {},
): CompressJob {
  return {
    coding: o.coding ?? 'gzip',
    tier: o.tier ?? 'fast',
    src: o.src ?? TEXT,
    textual: true,
    wanted: o.wanted ?? (() => true),
    done: (out, outcome) => log.push({ name, out, outcome }),
  };
}

describe('static compressor', () => {
  const open: Compressor[] = [];
  const compressor = (concurrency = 1, onWarning?: (m: string) => void) => {
    const c = new Compressor({ concurrency, onWarning });
    open.push(c);
    return c;
  };
  after(() => {
    for (const c of open) c.close();
  });

  it('compresses on a thread: the output decodes to the input, the highest level is no larger', async () => {
    const c = compressor();
    const log: Outcome[] = [];
    assert.ok(c.submit(job(log, 'fast br', { coding: 'br' })));
    assert.ok(c.submit(job(log, 'best br', { coding: 'br', tier: 'best' })));
    assert.ok(c.submit(job(log, 'fast gzip')));
    await waitUntil('three jobs done', () => log.length === 3);
    const by = Object.fromEntries(log.map((l) => [l.name, l]));
    assert.deepEqual(brotliDecompressSync(by['fast br']!.out!), TEXT);
    assert.deepEqual(brotliDecompressSync(by['best br']!.out!), TEXT);
    assert.deepEqual(gunzipSync(by['fast gzip']!.out!), TEXT);
    assert.ok(by['best br']!.out!.length <= by['fast br']!.out!.length);
    // Exactly its bytes: the buffer handed back holds no more than the output (memory accounting).
    for (const l of log) assert.equal(l.out!.buffer.byteLength, l.out!.length, l.name);
    const st = c.stats();
    assert.deepEqual(st.done, { fast: 2, best: 1 });
    assert.equal(st.threads, 1);
    assert.equal(st.peakRunning, 1);
  });

  it('missing variants (fast) go before the highest level (best), whatever the order they came in', async () => {
    const c = compressor();
    const log: Outcome[] = [];
    // The first runs at once; of those that wait, the fast ones run first.
    c.submit(job(log, 'best 1', { tier: 'best' }));
    c.submit(job(log, 'best 2', { tier: 'best' }));
    c.submit(job(log, 'fast 1'));
    c.submit(job(log, 'fast 2'));
    await waitUntil('four jobs done', () => log.length === 4);
    assert.deepEqual(
      log.map((l) => l.name),
      ['best 1', 'fast 1', 'fast 2', 'best 2'],
    );
  });

  it(`a queue holds ${MAX_QUEUED_JOBS} jobs per level: past that a job is refused (the answer goes out identity)`, async () => {
    const c = compressor();
    const log: Outcome[] = [];
    const src = Buffer.from('x'.repeat(2048));
    // One running, MAX_QUEUED_JOBS waiting, then refused; the other level has its own queue.
    for (let i = 0; i <= MAX_QUEUED_JOBS; i++)
      assert.ok(c.submit(job(log, `fast ${i}`, { src })), `fast ${i}`);
    assert.equal(c.submit(job(log, 'one too many', { src })), false);
    assert.ok(c.submit(job(log, 'best', { src, tier: 'best' })));
    const st = c.stats();
    assert.deepEqual(st.queued, { fast: MAX_QUEUED_JOBS, best: 1 });
    assert.equal(st.running.fast, 1);
    assert.equal(st.dropped, 1);
    await waitUntil('every accepted job done', () => log.length === MAX_QUEUED_JOBS + 2);
    assert.ok(!log.some((l) => l.name === 'one too many'), 'a refused job is not called back');
  });

  it(`what waits holds at most ${MAX_QUEUED_BYTES / 1024 / 1024} MiB of file bytes`, async () => {
    const c = compressor();
    const log: Outcome[] = [];
    const MiB = Buffer.alloc(1024 * 1024, 'a');
    let accepted = 0;
    // The first runs at once (not waiting); then whole MiBs until the bound.
    while (c.submit(job(log, `j${accepted}`, { src: MiB, tier: accepted % 2 ? 'best' : 'fast' }))) accepted++;
    assert.equal(accepted, 1 + MAX_QUEUED_BYTES / MiB.length);
    assert.equal(c.stats().dropped, 1);
    c.close();
    assert.equal(
      log.filter((l) => l.outcome === 'dropped').length,
      accepted,
      'close drops what waits and runs',
    );
  });

  it('a job no longer wanted when its turn comes is dropped, not compressed', async () => {
    const c = compressor();
    const log: Outcome[] = [];
    let wanted = true;
    c.submit(job(log, 'first'));
    c.submit(job(log, 'evicted', { wanted: () => wanted }));
    c.submit(job(log, 'kept'));
    wanted = false;
    await waitUntil('three jobs called back', () => log.length === 3);
    assert.deepEqual(
      log.map((l) => [l.name, l.outcome]),
      [
        ['first', 'ok'],
        ['evicted', 'dropped'],
        ['kept', 'ok'],
      ],
    );
    assert.deepEqual(c.stats().done, { fast: 2, best: 0 });
  });

  it('static.compressConcurrency 2: two at a time, on two threads, never more', async () => {
    const c = compressor(2);
    const log: Outcome[] = [];
    for (let i = 0; i < 6; i++) c.submit(job(log, `j${i}`, { coding: 'br', tier: 'best' }));
    assert.deepEqual(c.stats().running, { fast: 0, best: 2 });
    await waitUntil('six jobs done', () => log.length === 6);
    assert.equal(c.stats().peakRunning, 2);
    assert.equal(c.stats().threads, 2);
  });

  it('a thread that dies fails its job and is replaced; after three, compression is off', async () => {
    const warnings: string[] = [];
    const c = compressor(1, (m) => warnings.push(m));
    const log: Outcome[] = [];
    /** Ends the running thread as a crash would (a real thread, really ended). */
    const kill = () => {
      const slots = (c as unknown as { slots: Set<{ worker: { terminate(): Promise<number> } }> }).slots;
      for (const s of slots) void s.worker.terminate();
    };
    for (let crash = 1; crash <= MAX_CRASHES; crash++) {
      c.submit(job(log, `crash ${crash}`, { coding: 'br', tier: 'best' }));
      c.submit(job(log, `after ${crash}`));
      kill();
      await waitUntil(`crash ${crash} seen`, () => c.stats().crashes === crash);
      assert.deepEqual(log.find((l) => l.name === `crash ${crash}`)?.outcome, 'failed');
      if (crash < MAX_CRASHES) {
        // A new thread takes the next job.
        await waitUntil(`the job after crash ${crash} done`, () =>
          log.some((l) => l.name === `after ${crash}`),
        );
        assert.equal(log.find((l) => l.name === `after ${crash}`)?.outcome, 'ok');
      }
    }
    assert.equal(c.available, false);
    assert.equal(log.find((l) => l.name === `after ${MAX_CRASHES}`)?.outcome, 'dropped');
    assert.equal(c.submit(job(log, 'too late')), false);
    assert.equal(c.stats().threads, 0);
    assert.equal(warnings.length, MAX_CRASHES);
    assert.match(warnings.at(-1)!, /files go out uncompressed/);
  });

  it('close(): what runs and what waits is dropped, the threads end, nothing is taken after', async () => {
    const c = compressor();
    const log: Outcome[] = [];
    c.submit(job(log, 'running', { coding: 'br', tier: 'best' }));
    c.submit(job(log, 'waiting'));
    assert.equal(c.stats().threads, 1);
    c.close();
    assert.deepEqual(
      log.map((l) => [l.name, l.outcome]),
      [
        ['waiting', 'dropped'],
        ['running', 'dropped'],
      ],
    );
    assert.equal(c.stats().threads, 0);
    assert.equal(c.submit(job(log, 'after close')), false);
  });
});

describe('static compressor in a server', () => {
  it('createHandler (an app owns the server): a variant is made, and close() ends the thread', async () => {
    const css = `body { color: #333; }\n${'.x { margin: 0 }\n'.repeat(400)}`;
    const dir = makeSite({ 'app.css': css });
    const handler = createHandler(toServerOptions(parseConfig({ root: dir, log: { format: 'off' } })));
    try {
      const files = handler.static.files;
      // Kept from its second resolve on; then the variant is made in the background.
      await files.get('/app.css');
      const file = await files.get('/app.css');
      assert.equal(file.kind, 'file');
      if (file.kind !== 'file') return;
      assert.equal(files.variant(file, 'br', '/app.css'), undefined, 'not made yet: the answer is identity');
      const v = await waitUntil('the br variant is made', () => files.variant(file, 'br', '/app.css'));
      assert.equal(brotliDecompressSync(v.body!).toString(), css);
      assert.equal(files.compressionStats().threads, 1);
    } finally {
      await handler.close();
      removeSite(dir);
    }
    assert.equal(handler.static.files.compressionStats().threads, 0);
  });

  it('a process that ends while a compression runs exits: the thread does not keep it alive', async () => {
    const dir = makeSite({
      'big.js': `export const x = 1;\n${'console.log("gatehouse", 42);\n'.repeat(30000)}`,
    });
    // The file view of a server that is never closed, a compression at the highest level started.
    const script = `
      import { createStaticHandler } from ${JSON.stringify(join(REPO_ROOT, 'src/server/static/handler.ts'))};
      import { parseConfig, toServerOptions } from ${JSON.stringify(join(REPO_ROOT, 'src/config/load.ts'))};
      const o = toServerOptions(parseConfig({ root: ${JSON.stringify(dir)} }));
      const h = createStaticHandler({ root: o.root, static: o.static, cachePolicy: o.cachePolicy });
      await h.files.get('/big.js');
      const file = await h.files.get('/big.js');
      h.files.variant(file, 'br', '/big.js');
      console.log(JSON.stringify(h.files.compressionStats()));
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    try {
      const code = await new Promise<number | null>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`still running after ${WAIT_DEADLINE_MS} ms`)),
          WAIT_DEADLINE_MS,
        );
        child.on('exit', (c) => {
          clearTimeout(timer);
          resolve(c);
        });
      });
      assert.equal(code, 0);
      const st = JSON.parse(out.trim());
      assert.equal(st.threads, 1, `a compression was running: ${out}`);
      assert.equal(st.running.fast, 1, out);
    } finally {
      child.kill('SIGKILL');
      removeSite(dir);
    }
  });
});
