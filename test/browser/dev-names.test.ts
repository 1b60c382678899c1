// The development certificate for names the user lists (`gatehouse serve --https --name ...`, as
// `mkcert NAME...`), in real Chromium with no certificate flags: the dev CA is trusted the way a user
// trusts it (`gatehouse trust` into $HOME/.pki/nssdb of a fresh HOME), the names are mapped to
// loopback with --host-resolver-rules (no traffic leaves the machine), and the server listens on
// 127.0.0.2, standing in for a LAN address. Listed names and the listed address load; a name not
// listed is refused for its name, so the pass is the certificate's names, not a trust shortcut.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  describeBrowser,
  type LaunchedBrowser,
  launchBrowser,
  type ServedGatehouse,
  serveCli,
} from '../helpers/browser.js';

const BIN = fileURLToPath(new URL('../../bin/gatehouse.js', import.meta.url));
const base = mkdtempSync(join(tmpdir(), 'gatehouse-dev-names-'));
const home = join(base, 'home');
const dataDir = join(base, 'data');
const root = join(base, 'site');
/** A loopback address other than 127.0.0.1, in the role of the machine's LAN address. */
const LAN = '127.0.0.2';

describeBrowser('serve --https --name: the dev certificate for listed names in Chromium', () => {
  let server: ServedGatehouse;
  let browser: LaunchedBrowser;

  before(async () => {
    mkdirSync(home);
    mkdirSync(root);
    writeFileSync(join(root, 'index.html'), '<!doctype html><title>named</title><p>hello</p>');
    server = await serveCli(
      root,
      [
        '--https',
        ...['--name', 'myapp.test', '--name', '*.myapp.test', '--name', '*.test', '--name', LAN],
        ...['--host', LAN],
      ],
      0,
      { GATEHOUSE_DATA_DIR: dataDir },
    );
    const trusted = spawnSync(process.execPath, [BIN, 'trust', '--stores', 'nss'], {
      encoding: 'utf8',
      env: { ...process.env, HOME: home, GATEHOUSE_DATA_DIR: dataDir },
    });
    assert.equal(trusted.status, 0, `${trusted.stdout}${trusted.stderr}`);
    // Every name below resolves to the server's loopback address, in this Chromium only.
    const rules = ['myapp.test', 'api.myapp.test', 'x.test', 'other.example']
      .map((h) => `MAP ${h} ${LAN}`)
      .join(', ');
    browser = await launchBrowser([`--host-resolver-rules=${rules}`], { env: { HOME: home } });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    rmSync(base, { recursive: true, force: true });
  });

  /** Loads https://HOST:PORT/ in a new tab: its status, or Chromium's error text. */
  async function visit(host: string): Promise<{ status: number } | { error: string }> {
    const page = await browser.context.newPage();
    try {
      const res = await page.goto(`https://${host}:${server.port}/`);
      return { status: res?.status() ?? 0 };
    } catch (err) {
      return { error: (err as Error).message };
    } finally {
      await page.close();
    }
  }

  it('the server listens on the listed address', () => {
    assert.equal(server.url, `https://${LAN}:${server.port}`);
  });

  for (const host of ['myapp.test', 'api.myapp.test', LAN]) {
    it(`https://${host}:PORT/ loads trusted, with no certificate flags`, async () => {
      const seen = server.log.length;
      assert.deepEqual(await visit(host), { status: 200 });
      assert.ok(
        server.log.slice(seen).some((l) => l.url === '/' && l.status === 200),
        'the page came from this server',
      );
    });
  }

  it('control: a name not listed is refused for its name (ERR_CERT_COMMON_NAME_INVALID)', async () => {
    const r = await visit('other.example');
    assert.ok('error' in r, 'other.example is not on the certificate');
    assert.match(r.error, /ERR_CERT_COMMON_NAME_INVALID/);
  });

  it('*.test is on the certificate but Chromium matches no wildcard under a top-level name', async () => {
    const r = await visit('x.test');
    assert.ok('error' in r, 'x.test must not match *.test');
    assert.match(r.error, /ERR_CERT_COMMON_NAME_INVALID/);
  });
});
