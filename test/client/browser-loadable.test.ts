// The built client (dist/client/*.js) must load in a browser with no bundler and no Node: every
// import is relative, ends in .js and stays inside dist/client or reaches the pure dist/http (whose
// own imports are checked the same way, transitively); no `node:` and no bare package names.
// npm test builds first; run alone, build first (npm run build).
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const DIST = resolve(dirname(fileURLToPath(import.meta.url)), '../../dist/client');
/** The other dist folders a client file may import from: pure modules with no I/O (src/http). */
const ALLOWED = [DIST, resolve(DIST, '../http')];

/**
 * Every module specifier in `code` (static imports, re-exports, side-effect and dynamic imports), found
 * by TypeScript's own pre-processor, so text inside strings and comments does not count.
 */
export function specifiers(code: string): string[] {
  return ts.preProcessFile(code, true, true).importedFiles.map((f) => f.fileName);
}

/** Why `spec` (imported by a file in dist/client) would not load in a browser without a bundler, or null. */
export function browserProblem(spec: string, fromFile: string): string | null {
  if (spec.startsWith('node:')) return 'a node: import';
  if (!spec.startsWith('./') && !spec.startsWith('../'))
    return 'a bare specifier (needs a bundler or import map)';
  if (!spec.endsWith('.js')) return 'no .js extension (browsers do not guess)';
  const target = resolve(dirname(fromFile), spec);
  if (ALLOWED.every((dir) => relative(dir, target).startsWith('..')))
    return 'reaches outside dist/client and dist/http';
  if (!existsSync(target)) return 'the file does not exist';
  return null;
}

describe('browserProblem', () => {
  const from = join(DIST, 'index.js');
  const cases: [string, string, string | null][] = [
    ['relative .js in the folder -> fine', './websocket.js', null],
    ['node:events -> refused', 'node:events', 'a node: import'],
    ['bare package ws -> refused', 'ws', 'a bare specifier (needs a bundler or import map)'],
    ['relative without .js -> refused', './websocket', 'no .js extension (browsers do not guess)'],
    ['into ../server -> refused', '../server/app.js', 'reaches outside dist/client and dist/http'],
    ['into ../http -> fine', '../http/hashed-name.js', null],
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

describe('dist/client', () => {
  it('every import in dist/client/*.js, and in what they import, is relative, .js, in dist/client or dist/http', () => {
    assert.ok(existsSync(join(DIST, 'index.js')), `${DIST}/index.js is missing: run npm run build first`);
    const queue = readdirSync(DIST)
      .filter((f) => f.endsWith('.js'))
      .map((f) => join(DIST, f));
    const visited = new Set(queue);
    const problems: string[] = [];
    let seen = 0;
    while (queue.length > 0) {
      const file = queue.shift()!;
      for (const spec of specifiers(readFileSync(file, 'utf8'))) {
        seen++;
        const p = browserProblem(spec, file);
        if (p) problems.push(`${relative(DIST, file)}: '${spec}': ${p}`);
        const target = resolve(dirname(file), spec);
        if (!p && !visited.has(target)) {
          visited.add(target);
          queue.push(target);
        }
      }
    }
    assert.deepEqual(problems, []);
    assert.ok(seen >= 3, `only ${seen} imports found: the scan is not reading the files`);
  });

  it('index.js exports ReconnectingWebSocket, onMessageFrom and postTo', async () => {
    const m = await import(join(DIST, 'index.js'));
    assert.equal(typeof m.ReconnectingWebSocket, 'function');
    assert.equal(typeof m.onMessageFrom, 'function');
    assert.equal(typeof m.postTo, 'function');
  });

  it('sw.js exports versionedCache', async () => {
    const m = await import(join(DIST, 'sw.js'));
    assert.equal(typeof m.versionedCache, 'function');
  });
});
