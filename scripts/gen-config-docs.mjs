#!/usr/bin/env node
// Writes the key reference of docs/configuration.md (key, type, default, description per key) from the
// zod configSchema, through the same JSON Schema as schema.json, so the page cannot drift from the code.
// Usage: node scripts/gen-config-docs.mjs [--check]     (npm run docs:config)
//   --check  write nothing; exit 1 when the page is missing or its generated part differs
//
// The page keeps the hand-written text above MARKER; everything below it is generated.
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { loadConfigSchema, REPO_ROOT } from './gen-schema.mjs';

export const DOCS_PATH = resolve(REPO_ROOT, 'docs/configuration.md');
export const MARKER =
  '<!-- generated below by scripts/gen-config-docs.mjs from src/config/schema.ts: do not edit, run npm run docs:config -->';

/** A cell: no raw `|` or line break. */
const cell = (s) =>
  String(s)
    .replace(/\|/g, '\\|')
    .replace(/\s*\n\s*/g, ' ');
const code = (s) => (s.includes('`') ? `\`\` ${s} \`\`` : `\`${s}\``);

/** A short type for one JSON Schema node: `string`, `integer 0..65535`, `"a" \| "b"`, `string[]`, `object`. */
function typeOf(node) {
  if (node.anyOf) return node.anyOf.map(typeOf).join(' | ');
  if (node.const !== undefined) return JSON.stringify(node.const);
  if (node.enum) return node.enum.map((v) => JSON.stringify(v)).join(' | ');
  if (node.type === 'array')
    return `${node.items ? typeOf(node.items) : 'any'}[]`.replace(/^(.* \| .*)\[\]$/, '($1)[]');
  if (node.type === 'object') return node.properties ? 'object' : 'map';
  const t = Array.isArray(node.type) ? node.type.join(' | ') : (node.type ?? 'any');
  // zod's .int() bounds a number by MAX_SAFE_INTEGER: no real upper bound.
  const hi = node.maximum === Number.MAX_SAFE_INTEGER ? undefined : node.maximum;
  if (node.exclusiveMinimum !== undefined) return `${t} > ${node.exclusiveMinimum}`;
  if (node.minimum !== undefined && hi !== undefined) return `${t} ${node.minimum}..${hi}`;
  if (node.minimum !== undefined && node.minimum > Number.MIN_SAFE_INTEGER) return `${t} >= ${node.minimum}`;
  if (hi !== undefined) return `${t} <= ${hi}`;
  return t;
}

/** Rows for `node` at `key` and for every key below it (objects, array items, object members of unions). */
function rows(node, key, out) {
  if (key !== '')
    out.push([
      code(key),
      code(typeOf(node)),
      node.default === undefined ? '' : code(JSON.stringify(node.default)),
      node.description ?? '',
    ]);
  const below = (n, k) => {
    for (const [name, sub] of Object.entries(n.properties ?? {})) rows(sub, k ? `${k}.${name}` : name, out);
    if (!n.properties && typeof n.additionalProperties === 'object')
      rows(n.additionalProperties, `${k}.<name>`, out);
    if (n.items) below(n.items, `${k}[]`);
    for (const alt of n.anyOf ?? []) below(alt, k);
  };
  below(node, key);
  return out;
}

/** The generated part of the page (from MARKER to the end) for a zod config schema. */
export function renderConfigDocs(configSchema) {
  const schema = z.toJSONSchema(configSchema, { io: 'input' });
  const lines = rows(schema, '', [])
    .filter(([k]) => k !== '`$schema`')
    .map((r) => `| ${r.map(cell).join(' | ')} |`);
  return `${MARKER}

## Every key

\`a.b\` is a key of the object \`a\`; \`a[].b\` a key of each element of the array \`a\`; \`a.<name>\` a
value of the map \`a\` under any name. A blank default: the key is optional and absent unless set.

| key | type | default | description |
| --- | --- | --- | --- |
${lines.join('\n')}
`;
}

/** The whole page: the committed hand-written part (up to MARKER) and the generated part. */
export function renderPage(current, configSchema) {
  const at = current.indexOf(MARKER);
  if (at < 0) throw new Error(`${DOCS_PATH} has no marker line: ${MARKER}`);
  return current.slice(0, at) + renderConfigDocs(configSchema);
}

async function main(argv) {
  const check = argv.includes('--check');
  if (argv.some((a) => a !== '--check')) {
    console.error('usage: gen-config-docs.mjs [--check]');
    return 2;
  }
  const current = readFileSync(DOCS_PATH, 'utf8');
  const text = renderPage(current, await loadConfigSchema());
  if (check) {
    if (current === text) return 0;
    console.error(`gen-config-docs: ${DOCS_PATH} is out of date; run npm run docs:config`);
    return 1;
  }
  writeFileSync(DOCS_PATH, text);
  console.log(`wrote ${DOCS_PATH}`);
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  process.exitCode = await main(process.argv.slice(2));
}
