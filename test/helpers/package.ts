// The package as a user gets it, shared by test/cli/package*.test.ts: `npm pack` this repo (built),
// then `npm ci --offline` of the tarball into a fresh app in a temp folder. Nothing is fetched.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));
export const PKG = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
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
/**
 * Packing, installing and tsc take seconds, more on a loaded machine. (On Node 20 the runner's
 * --test-timeout, 60 s, also bounds each whole file: hence the tsc check has a file of its own.)
 */
export const SLOW_MS = 120_000;

export interface PackedApp {
  /** The temp folder: the tarball, unpacked/package/ (its files), app/. */
  tmp: string;
  /** The fresh app, with site/hello.txt to serve. */
  app: string;
  tarball: string;
  /** The tarball's paths, `package/` stripped. */
  files: string[];
  /** The install command and its literal output, for the closing note. */
  transcript: string;
  remove(): void;
}

export const HELLO = 'hello from the package\n';

/** Packs this repo and installs the tarball into a fresh `"type": "module"` app, offline. */
export async function packAndInstall(): Promise<PackedApp> {
  assert.ok(existsSync(join(REPO, 'dist/index.js')), 'dist/ is missing: run npm run build first');
  const tmp = mkdtempSync(join(tmpdir(), 'gatehouse-package-'));
  const remove = () => rmSync(tmp, { recursive: true, force: true });
  try {
    // --ignore-scripts: `prepack` would rebuild dist/ while other test files run its CLI, and
    // npm test has just built it.
    const packed = await npm('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', tmp], REPO);
    assert.equal(packed.status, 0, packed.stderr);
    const [info] = JSON.parse(packed.stdout) as { filename: string }[];
    const tarball = join(tmp, info!.filename);

    const listed = await run('tar', ['-tzf', tarball], tmp);
    assert.equal(listed.status, 0, listed.stderr);
    const files = listed.stdout
      .split('\n')
      .filter(Boolean)
      .map((p) => p.replace(/^package\//, ''));
    mkdirSync(join(tmp, 'unpacked'));
    const unpacked = await run('tar', ['-xzf', tarball, '-C', join(tmp, 'unpacked')], tmp);
    assert.equal(unpacked.status, 0, unpacked.stderr);

    const app = join(tmp, 'app');
    mkdirSync(join(app, 'site'), { recursive: true });
    writeFileSync(join(app, 'site/hello.txt'), HELLO);
    writeAppWithLock(app, `file:../${info!.filename}`);
    const installed = await npm('npm', ['ci', '--offline'], app);
    const transcript = `$ npm ci --offline   # package.json: "${PKG.name}": "file:../${info!.filename}"\n${(installed.stdout + installed.stderr).trim()}\n(exit ${installed.status})`;
    assert.equal(
      installed.status,
      0,
      `offline install failed (the npm cache needs the tarballs that npm ci fetched):\n${installed.stderr}`,
    );
    return { tmp, app, tarball, files, transcript, remove };
  } catch (err) {
    remove();
    throw err;
  }
}

export interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end (never throws on a non-zero exit); `timeoutMs` turns a hang into a failure. */
export function run(cmd: string, args: string[], cwd: string, timeoutMs = SLOW_MS): Promise<Run> {
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
export function childEnv(): NodeJS.ProcessEnv {
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

export function npm(name: 'npm' | 'npx', args: string[], cwd: string): Promise<Run> {
  const [cmd, pre] = tool(name);
  return run(cmd, [...pre, ...args], cwd);
}

type LockEntry = { dev?: boolean; devOptional?: boolean; dependencies?: Record<string, string> };

/**
 * The fresh app: `"type": "module"`, the tarball as its dependency, `@types/node` as its
 * devDependency (a TypeScript user of a Node library has it; ours may not bring it), and a lockfile
 * whose other entries are this repo's locked packages for those, copied as they are. `npm ci` then
 * asks the npm cache for exactly what this repo's own `npm ci` fetched (same names, versions,
 * integrity), so it works offline on a clean clone. (Resolving ranges afresh, as `npm install` does,
 * needs registry metadata that `npm ci` may not have cached, and may pick versions newer than the
 * cache holds.) The app thus gets the dependency versions this repo tests with.
 */
function writeAppWithLock(dir: string, spec: string): void {
  const repoLock = JSON.parse(readFileSync(join(REPO, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry & { devDependencies?: Record<string, string> }>;
  };
  const typesNode = repoLock.packages['']?.devDependencies?.['@types/node'];
  assert.ok(typesNode, 'this repo has no @types/node devDependency to give the app');
  const manifest = {
    name: 'app',
    version: '1.0.0',
    private: true,
    type: 'module',
    dependencies: { [PKG.name]: spec },
    devDependencies: { '@types/node': typesNode },
  };
  const packages: Record<string, unknown> = {
    '': {
      name: manifest.name,
      version: manifest.version,
      dependencies: manifest.dependencies,
      devDependencies: manifest.devDependencies,
    },
    [`node_modules/${PKG.name}`]: {
      version: PKG.version,
      resolved: spec,
      license: PKG.license,
      dependencies: PKG.dependencies,
      bin: PKG.bin,
      engines: PKG.engines,
    },
  };
  // Our dependencies and @types/node, with what they depend on (hoisted: node_modules/<name>).
  const todo = [...Object.keys(PKG.dependencies), '@types/node'];
  for (let name = todo.pop(); name !== undefined; name = todo.pop()) {
    const path = `node_modules/${name}`;
    if (path in packages) continue;
    const entry = repoLock.packages[path];
    assert.ok(entry, `${path} is not at the top of this repo's lockfile`);
    const { dev: _dev, devOptional: _devOptional, ...copy } = entry;
    packages[path] = copy;
    todo.push(...Object.keys(entry.dependencies ?? {}));
    // A nested copy (another version than the top one, e.g. axios's form-data/node_modules/mime-types)
    // is copied as it is; what it depends on comes from beside it, else from the top.
    const prefix = `${path}/node_modules/`;
    for (const p of Object.keys(repoLock.packages).filter((k) => k.startsWith(prefix))) {
      const { dev: _d, devOptional: _o, ...nestedCopy } = repoLock.packages[p]!;
      packages[p] = nestedCopy;
      for (const dep of Object.keys(nestedCopy.dependencies ?? {}))
        if (!(`${prefix}${dep}` in repoLock.packages)) todo.push(dep);
    }
  }
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  writeFileSync(
    join(dir, 'package-lock.json'),
    `${JSON.stringify({ name: manifest.name, version: manifest.version, lockfileVersion: 3, requires: true, packages }, null, 2)}\n`,
  );
}
