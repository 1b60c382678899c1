#!/usr/bin/env node
// Client size report (issue 13 §1): each export of gatehouse-http/client on its own, and the whole entry
// point, as a browser app would ship them: esbuild (bundle, minify, ESM, platform browser) over the built
// dist/client, then gzip -9. One export alone is measured through a one-line entry
// `export { X } from '<repo>/dist/client/index.js'`, so tree-shaking keeps only X and what it uses.
//
//   npm run build && node bench/client-size.mjs [--json]
//
// Exits 1 when ReconnectingWebSocket alone is over its budget (3 KB = 3072 bytes min+gzip), 2 when
// dist/client is missing. The peers' figures are their published ones (bundlephobia, min+gzip), printed
// for comparison, not measured here: no peer package is installed or fetched.
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const CLIENT_ENTRY = resolve(REPO, 'dist/client/index.js');

/** The WebSocket client's budget, min+gzip bytes (issue 13 §1). */
export const WEBSOCKET_BUDGET_BYTES = 3072;

/** What is measured: a name, the entry's source (or null for the whole entry file), and a budget. */
export const TARGETS = [
  { name: 'ReconnectingWebSocket', exportName: 'ReconnectingWebSocket', budgetBytes: WEBSOCKET_BUDGET_BYTES },
  { name: 'onMessageFrom', exportName: 'onMessageFrom', budgetBytes: null },
  { name: 'postTo', exportName: 'postTo', budgetBytes: null },
  { name: 'dist/client/index.js (all)', exportName: null, budgetBytes: null },
];

/** Published min+gzip figures of the peers, for comparison only (issue 13 §1). */
export const PEERS = [
  { name: 'partysocket', gzipBytes: 2.7 * 1024, note: 'published figure, not measured; no heartbeat' },
  {
    name: 'reconnecting-websocket',
    gzipBytes: 3.2 * 1024,
    note: 'published figure, not measured; no heartbeat',
  },
];

/**
 * Bundles and minifies one entry with esbuild and gzips it at level 9.
 * @param {string | null} exportName one export of dist/client/index.js, or null for the whole entry
 * @returns {Promise<{ minBytes: number, gzipBytes: number }>}
 */
export async function measureExport(exportName) {
  const common = {
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    write: false,
    logLevel: 'silent',
    legalComments: 'none',
  };
  const result = await build(
    exportName === null
      ? { ...common, entryPoints: [CLIENT_ENTRY] }
      : {
          ...common,
          stdin: {
            contents: `export { ${exportName} } from ${JSON.stringify(CLIENT_ENTRY)};`,
            resolveDir: REPO,
            loader: 'js',
          },
        },
  );
  const code = result.outputFiles[0].contents;
  return {
    minBytes: code.length,
    gzipBytes: gzipSync(code, { level: 9 }).length,
    text: new TextDecoder().decode(code),
  };
}

/**
 * Measures every target. Throws when dist/client has not been built.
 * @returns {Promise<Array<{ name: string, minBytes: number, gzipBytes: number, budgetBytes: number | null, ok: boolean }>>}
 */
export async function measureClient() {
  if (!existsSync(CLIENT_ENTRY)) throw new Error(`${CLIENT_ENTRY} is missing: run npm run build first`);
  const rows = [];
  for (const t of TARGETS) {
    const { minBytes, gzipBytes } = await measureExport(t.exportName);
    rows.push({
      name: t.name,
      minBytes,
      gzipBytes,
      budgetBytes: t.budgetBytes,
      ok: t.budgetBytes === null || gzipBytes <= t.budgetBytes,
    });
  }
  return rows;
}

const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KB`;

/** The printed table: measured rows, then the peers' published figures. */
export function formatTable(rows) {
  const header = ['export', 'min bytes', 'min+gzip bytes', 'min+gzip', 'budget', 'status'];
  const lines = rows.map((r) => [
    r.name,
    String(r.minBytes),
    String(r.gzipBytes),
    kb(r.gzipBytes),
    r.budgetBytes === null ? '-' : `${r.budgetBytes} B`,
    r.budgetBytes === null ? '-' : r.ok ? 'ok' : 'OVER',
  ]);
  for (const p of PEERS) lines.push([p.name, '-', '-', kb(p.gzipBytes), '-', p.note]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const fmt = (cells) =>
    cells
      .map((c, i) => (i === 0 || i === cells.length - 1 ? c.padEnd(widths[i]) : c.padStart(widths[i])))
      .join('  ');
  return [fmt(header), widths.map((w) => '-'.repeat(w)).join('  '), ...lines.map(fmt)]
    .map((l) => l.trimEnd())
    .join('\n');
}

async function main() {
  if (!existsSync(CLIENT_ENTRY)) {
    console.error(`client-size: ${CLIENT_ENTRY} is missing; run npm run build first`);
    return 2;
  }
  const rows = await measureClient();
  if (process.argv.includes('--json')) console.log(JSON.stringify(rows, null, 2));
  else {
    console.log('client size (esbuild: bundle, minify, esm, platform browser; then gzip -9)');
    console.log(formatTable(rows));
  }
  const over = rows.filter((r) => !r.ok);
  for (const r of over)
    console.error(`client-size: ${r.name} is ${r.gzipBytes} B min+gzip, over ${r.budgetBytes} B`);
  return over.length ? 1 : 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main();
}
