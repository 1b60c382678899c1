// The CLI's mistakes explained, as a new user meets them (node bin/gatehouse.js, built dist/): a mistyped
// command (`serv` -> serve) while a first word that names a folder, or is near no command, stays serve's
// ROOT; a mistyped config key and a config that is not JSON. (--help after a command: command-help.test.ts.)
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { get, makeSite, removeSite } from '../helpers/http.js';

const BIN = join(import.meta.dirname, '../../bin/gatehouse.js');

function run(args: string[], cwd: string) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** Starts `gatehouse ARGS` in `cwd`, GETs `path` once it listens, then stops it. */
async function serveOnce(args: string[], cwd: string, path: string) {
  const child = spawn(process.execPath, [BIN, ...args, '--port', '0'], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const exit = new Promise<number | null>((resolve) => child.once('exit', resolve));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
        const m = /listening on (\S+)\n/.exec(out);
        if (m) resolve(m[1]!);
      });
      void exit.then((code) => reject(new Error(`exited ${code}: ${err}`)));
    });
    return await get(url, path);
  } finally {
    child.kill('SIGTERM');
    await exit;
  }
}

describe('a mistyped command', () => {
  const cases: [string[], string][] = [
    [['serv', 'dist'], 'unknown command serv (did you mean serve?)'],
    [['chek', 'http://127.0.0.1:1/'], 'unknown command chek (did you mean check?)'],
    [['precompres', 'dist'], 'unknown command precompres (did you mean precompress?)'],
    [['sw-manfest', 'dist'], 'unknown command sw-manfest (did you mean sw-manifest?)'],
  ];
  for (const [args, message] of cases) {
    it(`gatehouse ${args.join(' ')} -> exit 2, "${message}"`, () => {
      const dir = makeSite({ 'dist/index.html': 'x' });
      try {
        const r = run(args, dir);
        assert.equal(r.code, 2, r.err);
        assert.equal(r.err, `gatehouse: ${message}\nRun gatehouse --help for usage.\n`);
        assert.equal(r.out, '');
      } finally {
        removeSite(dir);
      }
    });
  }

  it('a folder named like a mistyped command (./serv) is served: it is the ROOT', async () => {
    const dir = makeSite({ 'serv/a.txt': 'from serv' });
    try {
      const r = await serveOnce(['serv'], dir, '/a.txt');
      assert.equal(r.status, 200);
      assert.equal(r.text, 'from serv');
    } finally {
      removeSite(dir);
    }
  });

  it('gatehouse dist (a folder near no command) is still serve dist', async () => {
    const dir = makeSite({ 'dist/a.txt': 'from dist' });
    try {
      assert.equal((await serveOnce(['dist'], dir, '/a.txt')).text, 'from dist');
    } finally {
      removeSite(dir);
    }
  });

  it('a missing folder near no command -> the root error, not a command suggestion', () => {
    const dir = makeSite({});
    try {
      const r = run(['public'], dir);
      assert.equal(r.code, 2);
      assert.match(r.err, /^gatehouse: root: not a directory: .*public\n$/);
    } finally {
      removeSite(dir);
    }
  });
});

describe('config mistakes through the CLI', () => {
  it('a mistyped key -> exit 2, the key it meant', () => {
    const dir = makeSite({ 'gatehouse.config.json': JSON.stringify({ statc: { spa: true } }) });
    try {
      const r = run(['--port', '0'], dir);
      assert.equal(r.code, 2);
      assert.equal(
        r.err,
        `gatehouse: ${join(dir, 'gatehouse.config.json')}: unknown key statc (did you mean static?)\n`,
      );
    } finally {
      removeSite(dir);
    }
  });

  it('invalid JSON -> exit 2, its line and column', () => {
    const dir = makeSite({ 'c.json': '{\n  "root": ".",\n  "static": { "spa": true, }\n}\n' });
    try {
      const r = run(['--config', 'c.json', '--port', '0'], dir);
      assert.equal(r.code, 2);
      assert.equal(
        r.err,
        `gatehouse: ${join(dir, 'c.json')}: invalid JSON at line 3, column 28: expected a key after ",", found "}" (JSON has no trailing commas)\n`,
      );
    } finally {
      removeSite(dir);
    }
  });
});
