// HTTP/3 on Bun (issue 39): a latency probe, since no load generator for HTTP/3 can be had from npm or
// Debian (Debian's h2load is built without QUIC). `gatehouse serve --http3` run by Bun serves the bench
// fixture over TLS; a Bun client (children/h3-probe.mjs) sends one request at a time over HTTP/3 and over
// HTTPS/1.1 in alternating rounds and reports each protocol's p50/p90/p99 and its ratio to HTTPS/1.1 on
// the same server, so the machine's load cancels out. Not throughput: QUIC's cost under load is not
// measured here.
//
//   node bench/h3.mjs [--requests N] [--rounds R]
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createFixture, FIXTURE } from './lib/fixture.mjs';
import { freePort, startServerProcess } from './lib/proc.mjs';
import { makeBenchCertificate } from './lib/tls-cert.mjs';

const { values: opts } = parseArgs({
  options: { requests: { type: 'string', default: '3000' }, rounds: { type: 'string', default: '6' } },
});
const BUN = fileURLToPath(new URL('../node_modules/.bin/bun', import.meta.url));
const BIN = fileURLToPath(new URL('../bin/gatehouse.js', import.meta.url));
const PROBE = fileURLToPath(new URL('./children/h3-probe.mjs', import.meta.url));

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

async function main() {
  if (!existsSync(BUN)) {
    console.log(`h3: ${BUN} not found (npm ci installs the bun devDependency); skipped`);
    return;
  }
  const fixture = createFixture();
  const tls = await makeBenchCertificate(fixture.dir);
  const port = await freePort();
  const server = await startServerProcess({
    cmd: BUN,
    args: [BIN, 'serve', fixture.dir, '--port', String(port), '--host', '127.0.0.1', '--log', 'off'].concat([
      '--tls-cert',
      tls.cert,
      '--tls-key',
      tls.key,
      '--http3',
    ]),
    readyLine: new RegExp(`listening on https://127\\.0\\.0\\.1:(${port})\\b`),
    expectComm: 'bun',
  });
  try {
    const r = spawnSync(
      BUN,
      [PROBE, `https://127.0.0.1:${port}`, FIXTURE.small.path, opts.requests, opts.rounds],
      { encoding: 'utf8', timeout: 600_000 },
    );
    if (r.status !== 0) throw new Error(`probe failed (${r.status}): ${r.stderr}`);
    const result = JSON.parse(r.stdout.trim().split('\n').at(-1));
    const rows = Object.entries(result).map(([name, { ms, statuses }]) => {
      const sorted = [...ms].sort((a, b) => a - b);
      return {
        name,
        n: ms.length,
        statuses,
        p50: quantile(sorted, 0.5),
        p90: quantile(sorted, 0.9),
        p99: quantile(sorted, 0.99),
      };
    });
    const base = rows.find((x) => x.name === 'h1-tls');
    console.log(`\n### HTTP/3 on Bun: latency of GET ${FIXTURE.small.path} (1 KB), one request at a time\n`);
    console.log('| protocol | requests | statuses | p50 ms | p90 ms | p99 ms | p50 / HTTPS/1.1 |');
    console.log('| --- | ---: | --- | ---: | ---: | ---: | ---: |');
    for (const x of rows)
      console.log(
        `| ${x.name} | ${x.n} | ${JSON.stringify(x.statuses)} | ${x.p50.toFixed(3)} | ${x.p90.toFixed(3)} | ${x.p99.toFixed(3)} | ${(x.p50 / base.p50).toFixed(2)}x |`,
      );
    const bad = rows.filter((x) => Object.keys(x.statuses).some((s) => s !== '200'));
    if (bad.length > 0) throw new Error(`answers other than 200: ${bad.map((x) => x.name).join(', ')}`);
  } finally {
    await server.stop();
    fixture.cleanup();
  }
}

main().catch((err) => {
  console.error(`h3: ${err.message}`);
  process.exitCode = 1;
});
