#!/usr/bin/env node
// The README and docs/ ship in the npm package; src/, test/, bench/, scripts/ and examples/ do not. A
// shipped page that names one of those paths in inline code links it to the repository instead, so the
// reader of the installed package can open it. This rewrites every such bare mention in place:
//   `test/security/x.test.ts`  ->  [`test/security/x.test.ts`](REPO/blob/main/test/security/x.test.ts)
// A folder (trailing /) or a glob links to the folder. Mentions already inside a link are left alone.
// test/cli/package.test.ts fails on any bare mention left.
//   node scripts/link-repo-paths.mjs [--check]
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const REPO = 'https://github.com/gatehouse-http/gatehouse';
const ROOT = join(import.meta.dirname, '..');
/** Inline code naming a repository-only path; not already the text of a link ([`...`](...)). */
export const BARE = /(?<!\[)`((?:src|test|bench|scripts|examples)\/[^`\s]*)`(?!\]\()/g;

/** The repository URL for a path: a file's blob, or the folder of a folder or a glob. */
export function repoUrl(path) {
  const star = path.search(/[*?{]/);
  if (star === -1 && !path.endsWith('/') && !isFolder(path)) return `${REPO}/blob/main/${path}`;
  const dir = star === -1 ? path : path.slice(0, path.lastIndexOf('/', star) + 1);
  return `${REPO}/tree/main/${dir.replace(/\/$/, '')}`;
}

/** A folder of this checkout (`examples/site`): linked as a tree, not a blob. */
function isFolder(path) {
  try {
    return statSync(join(ROOT, path)).isDirectory();
  } catch {
    return false;
  }
}

/** The markdown with every bare mention outside fenced code blocks linked. */
export function linkMentions(markdown) {
  return markdown
    .split(/(^```[\s\S]*?^```)/m)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(BARE, (_m, p) => `[\`${p}\`](${repoUrl(p)})`)))
    .join('');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const check = process.argv.includes('--check');
  const pages = [
    'README.md',
    ...readdirSync(join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  let changed = 0;
  for (const page of pages) {
    const path = join(ROOT, page);
    const before = readFileSync(path, 'utf8');
    const after = linkMentions(before);
    if (after === before) continue;
    changed++;
    if (check) console.error(`${page}: names repository-only paths without a link`);
    else writeFileSync(path, after);
  }
  if (check && changed > 0) process.exit(1);
  if (!check) console.log(`${changed} page(s) rewritten`);
}
