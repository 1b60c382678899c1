// The HTTPS bench rows (issue 15 §7): h2load's summary parsed table-style, and `node bench/https.mjs`
// itself run briefly end to end (h2load from nghttp2-client, which .ci/run installs; nginx optional).
// npm test builds first; run alone, build first (npm run build): the bench makes its certificate with
// dist/certs/x509.js and starts bin/gatehouse.js.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { h2loadVersion, parseH2loadOutput } from '../../bench/lib/h2load.mjs';

const SUMMARY = `starting benchmark...
spawning thread #0: 10 total client(s). Timing-based test with 0s of warm-up time and 3s of main duration for measurements.
TLS Protocol: TLSv1.3
Cipher: TLS_AES_256_GCM_SHA384
Server Temp Key: X25519 253 bits
Application protocol: h2

finished in 3.00s, 21136.00 req/s, 21.37MB/s
requests: 63408 total, 63728 started, 63408 done, 63400 succeeded, 8 failed, 0 errored, 0 timeout
status codes: 63400 2xx, 0 3xx, 8 4xx, 0 5xx
traffic: 64.11MB (67224576) total, 1.21MB (1268160) headers (space savings 90.12%), 61.92MB (64929792) data
`;

describe('h2load summary parsing', () => {
  const cases: {
    name: string;
    text: string;
    expect: Partial<ReturnType<typeof parseH2loadOutput> & object> | undefined;
  }[] = [
    {
      name: 'a full summary: rate, done count, protocol and the 4xx as an error',
      text: SUMMARY,
      expect: {
        seconds: 3,
        requestsPerSec: 21136,
        requests: 63408,
        succeeded: 63400,
        failed: 8,
        protocol: 'h2',
        tls: 'TLSv1.3',
        errors: ['8 failed, 0 errored, 0 timed out', '8 4xx/5xx responses'],
      },
    },
    {
      name: 'finished in ms, all succeeded: no errors',
      text:
        'Application protocol: http/1.1\nfinished in 812.50ms, 984.62 req/s, 1.01MB/s\n' +
        'requests: 800 total, 800 started, 800 done, 800 succeeded, 0 failed, 0 errored, 0 timeout\n' +
        'status codes: 800 2xx, 0 3xx, 0 4xx, 0 5xx\n',
      expect: { seconds: 0.8125, requestsPerSec: 984.62, requests: 800, protocol: 'http/1.1', errors: [] },
    },
    {
      name: 'a 5xx counts as an error even when h2load calls it succeeded',
      text:
        'finished in 1.00s, 10.00 req/s, 1KB/s\n' +
        'requests: 10 total, 10 started, 10 done, 10 succeeded, 0 failed, 0 errored, 0 timeout\n' +
        'status codes: 7 2xx, 0 3xx, 0 4xx, 3 5xx\n',
      expect: { requests: 10, protocol: undefined, errors: ['3 4xx/5xx responses'] },
    },
    {
      name: 'no summary (killed before the end): undefined',
      text: 'progress: 84% of clients started\n',
      expect: undefined,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const got = parseH2loadOutput(c.text);
      if (c.expect === undefined) {
        assert.equal(got, undefined);
        return;
      }
      assert.ok(got);
      for (const [key, want] of Object.entries(c.expect)) {
        assert.deepEqual(got[key as keyof typeof got], want, key);
      }
    });
  }
});

/** Runs `node bench/https.mjs ARGS`, resolving its exit code, stdout and stderr. */
function runBench(args: string[], env: Record<string, string>) {
  const script = fileURLToPath(new URL('../../bench/https.mjs', import.meta.url));
  const child = spawn(process.execPath, [script, ...args], { env: { ...process.env, ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.once('exit', (code) => resolve({ code, stdout, stderr })),
  );
}

describe('bench/https.mjs', () => {
  it('a one-second run of the HTTP/2 row prints Gatehouse, the node:http2 ceiling, the ratio and the target', async () => {
    assert.ok(h2loadVersion(), 'h2load is not installed (apt-get install nghttp2-client; .ci/run does)');
    const { code, stdout, stderr } = await runBench(['--quick', '--only', 'h2-1k'], {
      BENCH_DURATION: '1',
      BENCH_ROUNDS: '1',
      BENCH_WARMUP: '1',
    });
    assert.equal(code, 0, stderr);
    assert.match(stdout, /## Gatehouse HTTPS benchmark/);
    // Both servers measured (a number, not "failed to start" / "wrong status") and their ratio printed.
    const row = stdout.split('\n').find((l) => l.startsWith('| h2-1k |'));
    assert.ok(row, stdout);
    assert.match(row, /^\| h2-1k \| [\d,]+ \| [\d,]+ \|/);
    assert.match(stdout, /\| gatehouse \/ peer, req\/s \| node-http2 \|/);
    assert.match(stdout, /h2-1k gatehouse >= 0\.90x node-http2 +req\/s \d+\.\d\dx/);
    assert.doesNotMatch(stdout, /wrong status|failed to start|no result/);
  });
});
