// The built client (dist/client/*.js) must load in a browser with no bundler and no Node: every
// import is relative and ends in .js, stays inside dist/client or reaches the pure engine
// (dist/cache, dist/http), and the same holds TRANSITIVELY for every file reached from an entry of
// dist/client: no `node:` and no bare package names anywhere in the graph.
// npm test builds first; run alone, build first (npm run build).
import assert from 'node:assert/strict';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const DIST_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../dist');
const DIST = join(DIST_ROOT, 'client');
/** The folders of dist a client file may import from: its own and the pure engine. */
const ALLOWED = ['client', 'cache', 'http'];

/**
 * Every module specifier in `code` (static imports, re-exports, side-effect and dynamic imports), found
 * by TypeScript's own pre-processor, so text inside strings and comments does not count.
 */
export function specifiers(code: string): string[] {
  return ts.preProcessFile(code, true, true).importedFiles.map((f) => f.fileName);
}

/** Why `spec` (imported by `fromFile`) would not load in a browser without a bundler, or null. */
export function browserProblem(spec: string, fromFile: string, root: string = DIST_ROOT): string | null {
  if (spec.startsWith('node:')) return 'a node: import';
  if (!spec.startsWith('./') && !spec.startsWith('../'))
    return 'a bare specifier (needs a bundler or import map)';
  if (!spec.endsWith('.js')) return 'no .js extension (browsers do not guess)';
  const target = resolve(dirname(fromFile), spec);
  const rel = relative(root, target);
  if (rel.startsWith('..') || !ALLOWED.some((d) => rel.startsWith(`${d}/`)))
    return 'reaches outside dist/client, dist/cache and dist/http';
  if (!existsSync(target)) return 'the file does not exist';
  return null;
}

/** Walks the import graph from `entries`; returns every problem (file: spec: why) and the files reached. */
export function walk(
  entries: string[],
  root: string = DIST_ROOT,
): { problems: string[]; files: Set<string> } {
  const problems: string[] = [];
  const files = new Set<string>();
  const queue = [...entries];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (files.has(file)) continue;
    files.add(file);
    for (const spec of specifiers(readFileSync(file, 'utf8'))) {
      const p = browserProblem(spec, file, root);
      if (p) problems.push(`${relative(root, file)}: '${spec}': ${p}`);
      else queue.push(resolve(dirname(file), spec));
    }
  }
  return { problems, files };
}

describe('browserProblem', () => {
  const from = join(DIST, 'index.js');
  const cases: [string, string, string | null][] = [
    ['relative .js in the folder -> fine', './websocket.js', null],
    ['into ../cache (the engine) -> fine', '../cache/request.js', null],
    ['into ../http -> fine', '../http/cache-control.js', null],
    ['into ../http, the shared hashed-name rule -> fine', '../http/hashed-name.js', null],
    ['node:events -> refused', 'node:events', 'a node: import'],
    ['bare package ws -> refused', 'ws', 'a bare specifier (needs a bundler or import map)'],
    ['bare package lru-cache -> refused', 'lru-cache', 'a bare specifier (needs a bundler or import map)'],
    ['relative without .js -> refused', './websocket', 'no .js extension (browsers do not guess)'],
    [
      'into ../server -> refused',
      '../server/app.js',
      'reaches outside dist/client, dist/cache and dist/http',
    ],
    [
      'into ../config -> refused',
      '../config/load.js',
      'reaches outside dist/client, dist/cache and dist/http',
    ],
    [
      'out of dist -> refused',
      '../../package.json.js',
      'reaches outside dist/client, dist/cache and dist/http',
    ],
    ['a missing engine file -> refused', '../cache/nope.js', 'the file does not exist'],
  ];
  for (const [name, spec, expected] of cases)
    it(name, () => assert.equal(browserProblem(spec, from), expected));

  it('specifiers: static, side-effect, dynamic imports and re-exports found; strings and comments not', () => {
    const code = [
      "import { a } from './a.js';",
      'export { b } from "./b.js";',
      "import './c.js';",
      "const d = await import('node:fs');",
      "export * from './e.js';",
      "const hint = \"import { WebSocket } from 'ws'\"; // import x from 'y'",
    ].join('\n');
    assert.deepEqual(specifiers(code).sort(), ['./a.js', './b.js', './c.js', './e.js', 'node:fs']);
  });
});

describe('walk: planted graphs', () => {
  /** A throwaway dist with the given files; returns problems walking from client/index.js. */
  function planted(files: Record<string, string>): string[] {
    const root = mkdtempSync(join(tmpdir(), 'gh-loadable-'));
    try {
      for (const [path, code] of Object.entries(files)) {
        mkdirSync(dirname(join(root, path)), { recursive: true });
        writeFileSync(join(root, path), code);
      }
      return walk([join(root, 'client/index.js')], root).problems;
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }
  const cases: [string, Record<string, string>, string[]][] = [
    [
      'client -> cache -> http, all relative -> fine',
      {
        'client/index.js': "export * from '../cache/a.js';",
        'cache/a.js': "import '../http/b.js';",
        'http/b.js': 'export const b = 1;',
      },
      [],
    ],
    [
      'client -> cache file that imports a bare package (two hops) -> refused',
      {
        'client/index.js': "import '../cache/store.js';",
        'cache/store.js': "import { LRUCache } from 'lru-cache';",
      },
      ["cache/store.js: 'lru-cache': a bare specifier (needs a bundler or import map)"],
    ],
    [
      'client -> cache -> http file with a node: import (three hops) -> refused',
      {
        'client/index.js': "import './x.js';",
        'client/x.js': "import '../cache/y.js';",
        'cache/y.js': "import '../http/z.js';",
        'http/z.js': "import { readFile } from 'node:fs';",
      },
      ["http/z.js: 'node:fs': a node: import"],
    ],
    [
      'cache file reaching into server -> refused',
      {
        'client/index.js': "import '../cache/y.js';",
        'cache/y.js': "import '../server/s.js';",
        'server/s.js': '',
      },
      ["cache/y.js: '../server/s.js': reaches outside dist/client, dist/cache and dist/http"],
    ],
    [
      'an import circle terminates',
      { 'client/index.js': "import './a.js';", 'client/a.js': "import './index.js';" },
      [],
    ],
  ];
  for (const [name, files, expected] of cases) it(name, () => assert.deepEqual(planted(files), expected));
});

describe('dist/client', () => {
  it('every file reached from dist/client/*.js has only relative .js imports inside client, cache, http', () => {
    assert.ok(existsSync(join(DIST, 'index.js')), `${DIST}/index.js is missing: run npm run build first`);
    const entries = readdirSync(DIST)
      .filter((f) => f.endsWith('.js'))
      .map((f) => join(DIST, f));
    const { problems, files } = walk(entries);
    assert.deepEqual(problems, []);
    const reached = [...files].map((f) => relative(DIST_ROOT, f));
    assert.ok(
      reached.includes('cache/request.js'),
      `the walk did not reach the engine: ${reached.join(' ')}`,
    );
    assert.ok(reached.includes('http/cache-control.js'), 'the walk did not reach src/http');
    assert.ok(files.size >= 10, `only ${files.size} files reached: the walk is not following imports`);
  });

  it('index.js exports ReconnectingWebSocket, onMessageFrom, postTo and createCachingFetch', async () => {
    const m = await import(join(DIST, 'index.js'));
    assert.equal(typeof m.ReconnectingWebSocket, 'function');
    assert.equal(typeof m.onMessageFrom, 'function');
    assert.equal(typeof m.postTo, 'function');
    assert.equal(typeof m.createCachingFetch, 'function');
  });

  it('sw.js exports versionedCache', async () => {
    const m = await import(join(DIST, 'sw.js'));
    assert.equal(typeof m.versionedCache, 'function');
  });
});
