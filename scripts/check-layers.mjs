#!/usr/bin/env node
// The layering of src/, checked over the import graph (the folders' names alone do not hold it); `npm run
// lint` runs it after madge.
// Inside src/server/ every file stands on a floor (FLOORS below; the longest matching prefix wins). An
// import may go down a floor or stay in its own unit (the matched prefix); it may not run back up a floor,
// nor go sideways to another unit of the same floor (floor 1, the services, may use floor 1). The kernel
// (floor 0) imports only src/http/, src/cache/ and itself, and no node: HTTP, net or TLS module. Outside
// src/server/, the server is imported through src/server/index.ts only. Some top-level folders keep apart
// from others (APART). Type imports count: `import type`, `export ... from`, `import('...')` alike.
// Known violations are listed in scripts/layers-allowed.txt (`from -> to`, one per line): they are counted,
// not reported. A new one fails, and so does a line whose violation is gone, so the list only shrinks.
//   node scripts/check-layers.mjs [--root DIR] [--verbose] [--write-allowed]
//     --root DIR       check DIR/src with DIR/scripts/layers-allowed.txt (default: this repository)
//     --verbose        print the allowed violations too
//     --write-allowed  rewrite the allow file with every violation found now (it should only lose lines)
// Exit: 0 clean, 1 a new violation, a stale allowance or a file on no floor, 2 bad usage.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The floors of src/server/, lowest first: a path prefix under src/server/ -> its floor. */
const FLOORS = {
  'core/': 0, // the kernel: entry, pipeline, request context, errors, response fields
  'ops/log.ts': 1, // services
  'ops/pressure.ts': 1,
  'redis/': 1,
  'files/': 1,
  'node/types.ts': 1, // the kernel's types as the Node transport instantiates them, for the features
  'static/': 2, // features
  'proxy/': 2,
  'websocket/': 2,
  'routes/': 2,
  'steps/': 2,
  'ops/health.ts': 2,
  'ops/metrics': 2,
  'node/': 3, // the Node transport: node:http, Upgrade handling, pipelining, client errors
  'fetch/': 3, // the Fetch-API transport: Request in, Response out (Bun.serve, Deno.serve, workers)
  'tls/': 4, // HTTPS and HTTP/2 on the Node transport, ACME, session tickets
  'app/': 5, // the composition root
  'index.ts': 6, // the server's public face
};

/** What the kernel (floor 0) may import besides itself: these src/ folders, and no node: module below. */
const KERNEL_MAY = ['http', 'cache'];
const KERNEL_NOT_NODE = ['node:http', 'node:http2', 'node:https', 'node:net', 'node:tls'];

/** Top-level folders of src/ kept apart: `from` may not import `not` ('*': any other part of src/). */
const APART = [
  { from: 'server', not: ['cli', 'config'], why: 'config and cli sit above the server' },
  { from: 'http', not: ['*', 'node:'], why: 'http is pure: no node: module and no other src folder' },
  {
    from: 'client',
    not: ['server', 'cli', 'config'],
    why: 'the client bundles without server, config or cli',
  },
  {
    from: 'certs',
    not: ['server', 'cli', 'config', 'inspect'],
    why: 'certificate tooling sits below the server, inspect and cli',
  },
];

const ALLOWED_FILE = 'scripts/layers-allowed.txt';
const ALLOWED_HEADER = [
  '# Known layering violations (scripts/check-layers.mjs), `from -> to`, sorted. This list only shrinks:',
  '# fix an import and remove its line (a stale line fails npm run lint). Do not add lines.',
];
const NODE_BUILTINS = new Set(builtinModules);

// ---- Finding the imports ----

/** Words after which a `/` starts a regular expression rather than dividing. */
const BEFORE_EXPRESSION = new Set([
  'return',
  'typeof',
  'instanceof',
  'in',
  'of',
  'new',
  'delete',
  'void',
  'throw',
  'case',
  'do',
  'else',
  'yield',
  'await',
]);

/**
 * The source with comments blanked (newlines kept, so offsets and lines stay), and a mask marking the
 * characters inside string, template and regular expression literals: a match that starts there is not
 * an import. A small scanner, not a parser; test/cli/check-layers.test.ts compares what it finds with
 * TypeScript's parser over every file of src/.
 */
function scan(src) {
  const n = src.length;
  const code = src.split('');
  const literal = new Uint8Array(n);
  const blank = (from, to) => {
    for (let k = from; k < to; k++) if (code[k] !== '\n') code[k] = ' ';
  };
  const templates = []; // the brace depth at which each open `${` returns to its template
  let depth = 0;
  let regexOk = true;
  let i = 0;
  /** Reads template text from `start` (just after ` or the } of a ${...}) to its end or next ${. */
  const template = (start) => {
    let j = start;
    while (j < n) {
      if (src[j] === '\\') j += 2;
      else if (src[j] === '`') {
        literal.fill(1, start - 1, j + 1);
        regexOk = false;
        return j + 1;
      } else if (src[j] === '$' && src[j + 1] === '{') {
        literal.fill(1, start - 1, j + 2);
        templates.push(depth);
        regexOk = true;
        return j + 2;
      } else j++;
    }
    literal.fill(1, start - 1, n);
    return n;
  };
  while (i < n) {
    const c = src[i];
    if (c === '/' && src[i + 1] === '/') {
      const end = src.indexOf('\n', i);
      const e = end === -1 ? n : end;
      blank(i, e);
      i = e;
    } else if (c === '/' && src[i + 1] === '*') {
      const end = src.indexOf('*/', i + 2);
      const e = end === -1 ? n : end + 2;
      blank(i, e);
      i = e;
    } else if (c === "'" || c === '"') {
      let j = i + 1;
      while (j < n && src[j] !== c && src[j] !== '\n') j += src[j] === '\\' ? 2 : 1;
      literal.fill(1, i, j + 1);
      regexOk = false;
      i = j + 1;
    } else if (c === '`') {
      i = template(i + 1);
    } else if (c === '}' && templates.length > 0 && templates[templates.length - 1] === depth) {
      templates.pop();
      i = template(i + 1);
    } else if (c === '/' && regexOk) {
      let j = i + 1;
      let inClass = false;
      while (j < n && src[j] !== '\n' && (src[j] !== '/' || inClass)) {
        if (src[j] === '\\') j++;
        else if (src[j] === '[') inClass = true;
        else if (src[j] === ']') inClass = false;
        j++;
      }
      if (src[j] !== '/') {
        i++; // no closing slash on the line: a division after all
        continue;
      }
      j++;
      while (j < n && /[a-z]/.test(src[j])) j++;
      literal.fill(1, i, j);
      regexOk = false;
      i = j;
    } else if (/[\w$]/.test(c)) {
      let j = i + 1;
      while (j < n && /[\w$]/.test(src[j])) j++;
      regexOk = BEFORE_EXPRESSION.has(src.slice(i, j));
      i = j;
    } else {
      if (c === '{') depth++;
      else if (c === '}') depth--;
      if (!/\s/.test(c)) regexOk = !/[)\]}]/.test(c);
      i++;
    }
  }
  return { code: code.join(''), literal };
}

/** `import ... from '...'`, `import type ... from`, `export ... from`, `export * as x from`. */
const STATIC =
  /(?<![.\w$])(import|export)\s+(type\s+)?(?:[\w$]+\s*,?\s*)?(?:\*\s*as\s+[\w$]+\s*|\*\s*|\{[^{}]*\}\s*)?from\s*(['"])([^'"\n]*)\3/g;
/** `import '...'` (for its effects). */
const BARE = /(?<![.\w$])import\s*(['"])([^'"\n]*)\1/g;
/** `import('...')`, also as a type: `typeof import('...')`, `import('...').Name`. */
const DYNAMIC = /(?<![.\w$])import\s*\(\s*(['"])([^'"\n]*)\1\s*[,)]/g;

/** Every import of a module's source: [{ line (1-based), specifier, kind }], in source order. */
export function findImports(src) {
  const { code, literal } = scan(src);
  const lineStarts = [0];
  for (let k = 0; k < src.length; k++) if (src[k] === '\n') lineStarts.push(k + 1);
  const lineAt = (offset) => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
  const found = [];
  const add = (m, specifier, kind) => {
    if (literal[m.index] === 0) found.push({ offset: m.index, line: lineAt(m.index), specifier, kind });
  };
  for (const m of code.matchAll(STATIC)) add(m, m[4], m[2] ? `${m[1]} type` : m[1]);
  for (const m of code.matchAll(BARE)) add(m, m[2], 'import');
  for (const m of code.matchAll(DYNAMIC)) add(m, m[2], 'import()');
  return found
    .sort((a, b) => a.offset - b.offset)
    .map(({ line, specifier, kind }) => ({ line, specifier, kind }));
}

// ---- Placing files and imports ----

/** The floor entry of a path under src/server/ (longest prefix wins), or undefined. */
function floorOf(inServer) {
  let best;
  for (const [prefix, floor] of Object.entries(FLOORS)) {
    if (inServer.startsWith(prefix) && (best === undefined || prefix.length > best.prefix.length))
      best = { prefix, floor, unit: prefix.replace(/\/$/, '') };
  }
  return best;
}

/** Where an import leads: a node: module, a package, or a repository-relative path (src/... resolved). */
function resolveImport(root, fromFile, specifier) {
  if (specifier.startsWith('node:')) return { node: specifier };
  const base = specifier.split('/')[0];
  if (NODE_BUILTINS.has(specifier) || NODE_BUILTINS.has(base)) return { node: `node:${specifier}` };
  if (!specifier.startsWith('.')) return { pkg: specifier };
  const path = posix.normalize(posix.join(posix.dirname(fromFile), specifier));
  const stem = path.replace(/\.(m|c)?jsx?$/, '');
  const ext = path.match(/\.(m|c)?jsx?$/)?.[1] ?? '';
  const candidates = [`${stem}.${ext}ts`, `${stem}.${ext}tsx`, path, `${path}.ts`, `${path}/index.ts`];
  return { file: candidates.find((c) => existsSync(join(root, c))) ?? candidates[0] };
}

/** The top-level part of src/ a path is in ('server', 'http', 'index.ts' ...), or undefined outside src/. */
function topOf(file) {
  return file.startsWith('src/') ? file.slice(4).split('/')[0] : undefined;
}

const floorText = (place) => `${place.unit} (floor ${place.floor})`;

/** The violation of one import, or undefined: { rule, to, reason }. */
function judge(fromFile, target) {
  const fromTop = topOf(fromFile);
  const to = target.node ?? target.pkg ?? target.file;
  const toTop = target.file ? topOf(target.file) : undefined;
  if (fromTop === 'server') {
    const from = floorOf(fromFile.slice('src/server/'.length));
    const dest = toTop === 'server' ? floorOf(target.file.slice('src/server/'.length)) : undefined;
    if (from && dest && from.unit !== dest.unit) {
      if (dest.floor > from.floor)
        return {
          rule: 'up',
          to,
          reason: `${floorText(from)} may not import ${floorText(dest)}: an import runs back up`,
        };
      if (dest.floor === from.floor && from.floor !== 1)
        return {
          rule: 'sideways',
          to,
          reason: `${floorText(from)} may not import ${floorText(dest)}: sideways on one floor (move the shared part down)`,
        };
    }
    if (from?.floor === 0) {
      if (target.node && KERNEL_NOT_NODE.includes(target.node))
        return {
          rule: 'kernel',
          to,
          reason: `the kernel (${from.unit}) may not import ${target.node}: it stays transport-neutral (a transport brings it)`,
        };
      if (target.file && toTop !== 'server' && !KERNEL_MAY.includes(toTop))
        return {
          rule: 'kernel',
          to,
          reason: `the kernel (${from.unit}) imports only src/http, src/cache and itself, not ${to}`,
        };
    }
  }
  for (const { from, not, why } of APART) {
    if (fromTop !== from) continue;
    const hit = target.node
      ? not.includes('node:')
      : toTop !== undefined && toTop !== from && (not.includes('*') || not.includes(toTop));
    if (hit)
      return {
        rule: `apart:${from}`,
        to,
        reason: `src/${from} may not import ${target.node ?? `src/${toTop}`}: ${why}`,
      };
  }
  if (fromTop !== 'server' && toTop === 'server' && target.file !== 'src/server/index.ts')
    return {
      rule: 'face',
      to,
      reason: `outside src/server, import src/server/index.ts only: ${to} is past the server's public face`,
    };
  return undefined;
}

// ---- The run ----

function sourceFiles(root, dir, out) {
  const abs = join(root, dir);
  if (!existsSync(abs)) return out;
  for (const entry of readdirSync(abs, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) sourceFiles(root, rel, out);
    else if (/\.(m|c)?tsx?$/.test(entry.name)) out.push(rel);
  }
  return out;
}

/** Checks the tree at `root`: { files, imports, unplaced, violations: Map(key -> violation) }. */
function checkLayers(root) {
  const files = sourceFiles(root, 'src', []);
  const unplaced = [];
  const violations = new Map();
  let imports = 0;
  for (const file of files) {
    if (file.startsWith('src/server/') && !floorOf(file.slice('src/server/'.length))) unplaced.push(file);
    for (const imp of findImports(readFileSync(join(root, file), 'utf8'))) {
      imports++;
      const v = judge(file, resolveImport(root, file, imp.specifier));
      const key = v && `${file} -> ${v.to}`;
      if (v && !violations.has(key))
        violations.set(key, { ...v, file, line: imp.line, specifier: imp.specifier });
    }
  }
  return { files: files.length, imports, unplaced, violations };
}

/** The allow file's pairs with their line numbers (comments and blank lines skipped). */
function readAllowed(root) {
  const path = join(root, ALLOWED_FILE);
  const pairs = new Map();
  if (!existsSync(path)) return pairs;
  readFileSync(path, 'utf8')
    .split('\n')
    .forEach((text, i) => {
      const line = text.trim();
      if (line !== '' && !line.startsWith('#') && !pairs.has(line)) pairs.set(line, i + 1);
    });
  return pairs;
}

function byRule(violations) {
  const counts = {};
  for (const v of violations) counts[v.rule] = (counts[v.rule] ?? 0) + 1;
  return Object.entries(counts)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([rule, n]) => `${rule} ${n}`)
    .join(', ');
}

function main(args) {
  let root = fileURLToPath(new URL('..', import.meta.url));
  let write = false;
  let verbose = false;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--root') {
      if (!args[i + 1]) {
        console.error('check-layers: --root needs a folder');
        return 2;
      }
      root = args[++i];
    } else if (args[i] === '--write-allowed') write = true;
    else if (args[i] === '--verbose') verbose = true;
    else {
      console.error(
        `check-layers: unknown argument ${args[i]} (usage: [--root DIR] [--verbose] [--write-allowed])`,
      );
      return 2;
    }
  }
  const { files, imports, unplaced, violations } = checkLayers(root);
  const allowed = readAllowed(root);
  const errors = unplaced.map(
    (f) => `${f}: on no floor of src/server: add its folder or file to FLOORS in scripts/check-layers.mjs`,
  );
  if (write) {
    const keys = [...violations.keys()].sort();
    writeFileSync(join(root, ALLOWED_FILE), [...ALLOWED_HEADER, ...keys, ''].join('\n'));
    const added = keys.filter((k) => !allowed.has(k)).length;
    const gone = [...allowed.keys()].filter((k) => !violations.has(k)).length;
    console.log(
      `check-layers: wrote ${ALLOWED_FILE}: ${keys.length} pairs (${added} added, ${gone} removed)`,
    );
  } else {
    for (const [key, v] of violations) {
      const text = `${v.file}:${v.line} imports ${v.specifier}: ${v.reason}`;
      if (!allowed.has(key)) errors.push(text);
      else if (verbose) console.log(`allowed: ${text}`);
    }
    for (const [pair, line] of allowed)
      if (!violations.has(pair))
        errors.push(
          `${ALLOWED_FILE}:${line}: stale allowance ${pair}: that import is gone or allowed now: remove the line`,
        );
  }
  for (const e of errors) console.error(e);
  const left = [...violations].filter(([k]) => allowed.has(k) || write).map(([, v]) => v);
  console.log(
    `check-layers: ${files} files, ${imports} imports checked; ${errors.length} errors; ` +
      `allowed violations left ${left.length}${left.length ? ` (${byRule(left)})` : ''}`,
  );
  return errors.length > 0 ? 1 : 0;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = main(process.argv.slice(2));
