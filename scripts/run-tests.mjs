#!/usr/bin/env node
// Collects test files and runs them with node's test runner through tsx.
// Usage: node scripts/run-tests.mjs [DIR_OR_FILE ...]   (default: test/)
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function collect(path, out) {
  if (statSync(path).isDirectory()) {
    for (const name of readdirSync(path).sort()) {
      if (name === 'node_modules' || name === 'fixtures') continue;
      collect(join(path, name), out);
    }
  } else if (/\.test\.(ts|mjs|js)$/.test(path)) {
    out.push(path);
  }
  return out;
}

const roots = process.argv.slice(2);
const files = (roots.length ? roots : ['test']).flatMap((r) => collect(r, []));
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}
const r = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-reporter=spec', '--test-concurrency=2', ...files],
  {
    stdio: 'inherit',
  },
);
process.exit(r.status ?? 1);
