#!/usr/bin/env node
// Writes schema.json (JSON Schema of gatehouse.config.json) from the zod configSchema.
// Usage: node scripts/gen-schema.mjs [--check] [--out FILE]     (npm run schema)
//   --check     write nothing; exit 1 when FILE is missing or differs from what would be written
//   --out FILE  target file (default: schema.json at the repo root)
//
// The schema is read from src/config/schema.ts through tsx (a devDependency), not from dist/, so the
// output never lags behind the source and no build is needed first.
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { z } from 'zod';

export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
export const SCHEMA_PATH = resolve(REPO_ROOT, 'schema.json');
export const SCHEMA_ID = 'https://unpkg.com/gatehouse-http/schema.json';
export const SCHEMA_TITLE = 'Gatehouse configuration';

/**
 * The schema.json text for a zod config schema: input side (defaulted fields are optional),
 * `$id` and `title` up front, two-space indent, trailing newline.
 * @param {import('zod').ZodType} configSchema
 * @returns {string}
 */
export function renderSchema(configSchema) {
  const { $schema, ...rest } = z.toJSONSchema(configSchema, { io: 'input' });
  return `${JSON.stringify({ $schema, $id: SCHEMA_ID, title: SCHEMA_TITLE, ...rest }, null, 2)}\n`;
}

/** Loads configSchema from the TypeScript source. */
export async function loadConfigSchema() {
  const { register } = await import('tsx/esm/api');
  const unregister = register();
  try {
    const mod = await import(pathToFileURL(resolve(REPO_ROOT, 'src/config/schema.ts')).href);
    return mod.configSchema;
  } finally {
    await unregister();
  }
}

function parseArgs(argv) {
  const opts = { check: false, out: SCHEMA_PATH };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--check') opts.check = true;
    else if (arg === '--out' && argv[i + 1] !== undefined) opts.out = resolve(argv[++i]);
    else if (arg.startsWith('--out=')) opts.out = resolve(arg.slice('--out='.length));
    else throw new Error(`unknown argument: ${arg} (usage: gen-schema.mjs [--check] [--out FILE])`);
  }
  return opts;
}

async function main(argv) {
  let opts;
  try {
    opts = parseArgs(argv);
  } catch (err) {
    console.error(`gen-schema: ${err.message}`);
    return 2;
  }
  const text = renderSchema(await loadConfigSchema());
  if (opts.check) {
    let current;
    try {
      current = readFileSync(opts.out, 'utf8');
    } catch {
      current = undefined;
    }
    if (current === text) return 0;
    console.error(
      `gen-schema: ${opts.out} is ${current === undefined ? 'missing' : 'out of date'}; run npm run schema`,
    );
    return 1;
  }
  writeFileSync(opts.out, text);
  console.log(`wrote ${opts.out}`);
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  process.exitCode = await main(process.argv.slice(2));
}
