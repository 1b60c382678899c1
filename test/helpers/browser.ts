// A real Chromium for browser tests (CORS now; later issues reuse it): Debian's /usr/bin/chromium
// driven by playwright-core, headless, one fresh user-data folder per launch, removed on close.
// Tests point it at 127.0.0.1 (or localhost) servers only; the flags keep Chromium itself off the
// network (no background fetches, component updates, sync or QUIC).
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

export const CHROMIUM_PATH = '/usr/bin/chromium';

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

/** Why browser tests skip here, or false when Chromium is installed (CI installs it: .ci/run). */
export const browserMissing: string | false = existsSync(CHROMIUM_PATH)
  ? false
  : `no Chromium at ${CHROMIUM_PATH}`;

export interface LaunchedBrowser {
  readonly context: BrowserContext;
  /** Closes Chromium and removes its user-data folder. */
  close(): Promise<void>;
}

/** Launches Chromium with a fresh profile; call close() (in `after`) to end it and remove the profile. */
export async function launchBrowser(): Promise<LaunchedBrowser> {
  const userDataDir = await mkdtemp(join(tmpdir(), 'gatehouse-chromium-'));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: [...CHROMIUM_ARGS],
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
