// The memory budget applied (issue 40): `gatehouse serve` as users run it (bin/gatehouse.js, real
// processes). Its start-up line names the budget and where it came from; on a Node that can restart in
// place (process.execve, 22.15 and later: the Node 22 and 24 runs of CI) the serving process runs with the
// budget's --max-old-space-size under the same PID; on Node 20 the line says it is not set and how to set
// it. A container's limit is read from a cgroup folder (GATEHOUSE_CGROUP_ROOT, shaped like /sys/fs/cgroup);
// bounds that cannot fit fail the start with one line naming the keys to lower. Workers get the limit too.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { get, makeSite, removeSite } from '../../helpers/http.js';
import { waitUntil } from '../../helpers/wait.js';
import { BIN, startCli, workerPids } from '../../helpers/workers-cli.js';

const MiB = 1024 * 1024;
const CAN_RESTART = typeof (process as { execve?: unknown }).execve === 'function';
const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
/** The V8 heap flags a process runs with: the old generation's and the young one's (cli/memory.ts heapFlags). */
const heapFlag = (pid: number) =>
  cmdline(pid)
    .filter((a) => /^--max-(old|semi)-space-size=/.test(a))
    .join(' ') || undefined;
/** The flags a heap limit of `mb` MiB gives: 48 MiB of it is the young generation (3 x 16 MiB). */
const flagsFor = (mb: number) => `--max-old-space-size=${mb - 48} --max-semi-space-size=16`;

describe('gatehouse serve: the memory budget', () => {
  let site: string;
  let cgroup: string;
  before(() => {
    site = makeSite({ 'a.txt': 'a' });
    cgroup = mkdtempSync(join(tmpdir(), 'gatehouse-cgroup-'));
  });
  after(() => {
    removeSite(site);
    rmSync(cgroup, { recursive: true, force: true });
  });

  it('the defaults: the budget from the bounds; the heap limit applied in place where Node can', async () => {
    const p = startCli(['serve', site, '--port', '0', '--log', 'off']);
    try {
      const url = await p.url;
      assert.match(p.output(), /^memory budget 392 MiB, from the bounds \(64 MiB\) plus heap and runtime; /m);
      if (CAN_RESTART) {
        assert.match(p.output(), /; heap limit 256 MiB\n/);
        assert.equal(heapFlag(p.child.pid!), flagsFor(256), 'the same PID, restarted with it');
      } else {
        assert.match(
          p.output(),
          /heap limit not set: Node v20\.\S+ cannot restart in place .*--max-old-space-size=208 --max-semi-space-size=16\n/,
        );
        assert.equal(heapFlag(p.child.pid!), undefined);
      }
      assert.equal((await get(url, '/a.txt')).text, 'a');
      p.child.kill('SIGTERM');
      assert.equal(await p.exit, 0);
    } finally {
      p.child.kill('SIGKILL');
    }
  });

  it("started with the flags the line gives (Node 20's way): the limit counts as applied; other flags are the operator's", async () => {
    const told = startCli(['serve', site, '--port', '0', '--log', 'off'], undefined, {
      NODE_OPTIONS: flagsFor(256),
    });
    const own = startCli(['serve', site, '--port', '0', '--log', 'off'], undefined, {
      NODE_OPTIONS: '--max-old-space-size=300',
    });
    try {
      await Promise.all([told.url, own.url]);
      assert.match(told.output(), /^memory budget 392 MiB, .*; heap limit 256 MiB\n/m);
      assert.equal(heapFlag(told.child.pid!), undefined, 'not restarted: the flags came with NODE_OPTIONS');
      assert.match(
        own.output(),
        /^memory budget 392 MiB, .*; heap limit 300 MiB \(the process's own --max-old-space-size\)\n/m,
      );
    } finally {
      told.child.kill('SIGKILL');
      own.child.kill('SIGKILL');
    }
  });

  it('--memory 1G: the heap is what the bounds and the runtime leave', async () => {
    const p = startCli(['serve', site, '--port', '0', '--log', 'off', '--memory', '1G']);
    try {
      await p.url;
      const heap = (1024 * MiB - 64 * MiB - 72 * MiB) / MiB;
      assert.match(p.output(), /^memory budget 1024 MiB, from limits\.memoryBytes; /m);
      if (CAN_RESTART) assert.equal(heapFlag(p.child.pid!), flagsFor(heap));
      else assert.match(p.output(), new RegExp(`${flagsFor(heap)}\\n`));
    } finally {
      p.child.kill('SIGKILL');
    }
  });

  it("a container's lower limit wins, and the line names the file it came from", async () => {
    writeFileSync(join(cgroup, 'memory.max'), String(280 * MiB));
    const p = startCli(['serve', site, '--port', '0', '--log', 'off'], undefined, {
      GATEHOUSE_CGROUP_ROOT: cgroup,
    });
    try {
      await p.url;
      assert.match(p.output(), /^memory budget 280 MiB, from the container's limit \(.*memory\.max\); /m);
      if (CAN_RESTART) assert.equal(heapFlag(p.child.pid!), flagsFor(280 - 64 - 72));
    } finally {
      p.child.kill('SIGKILL');
    }
  });

  it('a container too small for the bounds: the start fails with one line naming the keys to lower', () => {
    writeFileSync(join(cgroup, 'memory.max'), String(240 * MiB));
    const r = spawnSync(
      process.execPath,
      [BIN, 'serve', site, '--port', '0', '--proxy', '/api=http://127.0.0.1:9'],
      { encoding: 'utf8', env: { ...process.env, GATEHOUSE_CGROUP_ROOT: cgroup }, timeout: 20_000 },
    );
    assert.equal(r.status, 2, r.stderr);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(
      lines[0]!,
      /^gatehouse: the memory budget 240 MiB, from the container, leaves .* lower static\.memoryCacheBytes \(64 MiB\), or give the container more memory$/,
    );
    assert.doesNotMatch(r.stdout, /listening on/);
  });

  it('--memory that is not a size: a usage error naming the flag', () => {
    const r = spawnSync(process.execPath, [BIN, 'serve', site, '--memory', 'lots'], { encoding: 'utf8' });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /--memory: expected a size such as 512M or 1G, got lots/);
  });

  it('--workers 2: each worker runs with the heap limit (any Node: node:cluster starts them with it)', async () => {
    const p = startCli(['serve', site, '--port', '0', '--log', 'off', '--workers', '2']);
    try {
      await p.url;
      assert.match(p.output(), /^memory budget 392 MiB per worker \(2\), .*; heap limit 256 MiB\n/m);
      let workers: number[] = [];
      await waitUntil('two workers', () => {
        workers = workerPids(p.child.pid!);
        return workers.length === 2;
      });
      for (const w of workers) assert.equal(heapFlag(w), flagsFor(256));
      assert.equal(heapFlag(p.child.pid!), undefined, 'the primary serves nothing');
    } finally {
      p.child.kill('SIGKILL');
    }
  });
});
