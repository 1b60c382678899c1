// scripts/check-layers.mjs (npm run lint): the floors of src/server/, the kernel's imports, the server's
// one public face, the folders kept apart, and the ratchet file scripts/layers-allowed.txt. Each case is a
// small tree in a temp folder, checked with --root; each fails when its rule is taken out of the script,
// and the clean tree fails when a rule fires too often.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';
import { findImports } from '../../scripts/check-layers.mjs';

const REPO = join(import.meta.dirname, '../..');
const SCRIPT = join(REPO, 'scripts/check-layers.mjs');

/** A clean tree: every import here is allowed, one of each kind the rules look at. */
const CLEAN: Record<string, string> = {
  'src/http/a.ts': 'export const a = 1;\n',
  'src/cache/c.ts': "import { a } from '../http/a.js';\nexport type C = typeof a;\n",
  'src/server/core/k.ts': [
    "import { Readable } from 'node:stream';",
    "import type { C } from '../../cache/c.js';",
    "import { a } from '../../http/a.js';",
    "import { j } from './j.js';",
    'export const k: C = a + j + (Readable ? 0 : 1);',
    '',
  ].join('\n'),
  'src/server/core/j.ts': 'export const j = 1;\n',
  'src/server/ops/log.ts': "import { k } from '../core/k.js';\nexport const log = k;\n",
  // floor 1 may use floor 1
  'src/server/redis/pool.ts': "import { log } from '../ops/log.js';\nexport const pool = log;\n",
  'src/server/static/y.ts':
    "import { pool } from '../redis/pool.js';\nimport { z } from './z.js';\nexport const y = pool + z;\n",
  'src/server/static/z.ts': 'export const z = 1;\n',
  'src/server/tls/t.ts': "import 'node:tls';\nimport { y } from '../static/y.js';\nexport const t = y;\n",
  'src/server/app/g.ts': "import { t } from '../tls/t.js';\nexport const g = t;\n",
  'src/server/index.ts': "export { g } from './app/g.js';\n",
  'src/adapters/e.ts': "import { g } from '../server/index.js';\nexport const e = g;\n",
  'src/config/s.ts': "export type { g } from '../server/index.js';\n",
  'src/client/w.ts': "import { a } from '../http/a.js';\nexport const w = a;\n",
};

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-layers-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

function check(dir: string, ...args: string[]) {
  const r = spawnSync(process.execPath, [SCRIPT, ...args, '--root', dir], { encoding: 'utf8' });
  return { code: r.status, errors: r.stderr.split('\n').filter(Boolean), stdout: r.stdout };
}

/** The clean tree plus `extra`, checked: the exit code and the error lines. */
function checkWith(extra: Record<string, string>, ...args: string[]) {
  const dir = tree({ ...CLEAN, ...extra });
  try {
    return check(dir, ...args);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('check-layers on small trees', () => {
  it('a clean tree: exit 0, no error, the summary line', () => {
    const r = checkWith({});
    assert.deepEqual(r.errors, []);
    assert.equal(r.code, 0);
    assert.equal(
      r.stdout,
      'check-layers: 14 files, 16 imports checked; 0 errors; allowed violations left 0\n',
    );
  });

  it('an import that runs back up a floor (core -> static)', () => {
    const r = checkWith({
      'src/server/core/x.ts': "import { y } from '../static/y.js';\nexport const x = y;\n",
    });
    assert.equal(r.code, 1);
    assert.deepEqual(r.errors, [
      'src/server/core/x.ts:1 imports ../static/y.js: core (floor 0) may not import static (floor 2): an import runs back up',
    ]);
  });

  it('an import sideways on one floor (steps -> static), and a service importing a feature (up)', () => {
    const r = checkWith({
      'src/server/steps/s.ts': "\nimport type { y } from '../static/y.js';\nexport type S = typeof y;\n",
      'src/server/redis/r.ts': "export const r = import('../proxy/p.js');\n",
      'src/server/proxy/p.ts': 'export const p = 1;\n',
    });
    assert.equal(r.code, 1);
    assert.deepEqual(r.errors, [
      'src/server/redis/r.ts:1 imports ../proxy/p.js: redis (floor 1) may not import proxy (floor 2): an import runs back up',
      'src/server/steps/s.ts:2 imports ../static/y.js: steps (floor 2) may not import static (floor 2): sideways on one floor (move the shared part down)',
    ]);
  });

  it('the kernel importing node:http (a type import) or a src folder other than http and cache', () => {
    const r = checkWith({
      'src/server/core/n.ts': [
        "import type { IncomingMessage } from 'node:http';",
        "export type N = IncomingMessage | typeof import('net').Socket;",
        "export { inspect } from '../../inspect/i.js';",
        '',
      ].join('\n'),
      'src/inspect/i.ts': 'export const inspect = 1;\n',
    });
    assert.equal(r.code, 1);
    assert.deepEqual(r.errors, [
      'src/server/core/n.ts:1 imports node:http: the kernel (core) may not import node:http: it stays transport-neutral (a transport brings it)',
      'src/server/core/n.ts:2 imports net: the kernel (core) may not import node:net: it stays transport-neutral (a transport brings it)',
      'src/server/core/n.ts:3 imports ../../inspect/i.js: the kernel (core) imports only src/http, src/cache and itself, not src/inspect/i.ts',
    ]);
  });

  it('an adapter importing a deep server path instead of src/server/index.ts', () => {
    const r = checkWith({
      'src/adapters/d.ts': "import {\n  j,\n} from '../server/core/j.js';\nexport const d = j;\n",
    });
    assert.equal(r.code, 1);
    assert.deepEqual(r.errors, [
      "src/adapters/d.ts:1 imports ../server/core/j.js: outside src/server, import src/server/index.ts only: src/server/core/j.ts is past the server's public face",
    ]);
  });

  it('folders kept apart: server -> config, http -> node: and another folder, client -> server', () => {
    const r = checkWith({
      'src/server/static/c.ts': "import type { g } from '../../config/s.js';\nexport type X = g;\n",
      'src/http/b.ts':
        "import { readFileSync } from 'node:fs';\nimport type { C } from '../cache/c.js';\nexport type B = C;\n",
      'src/client/v.ts': "import { g } from '../server/index.js';\nexport const v = g;\n",
    });
    assert.equal(r.code, 1);
    assert.deepEqual(r.errors, [
      'src/client/v.ts:1 imports ../server/index.js: src/client may not import src/server: the client bundles without server, config or cli',
      'src/http/b.ts:1 imports node:fs: src/http may not import node:fs: http is pure: no node: module and no other src folder',
      'src/http/b.ts:2 imports ../cache/c.js: src/http may not import src/cache: http is pure: no node: module and no other src folder',
      'src/server/static/c.ts:1 imports ../../config/s.js: src/server may not import src/config: config and cli sit above the server',
    ]);
  });

  it('a server file on no floor', () => {
    const r = checkWith({ 'src/server/misc/m.ts': 'export const m = 1;\n' });
    assert.equal(r.code, 1);
    assert.deepEqual(r.errors, [
      'src/server/misc/m.ts: on no floor of src/server: add its folder or file to FLOORS in scripts/check-layers.mjs',
    ]);
  });

  it('the ratchet: an allowed violation is counted, not reported; a stale allowance fails', () => {
    const up = { 'src/server/core/x.ts': "import { y } from '../static/y.js';\nexport const x = y;\n" };
    const allowed = (lines: string[]) => ({ 'scripts/layers-allowed.txt': `# known\n${lines.join('\n')}\n` });
    const ok = checkWith({ ...up, ...allowed(['src/server/core/x.ts -> src/server/static/y.ts']) });
    assert.deepEqual(ok.errors, []);
    assert.equal(ok.code, 0);
    assert.match(ok.stdout, /; 0 errors; allowed violations left 1 \(up 1\)\n$/);

    const stale = checkWith(allowed(['src/server/core/x.ts -> src/server/static/y.ts']));
    assert.equal(stale.code, 1);
    assert.deepEqual(stale.errors, [
      'scripts/layers-allowed.txt:2: stale allowance src/server/core/x.ts -> src/server/static/y.ts: that import is gone or allowed now: remove the line',
    ]);
  });

  it('--write-allowed writes the violations found, sorted, and the check passes on them', () => {
    const dir = tree({
      ...CLEAN,
      'src/server/core/x.ts': "import { y } from '../static/y.js';\nimport 'node:http';\n",
      'src/adapters/d.ts': "import { j } from '../server/core/j.js';\nexport const d = j;\n",
    });
    try {
      mkdirSync(join(dir, 'scripts'));
      const w = check(dir, '--write-allowed');
      assert.equal(w.code, 0, w.errors.join('\n'));
      const lines = readFileSync(join(dir, 'scripts/layers-allowed.txt'), 'utf8').split('\n');
      assert.deepEqual(
        lines.filter((l) => !l.startsWith('#')),
        [
          'src/adapters/d.ts -> src/server/core/j.ts',
          'src/server/core/x.ts -> node:http',
          'src/server/core/x.ts -> src/server/static/y.ts',
          '',
        ],
      );
      const r = check(dir);
      assert.deepEqual(r.errors, []);
      assert.equal(r.code, 0);
      assert.match(r.stdout, /allowed violations left 3 \(face 1, kernel 1, up 1\)\n$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an unknown argument: exit 2', () => {
    const r = checkWith({}, '--fix');
    assert.equal(r.code, 2);
    assert.match(r.errors[0]!, /^check-layers: unknown argument --fix/);
  });
});

describe('check-layers on this repository', () => {
  it('passes: no new violation, no stale allowance (scripts/layers-allowed.txt)', () => {
    const r = spawnSync(process.execPath, [SCRIPT], { encoding: 'utf8' });
    assert.equal(r.stderr, '');
    assert.equal(r.status, 0);
    assert.match(
      r.stdout,
      /^check-layers: \d+ files, \d+ imports checked; 0 errors; allowed violations left \d+/,
    );
  });
});

describe('findImports', () => {
  it('every form of import, and none in comments, strings, templates or regular expressions', () => {
    const src = [
      "import a, { b } from './a.js';", // 1
      'import type {', // 2
      '  C,',
      "} from './c.js';",
      "import * as d from 'node:fs';", // 5
      "export * from './e.js';",
      "export * as f from './f.js';",
      "export type { G } from './g.js';",
      "import './h.js';",
      "const i = await import('./i.js');", // 10
      "type J = typeof import('./j.js').J;",
      "// import k from './k.js';",
      "/* import l from './l.js'; */ const m = 'import n from \"./n.js\"';",
      `const o = \`import p from './p.js' \${\`\${import('./q.js')}\`}\`;`,
      "const r = /import s from '.\\/s.js'/; const t = 1 / 2; const u = x.import('./u.js');", // 15
      "export const v = { from: 'w' };",
      "import x from './x.js' with { type: 'json' };",
    ].join('\n');
    assert.deepEqual(
      findImports(src).map((i) => `${i.line} ${i.kind} ${i.specifier}`),
      [
        '1 import ./a.js',
        '2 import type ./c.js',
        '5 import node:fs',
        '6 export ./e.js',
        '7 export ./f.js',
        '8 export type ./g.js',
        '9 import ./h.js',
        '10 import() ./i.js',
        '11 import() ./j.js',
        '14 import() ./q.js',
        '17 import ./x.js',
      ],
    );
  });

  it("finds what TypeScript's parser finds in every file of src/", () => {
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(join(REPO, dir))) {
        const rel = `${dir}/${name}`;
        if (statSync(join(REPO, rel)).isDirectory()) walk(rel);
        else if (rel.endsWith('.ts')) files.push(rel);
      }
    };
    walk('src');
    let count = 0;
    for (const file of files) {
      const text = readFileSync(join(REPO, file), 'utf8');
      const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
      const parsed: string[] = [];
      const visit = (node: ts.Node): void => {
        let spec: string | undefined;
        if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier)
          spec = (node.moduleSpecifier as ts.StringLiteral).text;
        else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
          const arg = node.arguments[0];
          if (arg && ts.isStringLiteralLike(arg)) spec = arg.text;
        } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
          const lit = node.argument.literal;
          if (ts.isStringLiteral(lit)) spec = lit.text;
        }
        if (spec !== undefined) {
          const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
          parsed.push(`${line} ${spec}`);
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
      const found = findImports(text).map((i) => `${i.line} ${i.specifier}`);
      assert.deepEqual(found.sort(), parsed.sort(), file);
      count += found.length;
    }
    assert.ok(count > 500, `${count} imports in ${files.length} files`);
  });
});
