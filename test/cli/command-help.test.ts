// `gatehouse COMMAND --help` and `-h` print that command's usage and exit 0, serve's included (the
// default command: `gatehouse dist --help` too). Real processes: node bin/gatehouse.js (built dist/).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { flagNames } from '../../src/cli/args.js';
import { SERVE_FLAGS } from '../../src/cli/main.js';
import { makeSite, removeSite } from '../helpers/http.js';
import { WAIT_DEADLINE_MS } from '../helpers/wait.js';

const BIN = join(import.meta.dirname, '../../bin/gatehouse.js');

function run(args: string[], cwd: string) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    // A help that starts a server instead would never exit: that is a failure, not a hang.
    timeout: WAIT_DEADLINE_MS,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe('--help and -h after the command', () => {
  // serve with both spellings; each other command with one (their tables share the `help` entry, -h).
  const cases: [string, string, RegExp][] = [
    ['serve', '--help', /^Usage: gatehouse \[serve\] \[ROOT\] \[options\]\n\nserve options:\n/],
    ['serve', '-h', /^Usage: gatehouse \[serve\] \[ROOT\] \[options\]\n\nserve options:\n/],
    ['precompress', '--help', /^Usage: gatehouse precompress /],
    ['hash', '-h', /^Usage: gatehouse hash /],
    ['hash-password', '--help', /^Usage: gatehouse hash-password /],
    ['sw-manifest', '-h', /^Usage: gatehouse sw-manifest /],
    ['cert', '--help', /^Usage: gatehouse cert /],
    ['trust', '-h', /^Usage: gatehouse trust /],
    ['check', '--help', /^Usage: gatehouse check /],
  ];
  for (const [command, flag, usage] of cases) {
    it(`gatehouse ${command} ${flag} -> its usage, exit 0`, () => {
      const dir = makeSite({});
      try {
        const r = run([command, flag], dir);
        assert.equal(r.code, 0, r.err);
        assert.match(r.out, usage);
        assert.equal(r.err, '');
      } finally {
        removeSite(dir);
      }
    });
  }

  it("gatehouse site --port 0 --help (the default command) -> serve's help: every serve flag, no other command", () => {
    const dir = makeSite({ 'site/a.txt': 'a' });
    try {
      const r = run(['site', '--port', '0', '--help'], dir);
      assert.equal(r.code, 0, r.err);
      for (const flag of flagNames(SERVE_FLAGS)) assert.match(r.out, new RegExp(`(^|[ ,])${flag}\\b`), flag);
      assert.doesNotMatch(r.out, /gatehouse precompress/);
    } finally {
      removeSite(dir);
    }
  });
});
