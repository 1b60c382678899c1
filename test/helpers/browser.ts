// A real Chromium for browser tests: Debian's chromium (or CHROME_PATH) driven by playwright-core,
// headless, one fresh user-data folder per launch, removed on close. Tests point it at 127.0.0.1
// servers only; the flags keep Chromium itself off the network (no background fetches, component
// updates, sync or QUIC).
//
// Without a Chromium, `describeBrowser` registers no tests (scripts/run-tests.mjs prints one loud
// line saying so), except under CI=true, where it registers one failing test: CI must never skip them.
// Also here: startRecordingGatehouse (a server recording what it received and sent), serveCli (a real
// `gatehouse serve` process and its access log), cdpReload, and timings (the Performance API).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type BrowserContext, type CDPSession, chromium, type Page } from 'playwright-core';
import { parseConfig, toServerOptions } from '../../src/config/load.js';
import type { GatehouseConfigInput } from '../../src/config/schema.js';
import { createGatehouse, type Gatehouse, type GatehouseDeps } from '../../src/server/app/gatehouse.js';
import { inCI } from './ci.js';
import { waitUntil } from './wait.js';

/** CHROME_PATH when set, else Debian's chromium (scripts/run-tests.mjs resolves it the same way). */
export const CHROMIUM_PATH = process.env.CHROME_PATH || '/usr/bin/chromium';

/** The only flags Chromium is launched with (besides the ones playwright-core adds to drive it). */
export const CHROMIUM_ARGS: readonly string[] = Object.freeze([
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]);

/** Why the browser tests cannot run here, or false when Chromium is installed (CI installs it: .ci/run). */
export const browserMissing: string | false = existsSync(CHROMIUM_PATH)
  ? false
  : `no Chromium at ${CHROMIUM_PATH}`;

/** CI (test/helpers/ci.ts): a missing Chromium fails instead of being passed over. */
export { inCI };

/**
 * `describe` for a browser test file. Chromium found: the suite as written. Missing on a developer
 * machine: nothing is registered (no skipped cases; run-tests.mjs prints the loud line once).
 * Missing under CI: one failing test naming the path.
 */
export function describeBrowser(title: string, body: () => void): void {
  if (!browserMissing) {
    describe(title, body);
  } else if (inCI) {
    describe(title, () => {
      it('Chromium is installed (CI must run the browser tests)', () => {
        assert.fail(
          `${browserMissing}: CI=true, so the browser tests must run. ` +
            'Install it (apt-get install -y --no-install-recommends chromium) or set CHROME_PATH.',
        );
      });
    });
  }
}

export interface LaunchedBrowser {
  readonly context: BrowserContext;
  /** Closes Chromium and removes its user-data folder. */
  close(): Promise<void>;
}

/**
 * Launches Chromium with a fresh profile (empty caches); call close() (in `after`) to end it and remove it.
 * `extraArgs`: flags one test needs beside CHROMIUM_ARGS (HTTPS tests: the SPKI pin of their certificate).
 */
export async function launchBrowser(
  extraArgs: readonly string[] = [],
  options: { env?: Record<string, string> } = {},
): Promise<LaunchedBrowser> {
  const userDataDir = await mkdtemp(join(tmpdir(), 'gatehouse-chromium-'));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: [...CHROMIUM_ARGS, ...extraArgs],
      ...(options.env === undefined ? {} : { env: { ...process.env, ...options.env } }),
    });
  } catch (err) {
    await rm(userDataDir, { recursive: true, force: true });
    throw err;
  }
  return {
    context,
    close: async () => {
      try {
        await context.close();
      } finally {
        await rm(userDataDir, { recursive: true, force: true });
      }
    },
  };
}

/** A CDP session on one tab (for what playwright-core has no call for, e.g. Page.reload ignoreCache). */
export function cdpSession(page: Page): Promise<CDPSession> {
  return page.context().newCDPSession(page);
}

/**
 * Reloads `page` through CDP `Page.reload` and resolves once its `load` event fired. `ignoreCache`
 * true is the forced reload (Ctrl+Shift+R); false is the normal one (F5).
 */
export async function cdpReload(page: Page, ignoreCache: boolean): Promise<void> {
  const session = await cdpSession(page);
  try {
    const loaded = page.waitForEvent('load');
    await session.send('Page.reload', { ignoreCache });
    await loaded;
  } finally {
    await session.detach();
  }
}

/** One request as the server saw it, with the head it answered. */
export interface SeenRequest {
  readonly method: string;
  /** The request target as received (path and query). */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  /** The status sent; 0 until the answer is over (see RecordingGatehouse.settled). */
  status: number;
  /** The response head that went out, names lowercase (from the serialised head: see sentHead). */
  responseHeaders: Readonly<Record<string, string>>;
}

/**
 * The header fields of the head `res` sent. Handlers that pass their fields to writeHead() bypass
 * getHeaders(), so this reads the serialised head Node keeps on the response (`_header`, set once
 * the head is written, Node 20-24), falling back to getHeaders() when it is absent.
 */
function sentHead(res: ServerResponse): Record<string, string> {
  const raw = (res as unknown as { _header?: unknown })._header;
  const out: Record<string, string> = {};
  if (typeof raw !== 'string') {
    for (const [k, v] of Object.entries(res.getHeaders()))
      out[k] = Array.isArray(v) ? v.join(', ') : String(v);
    return out;
  }
  for (const line of raw.split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).toLowerCase();
    const value = line.slice(colon + 1).trim();
    out[name] = name in out ? `${out[name]}, ${value}` : value;
  }
  return out;
}

export interface RecordingGatehouse {
  readonly app: Gatehouse;
  /** `http://127.0.0.1:PORT`: also the origin of pages it serves. */
  readonly url: string;
  readonly port: number;
  /** Every request received so far, in arrival order (status and head filled in once answered). */
  readonly seen: SeenRequest[];
  /** The recorded requests for `path` (query included when given), optionally since index `from`. */
  requestsFor(path: string, from?: number): SeenRequest[];
  /** The one recorded request for `path` since `from`; fails on none or several. */
  onlyRequest(path: string, from: number): SeenRequest;
  /** Resolves once every request received so far has been answered (or its connection closed). */
  settled(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A real Gatehouse on 127.0.0.1:0 built the way `gatehouse serve` builds it (config through
 * parseConfig and toServerOptions, then createGatehouse), with a first `request` listener that
 * records each request as it arrives and, once the response is over, the status and head sent.
 */
export async function startRecordingGatehouse(
  config: GatehouseConfigInput,
  deps: GatehouseDeps = {},
): Promise<RecordingGatehouse> {
  const parsed = parseConfig({
    log: { format: 'off' },
    ...config,
    listen: { ...config.listen, host: '127.0.0.1', port: 0 },
  });
  const app = createGatehouse(toServerOptions(parsed), deps);
  const seen: SeenRequest[] = [];
  let open = 0;
  app.server.prependListener('request', (req, res) => {
    const entry: SeenRequest = {
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      status: 0,
      responseHeaders: {},
    };
    seen.push(entry);
    open++;
    // 'close' follows 'finish', and also comes when the connection ends before the answer did.
    res.once('close', () => {
      entry.status = res.headersSent ? res.statusCode : 0;
      entry.responseHeaders = sentHead(res);
      open--;
    });
  });
  const { url, port } = await app.listen();
  return {
    app,
    url,
    port,
    seen,
    requestsFor: (path, from = 0) => seen.slice(from).filter((s) => s.url === path),
    onlyRequest: (path, from) => {
      const got = seen.slice(from).filter((s) => s.url === path);
      assert.equal(got.length, 1, `one request for ${path}, saw ${JSON.stringify(got.map((s) => s.status))}`);
      return got[0]!;
    },
    settled: async () => {
      await waitUntil('every request received was answered', () => open === 0);
    },
    close: () => app.close(),
  };
}

/** One line of `gatehouse serve --log json`'s access log (src/server/ops/log.ts accessLogger). */
export interface AccessLine {
  readonly method: string;
  readonly url: string;
  readonly status: number;
  readonly bytes: number;
}

export interface ServedGatehouse {
  /** `http://127.0.0.1:PORT` (https with --https), from the process's `listening on` line. */
  readonly url: string;
  readonly port: number;
  /** The access log so far, in the order the process wrote it. */
  readonly log: AccessLine[];
  /** Sends SIGTERM (the process drains and exits); resolves with its exit code. */
  close(): Promise<number | null>;
}

const BIN = fileURLToPath(new URL('../../bin/gatehouse.js', import.meta.url));

/**
 * A real `gatehouse serve ROOT --port PORT --log json ...args` process (bin/gatehouse.js runs dist/:
 * `npm run build` first; npm test does). Resolves once it prints `listening on URL`; rejects with
 * its stderr if it exits before. `port` 0 (the default) picks a free one; pass the old port to
 * restart a server in place.
 */
export function serveCli(
  root: string,
  args: readonly string[] = [],
  port = 0,
  env: Record<string, string> = {},
): Promise<ServedGatehouse> {
  const child = spawn(
    process.execPath,
    [BIN, 'serve', root, '--host', '127.0.0.1', '--port', String(port), '--log', 'json', ...args],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } },
  );
  const log: AccessLine[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
  });
  return new Promise<ServedGatehouse>((resolve, reject) => {
    let pending = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      pending += chunk;
      for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n')) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        const listening = /^listening on (https?:\/\/\S+)$/.exec(line);
        if (listening) {
          const url = listening[1]!;
          resolve({
            url,
            port: Number(new URL(url).port),
            log,
            close: () => {
              if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
              return exited;
            },
          });
        } else if (line.startsWith('{')) {
          const rec = JSON.parse(line) as Partial<AccessLine>;
          if (typeof rec.method === 'string' && typeof rec.status === 'number')
            log.push({
              method: rec.method,
              url: String(rec.url),
              status: rec.status,
              bytes: Number(rec.bytes),
            });
        }
      }
    });
    exited.then((code) => reject(new Error(`gatehouse serve exited (${code}) before listening: ${stderr}`)));
  });
}

/** One Performance API entry of a page, as the tests read it (Resource Timing; Navigation Timing). */
export interface Timing {
  readonly entryType: 'navigation' | 'resource';
  /** The path of the entry's URL (the tests use one origin per server). */
  readonly path: string;
  /** 0 when served from the cache; 300 after a 304; else encodedBodySize + 300 (Resource Timing). */
  readonly transferSize: number;
  readonly encodedBodySize: number;
  readonly decodedBodySize: number;
  readonly responseStatus: number;
  /** 'cache' when the browser's cache answered (fresh or after a 304), '' from the network. */
  readonly deliveryType: string;
}

/** The page's navigation and resource entries (`performance.getEntriesByType`), by path. */
export async function timings(page: Page): Promise<Map<string, Timing>> {
  const list = await page.evaluate(() =>
    [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')].map((e) => {
      const r = e as PerformanceResourceTiming & { responseStatus?: number; deliveryType?: string };
      return {
        entryType: r.entryType as 'navigation' | 'resource',
        path: new URL(r.name).pathname,
        transferSize: r.transferSize,
        encodedBodySize: r.encodedBodySize,
        decodedBodySize: r.decodedBodySize,
        responseStatus: r.responseStatus ?? 0,
        deliveryType: r.deliveryType ?? '',
      };
    }),
  );
  return new Map(list.map((t) => [t.path, t]));
}
