// gatehouse trust (issue 26 §4) with real Chromium in a fresh HOME: before it, https://localhost of
// `gatehouse serve --https` is refused (an unknown CA); after `gatehouse trust` the same page loads with
// no certificate flags; after `gatehouse trust --uninstall` a new Chromium refuses it again. Chromium on
// Linux reads its trust anchors from $HOME/.pki/nssdb, which `trust` creates (a fresh profile has none).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { describeBrowser, launchBrowser, type ServedGatehouse, serveCli } from '../helpers/browser.js';

const BIN = fileURLToPath(new URL('../../bin/gatehouse.js', import.meta.url));
const base = mkdtempSync(join(tmpdir(), 'gatehouse-trust-'));
const home = join(base, 'home');
const dataDir = join(base, 'data');
const root = join(base, 'site');

function trust(args: string[]) {
  const r = spawnSync(process.execPath, [BIN, 'trust', '--stores', 'nss', ...args], {
    encoding: 'utf8',
    env: { ...process.env, HOME: home, GATEHOUSE_DATA_DIR: dataDir },
  });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

/** Loads https://localhost:PORT/ in a fresh Chromium of HOME; the error text when it is refused. */
async function visit(port: number): Promise<{ status: number } | { error: string }> {
  const browser = await launchBrowser([], { env: { HOME: home } });
  try {
    const page = await browser.context.newPage();
    const res = await page.goto(`https://localhost:${port}/`);
    return { status: res?.status() ?? 0 };
  } catch (err) {
    return { error: (err as Error).message };
  } finally {
    await browser.close();
  }
}

describeBrowser("gatehouse trust: the dev CA into Chromium's NSS database", () => {
  let server: ServedGatehouse;

  before(async () => {
    mkdirSync(home);
    mkdirSync(root);
    writeFileSync(join(root, 'index.html'), '<!doctype html><title>trusted</title><p>hello</p>');
    server = await serveCli(root, ['--https'], 0, { GATEHOUSE_DATA_DIR: dataDir });
  });
  after(async () => {
    await server?.close();
    rmSync(base, { recursive: true, force: true });
  });

  it('untrusted before, loads after trust with no certificate flags, refused again after --uninstall', async () => {
    assert.match(server.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const before = await visit(server.port);
    assert.ok('error' in before, 'a fresh HOME must not trust the dev CA yet');
    assert.match(before.error, /ERR_CERT_AUTHORITY_INVALID/);

    const installed = trust([]);
    assert.equal(installed.code, 0, installed.out);
    assert.match(installed.out, /nss .*\.pki\/nssdb: installed/);

    const served = server.log.length;
    const trusted = await visit(server.port);
    assert.deepEqual(trusted, { status: 200 });
    assert.ok(
      server.log.slice(served).some((l) => l.url === '/' && l.status === 200),
      'the page came from this server',
    );

    const removed = trust(['--uninstall']);
    assert.equal(removed.code, 0, removed.out);
    assert.match(removed.out, /nss .*\.pki\/nssdb: removed/);
    const after = await visit(server.port);
    assert.ok('error' in after, 'after --uninstall the CA must not be trusted');
    assert.match(after.error, /ERR_CERT_AUTHORITY_INVALID/);
  });
});
