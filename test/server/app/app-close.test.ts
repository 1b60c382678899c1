// app.close() when a part of the server fails to close: it still closes everything else, logs the
// failure and resolves (it used to leave an unhandled rejection and never resolve).
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { WebSocket } from 'ws';
import { parseConfig, toServerOptions } from '../../../src/config/load.js';
import { createGatehouse, type Gatehouse } from '../../../src/server/app/gatehouse.js';
import type { Logger } from '../../../src/server/ops/log.js';
import { get, makeSite, removeSite } from '../../helpers/http.js';
import { origin } from '../../helpers/origin.js';
import { WAIT_DEADLINE_MS } from '../../helpers/wait.js';

interface Logged {
  obj: Record<string, unknown>;
  msg: string | undefined;
}

/** The error chain of a close failure (an AggregateError's members included), as error codes. */
function codes(err: unknown): string[] {
  if (err instanceof AggregateError) return err.errors.flatMap(codes);
  const e = err as { code?: string; cause?: unknown };
  return [...(e.code ? [e.code] : []), ...(e.cause ? codes(e.cause) : [])];
}

/** `p`, or a failure naming `what` after the shared deadline (turns a hang into a failure, not a bound). */
function within<V>(p: Promise<V>, what: string): Promise<V> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), WAIT_DEADLINE_MS);
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

describe('app.close() with a part that fails to close', () => {
  it('a proxy cache whose close rejects: close() resolves, the rest is closed, the failure is logged', async () => {
    const up = await origin({ '/api/x': (_req, res) => res.end('x') });
    const site = makeSite({});
    // The disk cache's own folder is made under os.tmpdir() (TMPDIR) when the app is created.
    const parent = mkdtempSync(join(tmpdir(), 'gatehouse-close-'));
    const moved = `${parent}-moved`;
    const errors: Logged[] = [];
    const logger: Logger = {
      info() {},
      warn() {},
      error: (obj, msg) => errors.push({ obj: obj as Record<string, unknown>, msg }),
      isLevelEnabled: () => false,
    };
    const config = parseConfig({
      root: site,
      listen: { host: '127.0.0.1', port: 0 },
      proxy: [
        { prefix: '/api', upstream: up.url, stripPrefix: false, cache: { enabled: true, store: 'disk' } },
        { prefix: '/mem', upstream: up.url, cache: { enabled: true, store: 'memory' } },
      ],
      websocket: [{ path: '/ws', mode: 'echo' }],
    });
    const savedTmp = process.env.TMPDIR;
    let app: Gatehouse;
    try {
      process.env.TMPDIR = parent;
      app = createGatehouse(toServerOptions(config), { logger });
    } finally {
      if (savedTmp === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = savedTmp;
    }
    try {
      const { url, port } = await app.listen();
      assert.equal((await get(url, '/api/x')).text, 'x');
      assert.match(readdirSync(parent).join(), /^gatehouse-cache-/, 'the cache folder is under our TMPDIR');
      const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`);
      await new Promise((resolve, reject) => {
        ws.once('open', resolve);
        ws.once('error', reject);
      });
      const closeCode = new Promise<number>((resolve) => ws.once('close', resolve));
      // The cache folder can no longer be removed: its parent is now a file (rm fails with ENOTDIR).
      renameSync(parent, moved);
      writeFileSync(parent, '');

      await within(app.close(), 'app.close() to settle');

      assert.equal(await closeCode, 1001, 'the WebSocket endpoint was closed (Going Away)');
      assert.equal(app.server.listening, false);
      const failure = errors.find((e) => e.msg === 'shutdown: close failed');
      assert.ok(failure, `the failure is logged: ${JSON.stringify(errors)}`);
      assert.equal(failure.obj.part, 'proxy');
      assert.ok(codes(failure.obj.err).includes('ENOTDIR'), String(failure.obj.err));
    } finally {
      rmSync(parent, { recursive: true, force: true });
      rmSync(moved, { recursive: true, force: true });
      await up.close();
      removeSite(site);
    }
  });
});
