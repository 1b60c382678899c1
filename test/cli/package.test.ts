// The package as a user gets it (issue 12 §1): `npm pack` the built repo, install the tarball into a
// fresh app without the network (test/helpers/package.ts), run both bins there, serve a real port,
// import the library, and audit the tarball's file list and the links of its docs (issue 26 §3: every
// relative link and #anchor of README.md and docs/*.md resolves inside the tarball). The tsc check is
// package-types.test.ts.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { get } from '../helpers/http.js';
import {
  childEnv,
  HELLO,
  npm,
  type PackedApp,
  PKG,
  packAndInstall,
  run,
  SLOW_MS,
} from '../helpers/package.js';

/** What a published file list must not hold, one line per problem (empty: clean). `readText` reads a
 *  file of the list (for source maps, whose every `sources` entry must be in the list too). */
function tarballProblems(paths: readonly string[], readText: (path: string) => string): string[] {
  const problems: string[] = [];
  const shipped = new Set(paths);
  const topLevel = new Set(['package.json', 'README.md', 'LICENSE', 'schema.json']);
  for (const p of paths) {
    const base = posix.basename(p);
    if (!topLevel.has(p) && !/^(dist|bin)\//.test(p) && !/^docs\/[^/]+\.md$/.test(p))
      problems.push(`${p}: not dist/, bin/, docs/*.md or a top-level doc`);
    if (/(^|\/)(test|tests|__tests__)\//.test(p) || /\.(test|spec)\.[cm]?[jt]sx?$/.test(p))
      problems.push(`${p}: a test`);
    if (/(^|\/)node_modules\//.test(p)) problems.push(`${p}: node_modules`);
    if (/^\.env(\.|$)/.test(base) || /\.(pem|key|p12|pfx)$/.test(base) || base === '.npmrc')
      problems.push(`${p}: a secret-like file`);
    if (p.endsWith('.map')) {
      const map = JSON.parse(readText(p)) as { sources?: string[]; sourceRoot?: string };
      for (const s of map.sources ?? []) {
        const target = posix.normalize(posix.join(posix.dirname(p), map.sourceRoot ?? '', s));
        if (!shipped.has(target)) problems.push(`${p}: source ${s} (${target}) is not in the package`);
      }
    }
  }
  return problems;
}

describe('tarballProblems: the file-list audit can fail', () => {
  const map = (sources: string[]) => JSON.stringify({ version: 3, sources, mappings: '' });
  const cases: [string, Record<string, string>, RegExp[]][] = [
    [
      'dist, bin, docs and the top-level docs: clean',
      { 'dist/a.js': '', 'bin/x.js': '', LICENSE: '', 'docs/a.md': '' },
      [],
    ],
    ['a nested docs folder', { 'docs/x/a.md': '' }, [/docs\/x\/a\.md: not dist/]],
    ['a test folder', { 'test/a.ts': '' }, [/test\/a\.ts: not dist/, /test\/a\.ts: a test/]],
    ['a compiled test inside dist', { 'dist/a.test.js': '' }, [/dist\/a\.test\.js: a test/]],
    ['a source map whose source is not shipped', { 'dist/a.js.map': map(['../src/a.ts']) }, [/src\/a\.ts/]],
    ['a source map whose source is shipped', { 'dist/a.js.map': map(['a.ts']), 'dist/a.ts': '' }, []],
    ['an .env file', { 'dist/.env.local': '' }, [/a secret-like file/]],
    ['a private key', { 'dist/server.key': '' }, [/a secret-like file/]],
    ['an .npmrc', { '.npmrc': '' }, [/not dist/, /a secret-like file/]],
    ['node_modules inside dist', { 'dist/node_modules/x/index.js': '' }, [/node_modules/]],
  ];
  for (const [name, files, expected] of cases) {
    test(name, () => {
      const problems = tarballProblems(Object.keys(files), (p) => files[p] ?? '');
      assert.equal(problems.length, expected.length, problems.join('\n'));
      for (const [i, re] of expected.entries()) assert.match(problems[i] ?? '', re);
    });
  }
});

/** GitHub's anchor of a heading: lowercase, punctuation dropped (backticks, dots, parentheses...),
 *  each space a hyphen; a repeated heading gets -1, -2... */
function anchors(markdown: string): Set<string> {
  const out = new Set<string>();
  const seen = new Map<string, number>();
  for (const m of markdown.replace(/^```[\s\S]*?^```/gm, '').matchAll(/^#{1,6} +(.+?) *#* *$/gm)) {
    const slug = m[1]!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

/** The text without fenced code blocks and inline code spans (their brackets are not links). */
const withoutCode = (markdown: string): string =>
  markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');

/** Every relative link of the shipped README.md and docs/*.md that does not resolve to a shipped file
 *  (or, with a #fragment, to a heading of it), one line per broken link (empty: all resolve). */
function linkProblems(paths: readonly string[], readText: (path: string) => string): string[] {
  const problems: string[] = [];
  const shipped = new Set(paths);
  const docs = paths.filter((p) => p === 'README.md' || /^docs\/[^/]+\.md$/.test(p));
  for (const doc of docs) {
    for (const m of withoutCode(readText(doc)).matchAll(/\]\(([^)\s]+)(?: "[^"]*")?\)/g)) {
      const link = m[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // https:, mailto: ...
      const [file = '', fragment] = link.split('#');
      const target = file === '' ? doc : posix.normalize(posix.join(posix.dirname(doc), file));
      const dir = target.endsWith('/') ? target : `${target}/`;
      if (!shipped.has(target) && !paths.some((p) => p.startsWith(dir))) {
        problems.push(`${doc}: ${link}: ${target} is not in the package`);
        continue;
      }
      if (fragment !== undefined && target.endsWith('.md') && !anchors(readText(target)).has(fragment))
        problems.push(`${doc}: ${link}: ${target} has no heading #${fragment}`);
    }
  }
  return problems;
}

describe('linkProblems: the docs link check can fail', () => {
  const cases: [string, Record<string, string>, RegExp[]][] = [
    [
      'links to shipped files and their headings: clean',
      {
        'README.md':
          '# Top\n[a](docs/a.md) [b](docs/a.md#the-b-section-v2) [c](#top) [d](https://x.example/)',
        'docs/a.md': '# Top\n## The `b` section (v2)\n[r](../README.md#top) [s](../dist/)',
        'dist/index.js': '',
      },
      [],
    ],
    ['a missing page', { 'README.md': '[a](docs/gone.md)' }, [/docs\/gone\.md is not in the package/]],
    [
      'a file outside the package',
      { 'docs/a.md': '[c](../CONTRIBUTING.md)' },
      [/CONTRIBUTING\.md is not in the package/],
    ],
    ['a missing anchor', { 'README.md': '# One\n[x](#two)' }, [/has no heading #two/]],
    ['a link inside a code block is not checked', { 'README.md': '```\n[x](gone.md)\n```\n`[y](z.md)`' }, []],
  ];
  for (const [name, files, expected] of cases) {
    test(name, () => {
      const problems = linkProblems(Object.keys(files), (p) => files[p] ?? '');
      assert.equal(problems.length, expected.length, problems.join('\n'));
      for (const [i, re] of expected.entries()) assert.match(problems[i] ?? '', re);
    });
  }
});

describe('the package as a user gets it (npm pack, then an offline install into a fresh app)', () => {
  let packed: PackedApp;
  before(
    async () => {
      packed = await packAndInstall();
    },
    { timeout: SLOW_MS },
  );
  after(() => packed?.remove());

  test('holds only dist/, bin/ and the docs: no tests, no maps without their sources, no secrets, no node_modules', (t) => {
    t.diagnostic(`in the fresh app:\n${packed.transcript}`);
    const { files, tarball, tmp } = packed;
    const problems = tarballProblems(files, (f) => readFileSync(join(tmp, 'unpacked/package', f), 'utf8'));
    assert.deepEqual(problems, []);
    // Every entry point package.json names is in it.
    const targets = [
      ...Object.values(PKG.bin),
      PKG.main,
      PKG.types,
      ...Object.values(PKG.exports).flatMap((e) => (typeof e === 'string' ? [e] : Object.values(e))),
    ].map((f) => posix.normalize(f));
    for (const f of targets) assert.ok(files.includes(f), `${f} is named in package.json but not packed`);
    for (const f of ['README.md', 'LICENSE', 'package.json', 'docs/configuration.md', 'docs/deploy.md'])
      assert.ok(files.includes(f), `${f} not packed`);
    // The build runs in prepack: a `prepare` script in an installed tarball makes npm 11 warn.
    const packedPkg = JSON.parse(readFileSync(join(tmp, 'unpacked/package/package.json'), 'utf8')) as {
      scripts?: Record<string, string>;
    };
    assert.equal(packedPkg.scripts?.prepare, undefined, 'no prepare script in the tarball');
    assert.equal(packedPkg.scripts?.prepack, 'npm run build');
    for (const f of ['dist/index.js', 'dist/cli/main.js', 'dist/index.d.ts'])
      assert.ok(files.includes(f), `${f} not packed`);
    t.diagnostic(
      `tarball ${posix.basename(tarball)}: ${statSync(tarball).size} bytes, ${files.length} files`,
    );
  });

  test('every relative link and #anchor of README.md and docs/*.md resolves inside the tarball', () => {
    const { files, tmp } = packed;
    const read = (f: string) => readFileSync(join(tmp, 'unpacked/package', f), 'utf8');
    assert.ok(files.filter((f) => f.startsWith('docs/')).length >= 10, 'docs/ is packed');
    assert.deepEqual(linkProblems(files, read), []);
  });

  test('npx gatehouse --version and npx gatehouse-http --version print the version', {
    timeout: SLOW_MS,
  }, async (t) => {
    for (const bin of ['gatehouse', 'gatehouse-http']) {
      const r = await npm('npx', [bin, '--version'], packed.app);
      t.diagnostic(`$ npx ${bin} --version\n${(r.stdout + r.stderr).trim()}\n(exit ${r.status})`);
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stdout, `${PKG.version}\n`);
    }
  });

  test('the installed gatehouse serve answers a real GET on 127.0.0.1, then exits 0 on SIGTERM', {
    timeout: SLOW_MS,
  }, async (t) => {
    const args = ['serve', 'site', '--port', '0', '--host', '127.0.0.1', '--log', 'off'];
    // The .bin link npm made, run by this node so that the signal reaches the server itself.
    const child = spawn(process.execPath, [join(packed.app, 'node_modules/.bin/gatehouse'), ...args], {
      cwd: packed.app,
      env: childEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    let out = '';
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (d) => {
          out += d;
          const m = /listening on (http:\/\/\S+)\n/.exec(out);
          if (m) resolve(m[1]!);
        });
        child.on('exit', (code) => reject(new Error(`gatehouse exited ${code} before listening: ${err}`)));
      });
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
      const r = await get(url, '/hello.txt');
      t.diagnostic(
        `$ gatehouse ${args.join(' ')}\n${out.trim()}\n$ GET ${url}/hello.txt -> ${r.status} ${JSON.stringify(r.text)}`,
      );
      assert.equal(r.status, 200);
      assert.equal(r.text, HELLO);
      child.kill('SIGTERM');
      assert.equal(await exited, 0, err);
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
  });

  test('the library and gatehouse-http/client import at runtime and the README $schema path exists', {
    timeout: SLOW_MS,
  }, async (t) => {
    writeFileSync(
      join(packed.app, 'check.mjs'),
      `import { checkUrl, createServer } from 'gatehouse-http';
import schema from 'gatehouse-http/schema.json' with { type: 'json' };
import { onMessageFrom, ReconnectingWebSocket } from 'gatehouse-http/client';
if (typeof ReconnectingWebSocket !== 'function' || typeof onMessageFrom !== 'function') process.exit(3);
const app = createServer({ root: 'site', log: { format: 'off' }, listen: { host: '127.0.0.1', port: 0 } });
const { url } = await app.listen();
const res = await fetch(url + '/hello.txt');
const report = await checkUrl(url + '/hello.txt', { repeatDelayMs: 0 });
const told = report.findings.some((f) => f.id === 'protocol.http-version');
console.log(res.status, schema.$id, report.finalUrl === url + '/hello.txt' && told);
await app.close();
`,
    );
    const r = await run(process.execPath, ['check.mjs'], packed.app);
    t.diagnostic(`$ node check.mjs\n${r.stdout.trim()}\n(exit ${r.status})`);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, '200 https://unpkg.com/gatehouse-http/schema.json true\n');
    assert.ok(existsSync(join(packed.app, 'node_modules/gatehouse-http/schema.json')));
  });
});
