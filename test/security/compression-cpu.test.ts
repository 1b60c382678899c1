// Attack: on-the-fly compression as a CPU attack. 40 concurrent first requests for 40 distinct 250 KB
// scripts with Accept-Encoding: br cost 12-26 s of server CPU (brotli quality 11 per file, run for the
// response on libuv's 4-thread pool, with no bound across files), and meanwhile every request that
// needed stat/open waited behind the compressions: new small files took seconds. Now a file is
// compressed only once it is kept (its second request), on a thread of its own (one at a time), first
// at a fast level, and no answer waits for it (src/server/static/compressor.ts).
// The attacker runs in its own process (fixtures/compression-burst.mjs); the server is this process,
// so process.cpuUsage() here is the server's CPU (its compression thread included) plus the small-file
// probes. The reference: brotli quality 11 of the 40 files, the work one round used to cost.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import type { IncomingMessage } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, brotliDecompressSync, constants as zc } from 'node:zlib';
import type { CompressionStats } from '../../src/server/static/compressor.js';
import { get, makeSite, removeSite, startServer, type TestServer } from '../helpers/http.js';
import { waitUntil } from '../helpers/wait.js';

const ATTACKER = fileURLToPath(new URL('./fixtures/compression-burst.mjs', import.meta.url));
const FILES = 40;
const FILE_BYTES = 250 * 1024;
const SAMPLES = 30;
/**
 * Probes per attack round: one after another for as long as the round lasts, at least ROUND_MIN_PROBES
 * (the round's own work, 40 files read and hashed for their identity answers, delays the probes that
 * arrive with it, as it would without any compression; over this many probes it moves the mean by a few
 * ms, a round of compressions on the request path by hundreds), at most ROUND_PROBES.
 */
const ROUND_MIN_PROBES = 150;
const ROUND_PROBES = 300;
/** Small files, each asked for once: every probe is a first request (stat, open, read on the pool). */
const SMALL_FILES = 5 + 3 * SAMPLES + 2 * ROUND_PROBES;

/** A script of about FILE_BYTES, different per file, compressible as a real bundle is. */
function script(n: number): string {
  const lines: string[] = [];
  let size = 0;
  for (let k = 0; size < FILE_BYTES; k++) {
    const line = `export function f${n}_${k}(a, b) { return a * ${(k * 7919 + n) % 1000} + b.map((x) => x + "${(k * 104729 + n).toString(36)}"); }\n`;
    lines.push(line);
    size += line.length;
  }
  return lines.join('');
}

const attackPath = (i: number) => `/js/chunk-${i}.js`;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1]!;
}

/**
 * Probe latencies: the median (the usual answer) and the mean, which one long stall moves (a probe
 * queued behind the compressions of a whole round waits for all of them, and only that one does).
 */
interface Latency {
  readonly p50: number;
  readonly mean: number;
  readonly n: number;
}

function latency(times: number[]): Latency {
  const r = (x: number) => Math.round(x * 100) / 100;
  return { p50: r(median(times)), mean: r(times.reduce((a, b) => a + b, 0) / times.length), n: times.length };
}

/** Both within 10x of quiet; `floorMs` (this event loop's own delay) as the least quiet value. */
function within10x(l: Latency, quiet: Latency, floorMs: number): boolean {
  return l.p50 < 10 * Math.max(quiet.p50, floorMs) && l.mean < 10 * Math.max(quiet.mean, floorMs);
}

/** The median delay of a 0 ms timer (ms): what this process's event loop adds to any answer. */
async function loopLag(): Promise<number> {
  const lags: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const t = performance.now();
    await new Promise((r) => setTimeout(r, 0));
    lags.push(performance.now() - t);
  }
  return median(lags);
}

/** CPU time of this process (all its threads) since `from`, in ms. */
function cpuMsSince(from: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(from);
  return (d.user + d.system) / 1000;
}

/** Fast compressions started: waiting, running or done. */
const fastJobs = (c: CompressionStats) => c.queued.fast + c.running.fast + c.done.fast;

interface Round {
  answers: number;
  statuses: Record<string, number>;
  encodings: Record<string, number>;
  bytes: number;
}

describe('attack: compression as a CPU attack', () => {
  let site: string;
  let s: TestServer;
  let attacker: ChildProcess | undefined;
  /** Requests for the attacked scripts that reached the server. */
  let reached = 0;
  let nextSmall = 0;
  const sources = Array.from({ length: FILES }, (_, i) => script(i));

  before(async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < FILES; i++) files[attackPath(i).slice(1)] = sources[i]!;
    for (let i = 0; i < SMALL_FILES; i++) files[`small/s-${i}.txt`] = `small file ${i}\n`;
    site = makeSite(files);
    s = await startServer(site);
    s.app.server.prependListener('request', (req: IncomingMessage) => {
      if (req.url!.startsWith('/js/')) reached++;
    });
  });
  after(async () => {
    attacker?.stdin?.end();
    attacker?.kill();
    await s?.close();
    if (site) removeSite(site);
  });

  /** One request for a small file nobody asked for before (ms). */
  async function probe(): Promise<number> {
    assert.ok(nextSmall < SMALL_FILES, 'enough small files for the probes');
    const t = performance.now();
    const r = await get(s.url, `/small/s-${nextSmall++}.txt`);
    assert.equal(r.status, 200);
    return performance.now() - t;
  }

  /**
   * Probes one after another while `done` is pending (at most ROUND_PROBES) and until at least
   * ROUND_MIN_PROBES were taken.
   */
  async function probeWhile<T>(done: Promise<T>): Promise<{ latency: Latency; value: T }> {
    let settled = false;
    const watched = done.finally(() => {
      settled = true;
    });
    const times: number[] = [];
    while ((!settled && times.length < ROUND_PROBES) || times.length < ROUND_MIN_PROBES)
      times.push(await probe());
    return { latency: latency(times), value: await watched };
  }

  it('attack: 40 concurrent first and second requests for 40 distinct 250 KB scripts with br -> a new small file keeps its p50 and mean latency within 10x of quiet; server CPU a fraction of brotli 11 on the 40; nothing compressed before a file is kept, one fast compression per file, one at a time', async (t) => {
    const files = s.app.static.files;
    // The reference cost: brotli quality 11 of one file (what each first request used to run), x 40.
    const ref0 = process.cpuUsage();
    brotliCompressSync(sources[0]!, {
      params: {
        [zc.BROTLI_PARAM_QUALITY]: 11,
        [zc.BROTLI_PARAM_SIZE_HINT]: FILE_BYTES,
        [zc.BROTLI_PARAM_MODE]: zc.BROTLI_MODE_TEXT,
      },
    });
    const referenceCpuMs = FILES * cpuMsSince(ref0);

    // Quiet: warm up, then the reference latency.
    for (let i = 0; i < 5; i++) await probe();
    const floorMs = await loopLag();
    const quietTimes: number[] = [];
    for (let i = 0; i < SAMPLES; i++) quietTimes.push(await probe());
    const quietBefore = latency(quietTimes);

    attacker = spawn(
      process.execPath,
      [ATTACKER, s.url, 'br', ...Array.from({ length: FILES }, (_, i) => attackPath(i))],
      {
        stdio: ['pipe', 'pipe', 'inherit'],
      },
    );
    const reports: ((r: Round) => void)[] = [];
    attacker.stdout!.setEncoding('utf8');
    let buffered = '';
    attacker.stdout!.on('data', (c: string) => {
      buffered += c;
      for (let nl = buffered.indexOf('\n'); nl !== -1; nl = buffered.indexOf('\n')) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        reports.shift()?.(JSON.parse(line) as Round);
      }
    });
    const round = () =>
      new Promise<Round>((resolve) => {
        reports.push(resolve);
        attacker!.stdin!.write('round\n');
      });

    const cpu0 = process.cpuUsage();
    const probed0 = nextSmall;
    // Round 1: every script's first request. Nothing is kept yet, so nothing is compressed.
    const first = await probeWhile(round());
    const afterFirst = files.compressionStats();
    assert.equal(reached, FILES, 'every first request reached the server');
    assert.deepEqual(first.value.statuses, { 200: FILES });
    assert.deepEqual(
      first.value.encodings,
      { identity: FILES },
      'identity: no answer waits for a compression',
    );
    assert.equal(
      fastJobs(afterFirst) +
        afterFirst.dropped +
        afterFirst.queued.best +
        afterFirst.running.best +
        afterFirst.done.best,
      0,
      `no compression for files not kept: ${JSON.stringify(afterFirst)}`,
    );
    // Quiet again (nothing runs between the rounds): the reference is the slower of the two, so a
    // machine busier during the attack than before it is not taken for the attack's doing.
    const quietTimesBetween: number[] = [];
    for (let i = 0; i < SAMPLES; i++) quietTimesBetween.push(await probe());
    const quietBetween = latency(quietTimesBetween);
    const quiet: Latency = {
      p50: Math.max(quietBefore.p50, quietBetween.p50),
      mean: Math.max(quietBefore.mean, quietBetween.mean),
      n: 2 * SAMPLES,
    };
    // Round 2: the second requests. Each file is kept now and its br variant made in the background.
    const second = await probeWhile(round());
    const attackCpuMs = cpuMsSince(cpu0);
    const requests = 2 * FILES + (nextSmall - probed0);
    const afterSecond = files.compressionStats();
    const what = JSON.stringify({
      quiet: [quietBefore, quietBetween],
      floorMs,
      firstRound: first.latency,
      secondRound: second.latency,
      attackCpuMs,
      referenceCpuMs,
      requests,
      cpuPerRequestMs: attackCpuMs / requests,
      stats: afterSecond,
    });
    t.diagnostic(what);
    assert.ok(
      within10x(first.latency, quiet, floorMs),
      `a new small file within 10x of quiet, first round: ${what}`,
    );
    assert.ok(within10x(second.latency, quiet, floorMs), `and second round: ${what}`);
    assert.ok(attackCpuMs < referenceCpuMs / 4, `server CPU under a quarter of brotli 11 on the 40: ${what}`);
    assert.equal(reached, 2 * FILES, 'every second request reached the server');
    assert.deepEqual(second.value.statuses, { 200: FILES });
    assert.equal(second.value.encodings.identity, FILES, 'still identity: nothing waits for the variant');
    assert.ok(fastJobs(afterSecond) === FILES, `one fast job per file: ${JSON.stringify(afterSecond)}`);

    // And while a file is compressed at the highest level (brotli 11, what each request used to run).
    await waitUntil(
      'a compression at the highest level runs',
      () => files.compressionStats().running.best > 0,
    );
    const duringTimes: number[] = [];
    for (let i = 0; i < SAMPLES; i++) duringTimes.push(await probe());
    const during = latency(duringTimes);
    const duringBest = files.compressionStats();
    const whatDuring = JSON.stringify({ quiet, floorMs, during, stats: duringBest });
    t.diagnostic(whatDuring);
    assert.ok(duringBest.done.best < FILES, 'the probes ran while the highest level was still being made');
    assert.ok(within10x(during, quiet, floorMs), `within 10x of quiet during brotli 11: ${whatDuring}`);

    // The variants do come: once the fast ones are made, a third round is all br (and decodes).
    await waitUntil('the 40 fast variants are made', () => files.compressionStats().done.fast === FILES);
    const third = await round();
    assert.equal(reached, 3 * FILES);
    assert.deepEqual(third.encodings, { br: FILES }, JSON.stringify(third));
    const one = await get(s.url, attackPath(7), { headers: { 'accept-encoding': 'br' } });
    assert.equal(one.headers['content-encoding'], 'br');
    assert.equal(brotliDecompressSync(one.body).toString(), sources[7]);
    const end = files.compressionStats();
    assert.equal(end.done.fast, FILES, 'one fast compression per file, none for the third round');
    assert.equal(end.peakRunning, 1, 'one compression at a time (static.compressConcurrency 1)');
    assert.equal(end.dropped + end.failed + end.crashes, 0, JSON.stringify(end));
  });
});
