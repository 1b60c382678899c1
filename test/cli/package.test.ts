// The package as a user gets it (issue 12 §1): `npm pack` the built repo, install the tarball into a
// fresh app without the network, run both bins there, serve a real port, type-check an import with
// tsc, and audit the tarball's file list. Runs after `npm run build` (npm test builds first).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, posix } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { get } from '../helpers/http.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const PKG = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  bin: Record<string, string>;
  main: string;
  types: string;
  exports: Record<string, string | Record<string, string>>;
  dependencies: Record<string, string>;
  engines: Record<string, string>;
  license: string;
};
/** Packing and installing take seconds; a loaded shared machine may need many more. */
const SLOW_MS = 180_000;

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end (never throws on a non-zero exit); `timeoutMs` turns a hang into a failure. */
function run(cmd: string, args: string[], cwd: string, timeoutMs = SLOW_MS): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd,
      env: childEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: timeoutMs,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/**
 * The environment of a user's shell, not of our `npm test`: no npm_* variables from the running npm
 * (npm_config_local_prefix would make the child npm treat this repo as its project) except where
 * the npm cache and config live; no node_modules/.bin of this repo on PATH. `offline` makes every
 * npm and npx call answer from the npm cache or fail (ENOTCACHED): this test never reaches the network.
 */
function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^npm_/i.test(k) && !/^npm_config_(cache|userconfig|globalconfig)$/i.test(k)) continue;
    env[k] = v;
  }
  env.PATH = (process.env.PATH ?? '')
    .split(delimiter)
    .filter((p) => !p.startsWith(REPO))
    .join(delimiter);
  Object.assign(env, {
    npm_config_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
    // npx never installs a missing package (it would be npm's unrelated `gatehouse`).
    npm_config_yes: 'false',
  });
  return env;
}

/** npm and npx as the npm running this test has them (npm test sets npm_execpath), else from PATH. */
function tool(name: 'npm' | 'npx'): [string, string[]] {
  const npmCli = process.env.npm_execpath;
  if (npmCli && /npm-cli\.js$/.test(npmCli))
    return [process.execPath, [join(dirname(npmCli), `${name}-cli.js`)]];
  return [name, []];
}

function npm(name: 'npm' | 'npx', args: string[], cwd: string): Promise<Run> {
  const [cmd, pre] = tool(name);
  return run(cmd, [...pre, ...args], cwd);
}

/** What a published file list must not hold, one line per problem (empty: clean). `readText` reads a
 *  file of the list (for source maps, whose every `sources` entry must be in the list too). */
function tarballProblems(paths: readonly string[], readText: (path: string) => string): string[] {
  const problems: string[] = [];
  const shipped = new Set(paths);
  const topLevel = new Set(['package.json', 'README.md', 'LICENSE', 'schema.json']);
  for (const p of paths) {
    const base = posix.basename(p);
    if (!topLevel.has(p) && !/^(dist|bin)\//.test(p))
      problems.push(`${p}: not dist/, bin/ or a top-level doc`);
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
    ['dist, bin and the top-level docs: clean', { 'dist/a.js': '', 'bin/x.js': '', LICENSE: '' }, []],
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

describe(`the package as a user gets it (npm pack, then an offline install into a fresh app)`, () => {
  const tmp = mkdtempSync(join(tmpdir(), 'gatehouse-package-'));
  const app = join(tmp, 'app');
  let tarball = '';
  let files: string[] = [];
  /** The install's command and literal output, for the closing note (the first test prints it). */
  const installTranscript: string[] = [];

  before(
    async () => {
      assert.ok(existsSync(join(REPO, 'dist/index.js')), 'dist/ is missing: run npm run build first');
      // --ignore-scripts: `prepare` would rebuild dist/ while the other test files run its CLI, and
      // npm test has just built it.
      const packed = await npm(
        'npm',
        ['pack', '--ignore-scripts', '--json', '--pack-destination', tmp],
        REPO,
      );
      assert.equal(packed.status, 0, packed.stderr);
      const [info] = JSON.parse(packed.stdout) as { filename: string }[];
      tarball = join(tmp, info!.filename);

      const listed = await run('tar', ['-tzf', tarball], tmp);
      assert.equal(listed.status, 0, listed.stderr);
      files = listed.stdout
        .split('\n')
        .filter(Boolean)
        .map((p) => p.replace(/^package\//, ''));
      mkdirSync(join(tmp, 'unpacked'));
      const unpacked = await run('tar', ['-xzf', tarball, '-C', join(tmp, 'unpacked')], tmp);
      assert.equal(unpacked.status, 0, unpacked.stderr);

      mkdirSync(join(app, 'site'), { recursive: true });
      writeFileSync(join(app, 'site/hello.txt'), 'hello from the package\n');
      writeAppWithLock(app, `file:../${info!.filename}`);
      const installed = await npm('npm', ['ci', '--offline'], app);
      installTranscript.push(
        `$ npm ci --offline   # package.json: "gatehouse-http": "file:../${info!.filename}"`,
      );
      installTranscript.push((installed.stdout + installed.stderr).trim(), `(exit ${installed.status})`);
      assert.equal(
        installed.status,
        0,
        `offline install failed (the npm cache needs the tarballs that npm ci fetched):\n${installed.stderr}`,
      );
    },
    { timeout: SLOW_MS },
  );

  after(() => rmSync(tmp, { recursive: true, force: true }));

  test('holds only dist/, bin/ and the docs: no tests, no maps without their sources, no secrets, no node_modules', (t) => {
    t.diagnostic(`in the fresh app:\n${installTranscript.join('\n')}`);
    const problems = tarballProblems(files, (p) => readFileSync(join(tmp, 'unpacked/package', p), 'utf8'));
    assert.deepEqual(problems, []);
    // Every entry point package.json names is in it.
    const targets = [
      ...Object.values(PKG.bin),
      PKG.main,
      PKG.types,
      ...Object.values(PKG.exports).flatMap((e) => (typeof e === 'string' ? [e] : Object.values(e))),
    ].map((p) => posix.normalize(p));
    for (const p of targets) assert.ok(files.includes(p), `${p} is named in package.json but not packed`);
    for (const p of ['README.md', 'LICENSE', 'package.json']) assert.ok(files.includes(p), `${p} not packed`);
    t.diagnostic(
      `tarball ${posix.basename(tarball)}: ${statSync(tarball).size} bytes, ${files.length} files`,
    );
  });

  test('npx gatehouse --version and npx gatehouse-http --version print the version', {
    timeout: SLOW_MS,
  }, async (t) => {
    for (const bin of ['gatehouse', 'gatehouse-http']) {
      const r = await npm('npx', [bin, '--version'], app);
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
    const child = spawn(process.execPath, [join(app, 'node_modules/.bin/gatehouse'), ...args], {
      cwd: app,
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
      assert.equal(r.text, 'hello from the package\n');
      child.kill('SIGTERM');
      assert.equal(await exited, 0, err);
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
  });

  test('importing createServer from gatehouse-http type-checks with tsc; a wrong use does not', {
    timeout: SLOW_MS,
  }, async (t) => {
    writeFileSync(
      join(app, 'ok.ts'),
      `import { createServer, type Gatehouse, type GatehouseConfigInput } from 'gatehouse-http';

const config: GatehouseConfigInput = { root: 'site', static: { spa: true }, listen: { port: 0 } };
const app: Gatehouse = createServer(config);
const { url }: { url: string } = await app.listen();
console.log(url);
await app.close();
`,
    );
    writeFileSync(
      join(app, 'wrong.ts'),
      `import { createServer } from 'gatehouse-http';\n\ncreateServer(8080);\n`,
    );
    const compilerOptions = {
      module: 'nodenext',
      moduleResolution: 'nodenext',
      target: 'es2022',
      strict: true,
      noEmit: true,
      // Our declarations are checked too: a type they import from a package the user does not get
      // (a devDependency) fails here, as it does for a user without skipLibCheck.
      skipLibCheck: false,
      types: ['node'],
    };
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({ compilerOptions, files: ['ok.ts', 'wrong.ts'] }),
    );
    // One run (tsc takes seconds): every diagnostic is reported, so ok.ts type-checks when none names it.
    const r = await run(
      process.execPath,
      [join(REPO, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'],
      app,
    );
    t.diagnostic(
      `$ tsc -p tsconfig.json   # ok.ts, and wrong.ts: createServer(8080)\n${r.stdout.trim()}\n(exit ${r.status})`,
    );
    const errors = r.stdout.split('\n').filter((l) => /error TS\d+/.test(l));
    // Only the wrong argument fails: TS2559 (a number has nothing in common with the all-optional
    // config type), not a missing module or missing types (TS2307, TS7016) nor anything in ok.ts.
    assert.equal(errors.length, 1, r.stdout + r.stderr);
    assert.match(errors[0]!, /^wrong\.ts\(3,14\): error TS(2559|2345): Type '8080' /);
    assert.equal(r.status, 2);
  });

  test('the library imports at runtime and the README $schema path exists', {
    timeout: SLOW_MS,
  }, async (t) => {
    writeFileSync(
      join(app, 'check.mjs'),
      `import { createServer } from 'gatehouse-http';
import schema from 'gatehouse-http/schema.json' with { type: 'json' };
const app = createServer({ root: 'site', log: { format: 'off' }, listen: { host: '127.0.0.1', port: 0 } });
const { url } = await app.listen();
const res = await fetch(url + '/hello.txt');
console.log(res.status, schema.$id);
await app.close();
`,
    );
    const r = await run(process.execPath, ['check.mjs'], app);
    t.diagnostic(`$ node check.mjs\n${r.stdout.trim()}\n(exit ${r.status})`);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, '200 https://unpkg.com/gatehouse-http/schema.json\n');
    assert.ok(existsSync(join(app, 'node_modules/gatehouse-http/schema.json')));
  });
});

/**
 * The fresh app: `"type": "module"`, the tarball as its one dependency, and a lockfile whose other
 * entries are this repo's locked production packages, copied as they are. `npm ci` then asks the
 * npm cache for exactly what this repo's own `npm ci` fetched (same names, versions, integrity), so
 * it works offline on a clean clone; resolving ranges afresh would need registry metadata (packuments)
 * that `npm ci` never fetches, and versions newer than the cache holds. The app thus gets the
 * dependency versions this repo tests with.
 */
function writeAppWithLock(dir: string, spec: string): void {
  const manifest = {
    name: 'app',
    version: '1.0.0',
    private: true,
    type: 'module',
    dependencies: { [PKG.name]: spec },
  };
  const repoLock = JSON.parse(readFileSync(join(REPO, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dev?: boolean; devOptional?: boolean }>;
  };
  const packages: Record<string, unknown> = {
    '': { name: manifest.name, version: manifest.version, dependencies: manifest.dependencies },
    [`node_modules/${PKG.name}`]: {
      version: PKG.version,
      resolved: spec,
      license: PKG.license,
      dependencies: PKG.dependencies,
      bin: PKG.bin,
      engines: PKG.engines,
    },
  };
  for (const [path, entry] of Object.entries(repoLock.packages)) {
    if (path !== '' && !entry.dev && !entry.devOptional) packages[path] = entry;
  }
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  writeFileSync(
    join(dir, 'package-lock.json'),
    `${JSON.stringify({ name: manifest.name, version: manifest.version, lockfileVersion: 3, requires: true, packages }, null, 2)}\n`,
  );
}
