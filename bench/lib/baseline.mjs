// The baseline build for "no regression" checks: BENCH_BASELINE=/path/to/another/checkout (e.g. a git
// worktree of the commit before a change, with `npm ci && npm run build` done there) adds a
// `<name>-baseline` twin of every Gatehouse server that runs that checkout's bin/gatehouse.js with the same
// arguments and config, side by side with this build in the same run. A config is trimmed to the keys the
// baseline's schema.json defines (an older build rejects keys it does not know); every key dropped that way
// is reported once, since the two then no longer run the same config.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const dir = process.env.BENCH_BASELINE ? resolve(process.env.BENCH_BASELINE) : undefined;

/** Keys dropped from baseline configs, reported by run.mjs: 'websocket[0].rateLimit' etc. */
export const droppedKeys = new Set();

/**
 * `value` without the object keys `schema` (a JSON Schema as written by `npm run schema`) does not define,
 * following properties, items, anyOf/oneOf/allOf. `dropped(path)` is called for each key removed. Values a
 * schema says nothing about are kept as they are.
 */
export function trimToSchema(value, schema, dropped = () => {}, path = '') {
  if (!schema || typeof schema !== 'object') return value;
  if (Array.isArray(value)) {
    const items = schema.items ?? branches(schema).find((b) => b.items)?.items;
    return items ? value.map((v, i) => trimToSchema(v, items, dropped, `${path}[${i}]`)) : value;
  }
  if (!value || typeof value !== 'object') return value;
  const objectSchemas = [schema, ...branches(schema)].filter((s) => s.properties);
  if (objectSchemas.length === 0) return value;
  const open = objectSchemas.some((s) => s.additionalProperties !== false && s.additionalProperties);
  const out = {};
  for (const [key, v] of Object.entries(value)) {
    const sub = objectSchemas.find((s) => Object.hasOwn(s.properties, key))?.properties[key];
    const at = path ? `${path}.${key}` : key;
    if (sub) out[key] = trimToSchema(v, sub, dropped, at);
    else if (open) out[key] = v;
    else dropped(at);
  }
  return out;
}

const branches = (schema) => [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])];

/** The baseline build (see servers/gatehouse.mjs for the shape), or undefined without BENCH_BASELINE. */
export const baselineBuild = dir && {
  suffix: '-baseline',
  dir,
  bin: join(dir, 'bin/gatehouse.js'),
  schemaFile: join(dir, 'schema.json'),
  schema: undefined,
  missing() {
    if (!existsSync(this.bin)) return `BENCH_BASELINE: ${this.bin} not found`;
    if (!existsSync(join(dir, 'dist/cli/main.js'))) {
      return `BENCH_BASELINE: ${join(dir, 'dist/cli/main.js')} is missing: run \`npm ci && npm run build\` there`;
    }
    return undefined;
  },
};

/** The config `build` is given: as is for this build, trimmed to its schema.json for the baseline. */
export function forBuild(build, config) {
  if (!build.schemaFile) return config;
  if (build.schema === undefined) {
    build.schema = existsSync(build.schemaFile) ? JSON.parse(readFileSync(build.schemaFile, 'utf8')) : null;
  }
  if (!build.schema) return config; // no schema.json to go by: pass it on and let the build judge it
  return trimToSchema(config, build.schema, (key) => droppedKeys.add(key));
}
