// The CI verdict (issue 30 §2): one helper decides it for the runner and every test, and under any CI
// value (CI=1 included, which used to leave the nginx and HAProxy suites out) a missing binary fails.
// The proof runs real test files in a child node with no such binary, with CI=1, and with CI unset.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { isCI, needs, needsBinary } from './ci.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'gatehouse-ci-helper-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('isCI', () => {
  const cases: [string | undefined, boolean][] = [
    [undefined, false],
    ['', false],
    ['0', false],
    ['false', false],
    ['FALSE', false],
    ['true', true],
    ['1', true],
    ['yes', true],
    ['True', true],
  ];
  for (const [value, expected] of cases) {
    it(`CI=${value === undefined ? '(unset)' : JSON.stringify(value)} -> ${expected}`, () => {
      assert.equal(isCI(value === undefined ? {} : { CI: value }), expected);
    });
  }
});

describe('needs', () => {
  const cases: [string, boolean, Record<string, string>, { skip: string | false }][] = [
    ['available, off CI: runs', true, {}, { skip: false }],
    ['available, CI=1: runs', true, { CI: '1' }, { skip: false }],
    ['missing, off CI: skipped with the reason', false, {}, { skip: 'no /proc/self/mem' }],
    ['missing, CI=true: runs (and fails on its own)', false, { CI: 'true' }, { skip: false }],
  ];
  for (const [name, available, env, expected] of cases) {
    it(name, () => assert.deepEqual(needs(available, 'no /proc/self/mem', env), expected));
  }
});

describe('needsBinary', () => {
  const missing = join(dir, 'no-such-binary');

  it('a binary that exists: never skipped', () => {
    assert.deepEqual(needsBinary(process.execPath, {}), { skip: false });
  });

  it('missing off CI: skipped, naming the path; missing under CI=1: not skipped', () => {
    assert.deepEqual(needsBinary(missing, {}), { skip: `no ${missing}` });
    assert.deepEqual(needsBinary(missing, { CI: '1' }), { skip: false });
  });

  /** A test file whose suite needs `missing` and runs it, as the nginx and HAProxy suites do. */
  function runSuite(ci: string | undefined) {
    const file = join(dir, 'needs-binary.test.ts');
    writeFileSync(
      file,
      `import { spawnSync } from 'node:child_process';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { needsBinary } from ${JSON.stringify(join(ROOT, 'test/helpers/ci.ts'))};
describe('a suite on a binary', needsBinary(${JSON.stringify(missing)}), () => {
  it('runs it', () => {
    assert.equal(spawnSync(${JSON.stringify(missing)}).error, undefined);
  });
});
`,
    );
    const empty = join(dir, 'empty-path');
    mkdirSync(empty, { recursive: true });
    const env: Record<string, string> = { ...(process.env as Record<string, string>), PATH: empty };
    delete env.CI;
    delete env.NODE_TEST_CONTEXT; // else the child node:test thinks it runs inside this one
    if (ci !== undefined) env.CI = ci;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=tap', file], {
      cwd: ROOT,
      env,
      encoding: 'utf8',
    });
    return { code: r.status, out: r.stdout + r.stderr };
  }

  it('CI=1 and no binary on PATH: the suite runs and fails', () => {
    const r = runSuite('1');
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /# fail 1/);
    assert.match(r.out, /# skipped 0/);
  });

  it('CI unset and no binary: the suite is left out, naming the binary', () => {
    const r = runSuite(undefined);
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, new RegExp(`# SKIP no ${missing.replaceAll('/', '\\/')}`));
    assert.match(r.out, /# fail 0/);
  });

  it('the runner: CI=1 and no Chromium fails a browser test file instead of leaving it out', () => {
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      CI: '1',
      CHROME_PATH: join(dir, 'no-chromium'),
    };
    delete env.NODE_TEST_CONTEXT;
    const r = spawnSync(process.execPath, ['scripts/run-tests.mjs', 'test/browser/trust.test.ts'], {
      cwd: ROOT,
      env,
      encoding: 'utf8',
    });
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /Chromium is installed \(CI must run the browser tests\)/);
  });
});

describe('one place decides', () => {
  function files(d: string, out: string[] = []): string[] {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (name === 'node_modules' || name === 'fixtures') continue;
      if (statSync(p).isDirectory()) files(p, out);
      else if (/\.(ts|mjs|js)$/.test(name)) out.push(p);
    }
    return out;
  }

  it('no test or script but scripts/ci.mjs reads process.env.CI', () => {
    const readers = [...files(join(ROOT, 'test')), ...files(join(ROOT, 'scripts'))]
      .filter((f) => f !== join(ROOT, 'scripts/ci.mjs') && f !== fileURLToPath(import.meta.url))
      .filter((f) => /process\.env\.CI\b|env\.CI\b|\benv\[['"]CI['"]\]/.test(readFileSync(f, 'utf8')));
    assert.deepEqual(readers, []);
  });
});
