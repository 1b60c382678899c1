#!/usr/bin/env node
// The large-file row of `npm run bench` (issue 27 §4, "large files never wait for a hash"): time to the last
// byte of `GET /big.bin` with `Range: bytes=0-99` (a 206 of 100 bytes, on a new connection) for a 1 GB file:
//
//   cold           the first request to a fresh server, no hash manifest (the strong ETag is hashed in the
//                  background; the answer carries W/"size-mtime")
//   manifest       the first request to a fresh server after `gatehouse hash` wrote .gatehouse-hashes.json
//                  (a restart after a build: strong ETag at once)
//   server-written the first request to a second server after a first one (static.hashManifest "write")
//                  recorded the hash it computed (a restart without a build step)
//   inline         the first request with static.hashInlineMaxBytes above the file size: the old behaviour,
//                  which waits for the whole hash (reported, no target)
//   warm           the median of BENCH_LARGE_WARM requests to the same server once its hash is known
//   nginx          nginx's first and warm requests for the same file, for reference (when on PATH)
//
//   node bench/large-file.mjs [--json FILE]
//   BENCH_LARGE_FILE_MB=1024 (file size) BENCH_LARGE_WARM=21 (warm requests)
//
// Every server first answers requests for another large file (warmup.bin, 8 MB) until its strong ETag is
// known, so "first" is the first request for the 1 GB file, not the first a process ever compiles its
// request path for (reported beside cold).
// Target: cold, manifest and server-written each within 10x of warm (a miss prints MISSED; exit code 0,
// like the other rows). The file is sparse (its 1 GB of zeros
// is still read and hashed in full) in a temp dir removed at the end. Servers run pinned to the server CPU.
import { execFileSync } from 'node:child_process';
import { closeSync, ftruncateSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { log, positiveInt, runToEnd } from './lib/lifetime.mjs';
import { tempDir } from './lib/proc.mjs';
import { currentBuild, startGatehouse } from './servers/gatehouse.mjs';
import { nginxUnavailable, startNginx } from './servers/nginx.mjs';

const FILE_MB = positiveInt('BENCH_LARGE_FILE_MB', 1024);
const WARM = positiveInt('BENCH_LARGE_WARM', 21);
const TARGET_RATIO = 10;
const RANGE = 'bytes=0-99';
const HASH_WAIT_MS = 120_000;

const { values: flags } = parseArgs({ options: { json: { type: 'string' } } });

/** ms from the request to the last byte of its response, on a new connection; with status and ETag. */
function timedRange(port, path = '/big.bin') {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const req = http.request(
      { host: '127.0.0.1', port, path, headers: { range: RANGE }, agent: false },
      (res) => {
        let bytes = 0;
        res.on('data', (c) => {
          bytes += c.length;
        });
        res.on('end', () =>
          resolve({
            ms: Number(process.hrtime.bigint() - t0) / 1e6,
            status: res.statusCode,
            etag: res.headers.etag,
            bytes,
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

function check(r, what) {
  if (r.status !== 206 || r.bytes !== 100)
    throw new Error(`${what}: ${r.status}, ${r.bytes} bytes (want 206, 100)`);
  return r;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function warmMs(port, what) {
  const times = [];
  for (let i = 0; i < WARM; i++) times.push(check(await timedRange(port), what).ms);
  return median(times);
}

/** Polls until the server's ETag for the file is strong; returns ms waited. */
async function untilStrong(port, path = '/big.bin') {
  const t0 = Date.now();
  for (;;) {
    const r = await timedRange(port, path);
    if (r.etag && !r.etag.startsWith('W/')) return Date.now() - t0;
    if (Date.now() - t0 > HASH_WAIT_MS) throw new Error(`no strong ETag after ${HASH_WAIT_MS} ms`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

/**
 * Requests for another large file first, until its strong ETag is known: the first request a process
 * ever answers also pays for compiling its request, range and streaming paths (tens of ms in Node, none
 * of it hashing); "first" below means the first request for big.bin. Returns the process's first request.
 */
async function warmUp(port) {
  const r = check(await timedRange(port, '/warmup.bin'), 'warm-up');
  await untilStrong(port, '/warmup.bin');
  return r.ms;
}

async function gatehouseFirst(root, config, what) {
  const s = await startGatehouse({ root, config });
  try {
    const processFirstMs = await warmUp(s.port);
    const first = check(await timedRange(s.port), what);
    return { first, server: s, processFirstMs };
  } catch (err) {
    await s.stop();
    throw err;
  }
}

async function main() {
  const missing = currentBuild.missing();
  if (missing) throw new Error(missing);
  const site = tempDir('gatehouse-bench-large-');
  const root = site.path;
  const file = join(root, 'big.bin');
  const manifest = join(root, '.gatehouse-hashes.json');
  const fd = openSync(file, 'w');
  ftruncateSync(fd, FILE_MB * 1024 * 1024);
  closeSync(fd);
  const wfd = openSync(join(root, 'warmup.bin'), 'w');
  ftruncateSync(wfd, 8 * 1024 * 1024);
  closeSync(wfd);
  const rows = [];
  const row = (name, ms, etag, note = '') => {
    rows.push({ name, ms, etag, note });
    log(`  ${name.padEnd(16)} ${ms.toFixed(1).padStart(9)} ms  ${etag ?? ''}  ${note}`);
  };
  log(`large-file: ${FILE_MB} MB sparse file, GET /big.bin Range: ${RANGE}, new connection each`);
  try {
    // cold, then warm on the same server once the background hash is known
    const cold = await gatehouseFirst(root, undefined, 'cold');
    let warm;
    try {
      row(
        'cold',
        cold.first.ms,
        cold.first.etag,
        `(the process's first request: ${cold.processFirstMs.toFixed(1)} ms)`,
      );
      const hashMs = await untilStrong(cold.server.port);
      warm = await warmMs(cold.server.port, 'warm');
      row('warm', warm, undefined, `(median of ${WARM}; strong ETag ${hashMs} ms after the first answer)`);
    } finally {
      await cold.server.stop();
    }
    // a restart after `gatehouse hash` wrote the manifest
    const t0 = Date.now();
    execFileSync(process.execPath, [currentBuild.bin, 'hash', '--root', root, file], { stdio: 'ignore' });
    const hashCliMs = Date.now() - t0;
    const m = await gatehouseFirst(root, undefined, 'manifest');
    await m.server.stop();
    row('manifest', m.first.ms, m.first.etag, `(gatehouse hash took ${hashCliMs} ms at build time)`);
    // a restart after a server recorded the hash it computed
    rmSync(manifest);
    const writer = await gatehouseFirst(root, { static: { hashManifest: 'write' } }, 'writer');
    try {
      await untilStrong(writer.server.port);
      const t1 = Date.now();
      const written = () => {
        try {
          return readFileSync(manifest, 'utf8').includes('"big.bin"');
        } catch {
          return false;
        }
      };
      while (!written()) {
        if (Date.now() - t1 > HASH_WAIT_MS) throw new Error('the server did not write its manifest');
        await new Promise((res) => setTimeout(res, 50));
      }
    } finally {
      await writer.server.stop();
    }
    const second = await gatehouseFirst(root, undefined, 'server-written');
    await second.server.stop();
    row('server-written', second.first.ms, second.first.etag);
    // the old behaviour: hashed before the first answer
    rmSync(manifest);
    const inline = await gatehouseFirst(
      root,
      { static: { hashInlineMaxBytes: FILE_MB * 1024 * 1024 } },
      'inline',
    );
    await inline.server.stop();
    row(
      'inline',
      inline.first.ms,
      inline.first.etag,
      '(static.hashInlineMaxBytes above the size: waits for the hash)',
    );
    // nginx for reference
    let nginx;
    const why = nginxUnavailable();
    if (why === undefined) {
      const n = await startNginx(
        (port) => `  server {\n    listen 127.0.0.1:${port};\n    root ${root};\n  }`,
      );
      try {
        check(await timedRange(n.port, '/warmup.bin'), 'nginx warm-up');
        const first = check(await timedRange(n.port), 'nginx');
        nginx = { first: first.ms, warm: await warmMs(n.port, 'nginx warm') };
        row('nginx first', first.ms, first.etag);
        row('nginx warm', nginx.warm, undefined, `(median of ${WARM})`);
      } finally {
        await n.stop();
      }
    } else log(`  nginx: ${why}`);

    const verdicts = ['cold', 'manifest', 'server-written'].map((name) => {
      const r = rows.find((x) => x.name === name);
      const ratio = r.ms / warm;
      return { name, ratio, met: ratio <= TARGET_RATIO };
    });
    log('');
    for (const v of verdicts) {
      log(
        `large-file ${v.name} <= ${TARGET_RATIO}x warm   ${v.ratio.toFixed(1)}x ${v.met ? 'met' : 'MISSED'}`,
      );
    }
    const inlineRatio = inline.first.ms / warm;
    log(`large-file inline (old behaviour) ${inlineRatio.toFixed(1)}x warm (no target)`);
    if (flags.json) {
      writeFileSync(
        flags.json,
        `${JSON.stringify({ fileMb: FILE_MB, warmRequests: WARM, rows, verdicts, nginx }, null, 2)}\n`,
      );
    }
  } finally {
    site.remove();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  runToEnd(main, { stop: async () => {}, cleanup: () => {} });
}
