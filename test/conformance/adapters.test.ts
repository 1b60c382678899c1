// The --private adapters, loaded the way run.mjs checks them before a run
// (`node scripts/conformance/private-driver.mjs --check ADAPTER`): a dist/client without
// createCachingFetch must stop the run with exit 2 and one line, never score as a (silent) pass.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const driver = join(repoRoot, 'scripts/conformance/private-driver.mjs');
const adapters = join(repoRoot, 'scripts/conformance/adapters');

const scratch: string[] = [];
after(() => Promise.all(scratch.map((d) => rm(d, { recursive: true, force: true }))));

/** A Gatehouse tree whose dist/client/index.js is `source` (undefined: no dist/ at all). */
async function fakeTree(source: string | undefined): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-conformance-adapter-'));
  scratch.push(dir);
  if (source !== undefined) {
    await mkdir(join(dir, 'dist', 'client'), { recursive: true });
    await writeFile(join(dir, 'dist', 'client', 'index.js'), source);
  }
  return dir;
}

function check(adapter: string, env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, ['--no-warnings', driver, '--check', adapter], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 30_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('conformance adapters', () => {
  test('gatehouse-client: dist/client without createCachingFetch -> exit 2, one line naming §1', async () => {
    const tree = await fakeTree('export function postTo() {}\n');
    const r = check(join(adapters, 'gatehouse-client.mjs'), { GATEHOUSE_CONFORMANCE_GATEHOUSE: tree });
    assert.equal(r.code, 2);
    assert.equal(r.stderr, 'conformance: dist/client has no createCachingFetch: build issue 14 §1 first\n');
  });

  test('gatehouse-client: no dist/ at all -> exit 2, says to build', async () => {
    const tree = await fakeTree(undefined);
    const r = check(join(adapters, 'gatehouse-client.mjs'), { GATEHOUSE_CONFORMANCE_GATEHOUSE: tree });
    assert.equal(r.code, 2);
    assert.match(
      r.stderr,
      /^conformance: cannot import .*dist\/client\/index\.js .*run npm run build first\n$/,
    );
  });

  test('gatehouse-client: createCachingFetch present -> loads, called once with the options JSON', async () => {
    const tree = await fakeTree(
      'export function createCachingFetch(o) {\n' +
        '  console.log("created " + JSON.stringify(o));\n' +
        '  return async () => new Response("x");\n' +
        '}\n',
    );
    const r = check(join(adapters, 'gatehouse-client.mjs'), {
      GATEHOUSE_CONFORMANCE_GATEHOUSE: tree,
      GATEHOUSE_CONFORMANCE_CLIENT_OPTIONS: '{"memoryBytes":1024}',
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'created {"memoryBytes":1024}\n');
  });

  test('gatehouse-client: options that are not JSON -> exit 2 naming the variable', async () => {
    const tree = await fakeTree('export const createCachingFetch = () => fetch;\n');
    const r = check(join(adapters, 'gatehouse-client.mjs'), {
      GATEHOUSE_CONFORMANCE_GATEHOUSE: tree,
      GATEHOUSE_CONFORMANCE_CLIENT_OPTIONS: '{memoryBytes:',
    });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^conformance: GATEHOUSE_CONFORMANCE_CLIENT_OPTIONS: not valid JSON/);
  });

  test('undici-cache: loads and exports cachedFetch', () => {
    const r = check(join(adapters, 'undici-cache.mjs'));
    assert.equal(r.code, 0, r.stderr);
  });

  test('an adapter without cachedFetch -> exit 2 naming the export', async () => {
    const dir = await fakeTree(undefined);
    const file = join(dir, 'no-export.mjs');
    await writeFile(file, 'export const fetchIt = fetch;\n');
    const r = check(file);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /no-export\.mjs does not export cachedFetch\(input, init\)\n$/);
  });
});
