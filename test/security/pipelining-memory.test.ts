// Attack: a pipelining flood across many connections, for memory. 300 connections each write 5,000
// pipelined GETs (225 KB) and never read. Node's parser turned each connection's first read (64 KiB,
// about 1,400 heads) into requests, though only limits.maxPipelinedRequests run: about 3 MB per
// connection, RSS +885 MB at 300 (issue 25). The read now stops at the first request beyond the bound
// (src/server/node/pipelining.ts, stopRead). The server runs in a child process, so the RSS is its own,
// measured against its RSS before the attack.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { createInterface, type Interface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { WAIT_DEADLINE_MS, waitUntil } from '../helpers/wait.js';

const CONNECTIONS = 300;
const MAX_PIPELINED = 16;
/** 45 bytes, as in the issue. */
const REQUEST = 'GET /small.txt HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n';
const GROWTH_LIMIT_BYTES = 150 * 1024 * 1024;

interface Stats {
  rss: number;
  requests: number;
  pipelined: number;
  bytesRead: number;
}

describe('attack: pipelining floods on many connections, for memory', () => {
  let child: ChildProcess;
  let lines: Interface;
  let port = 0;
  const replies: ((line: string) => void)[] = [];

  const stats = (): Promise<Stats> =>
    new Promise((resolve) => {
      replies.push((line) => resolve(JSON.parse(line) as Stats));
      child.stdin!.write('stats\n');
    });

  before(async () => {
    child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', 'test/helpers/pipelining-server.ts'], {
      stdio: ['pipe', 'pipe', 'inherit'],
      env: {
        ...process.env,
        PIPELINING_OVER: String(MAX_PIPELINED),
        // Answers the client's socket buffers cannot absorb: every connection stays at the bound.
        PIPELINING_FILE_BYTES: '1000000',
      },
    });
    lines = createInterface({ input: child.stdout! });
    port = await new Promise<number>((resolve) => {
      lines.on('line', (line) => {
        if (line.startsWith('port ')) resolve(Number(line.slice(5)));
        else replies.shift()?.(line);
      });
    });
  });
  after(() => {
    child.stdin!.end();
    child.kill();
  });

  it(`attack: ${CONNECTIONS} connections pipelining 5,000 GETs each, never reading -> server RSS grows < 150 MB`, async () => {
    const start = await stats();
    const flood: Socket[] = [];
    try {
      for (let i = 0; i < CONNECTIONS; i++) {
        const s = connect(port, '127.0.0.1');
        s.on('error', () => {});
        await new Promise((r) => s.once('connect', r));
        s.pause(); // never read
        s.write(REQUEST.repeat(5000));
        flood.push(s);
      }
      // The attack reached the server: every connection pipelined past the bound (each one's first
      // read is parsed at once, so this is after it). The growth is checked on every poll, so memory
      // that runs away fails at once rather than at the deadline.
      const growthOf = (st: Stats) => {
        const growth = st.rss - start.rss;
        assert.ok(
          growth < GROWTH_LIMIT_BYTES,
          `server RSS grew by ${(growth / 1048576).toFixed(0)} MB (${st.pipelined} connections past the bound, ${st.requests} requests parsed, ${st.bytesRead} bytes read)`,
        );
      };
      const hit = await waitUntil(
        'every connection to pipeline past the bound',
        async () => {
          const st = await stats();
          growthOf(st);
          return st.pipelined === CONNECTIONS ? st : undefined;
        },
        // 300 connections' first reads on a shared 2-core machine: longer than one wait.
        { deadlineMs: 3 * WAIT_DEADLINE_MS, intervalMs: 50 },
      );
      assert.ok(
        hit.bytesRead >= CONNECTIONS * (MAX_PIPELINED + 1) * REQUEST.length,
        `${hit.bytesRead} bytes read`,
      );
      growthOf(hit);
    } finally {
      for (const s of flood) s.destroy();
    }
  });
});
