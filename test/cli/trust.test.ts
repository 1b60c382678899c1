// gatehouse trust (issue 26 §4): real certutil on NSS databases in a fresh HOME, and Debian's real
// update-ca-certificates pointed at a temporary system store (--localcertsdir and friends), so the test
// never touches the machine's own trust. Chromium's side: test/browser/trust.test.ts.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { type SystemStore, trustCommand, trustDevCa } from '../../src/cli/trust.js';

const base = mkdtempSync(join(tmpdir(), 'gatehouse-trust-cli-'));
after(() => rmSync(base, { recursive: true, force: true }));
let n = 0;

function fresh() {
  const dir = join(base, String(++n));
  const home = join(dir, 'home');
  mkdirSync(home, { recursive: true });
  return { dir, home, dataDir: join(dir, 'data') };
}

/**
 * Debian's update-ca-certificates, every folder it reads or writes redirected into `dir`, with one
 * Mozilla root of the machine's own store in it (a system store is never empty; an empty one is never
 * rebuilt).
 */
function systemStore(dir: string): SystemStore & { bundle: string; other: string } {
  const local = join(dir, 'local');
  for (const d of ['local', 'share/mozilla', 'etc', 'hooks']) mkdirSync(join(dir, d), { recursive: true });
  const other = '/usr/share/ca-certificates/mozilla/ISRG_Root_X1.crt';
  copyFileSync(other, join(dir, 'share/mozilla/ISRG_Root_X1.crt'));
  const command = [
    'update-ca-certificates',
    '--localcertsdir',
    local,
    '--certsdir',
    join(dir, 'share'),
    '--etccertsdir',
    join(dir, 'etc'),
    '--hooksdir',
    join(dir, 'hooks'),
  ];
  return {
    dir: local,
    command,
    removeCommand: [...command, '--fresh'],
    bundle: join(dir, 'etc', 'ca-certificates.crt'),
    other: readFileSync(other, 'utf8').trim(),
  };
}

const nicknames = (db: string): string =>
  spawnSync('certutil', ['-L', '-d', `sql:${db}`], { encoding: 'utf8' }).stdout;

describe('trustDevCa', () => {
  it('a fresh HOME: creates ~/.pki/nssdb and adds the CA with C,, trust; --uninstall removes it', async () => {
    const t = fresh();
    const db = join(t.home, '.pki', 'nssdb');
    assert.equal(existsSync(db), false);
    const r = await trustDevCa({ home: t.home, dataDir: t.dataDir, stores: ['nss'] });
    assert.deepEqual(
      r.steps.map((s) => [s.store, s.target, s.outcome]),
      [['nss', db, 'installed']],
    );
    assert.match(nicknames(db), /Gatehouse development CA [0-9a-f]{16}\s+C,,/);
    const again = await trustDevCa({ home: t.home, dataDir: t.dataDir, stores: ['nss'] });
    assert.equal(again.steps[0]?.outcome, 'installed', 'installing twice is harmless');
    assert.equal((nicknames(db).match(/Gatehouse development CA/g) ?? []).length, 1);
    const u = await trustDevCa({ home: t.home, dataDir: t.dataDir, stores: ['nss'], uninstall: true });
    assert.deepEqual(
      u.steps.map((s) => s.outcome),
      ['removed'],
    );
    assert.doesNotMatch(nicknames(db), /Gatehouse/);
    const none = await trustDevCa({ home: t.home, dataDir: t.dataDir, stores: ['nss'], uninstall: true });
    assert.deepEqual(
      none.steps.map((s) => s.outcome),
      ['absent'],
    );
  });

  it('every Firefox profile with a database gets it too; one without a database is left alone', async () => {
    const t = fresh();
    const profile = join(t.home, '.mozilla', 'firefox', 'abcd.default-release');
    const empty = join(t.home, '.mozilla', 'firefox', 'empty.profile');
    mkdirSync(profile, { recursive: true });
    mkdirSync(empty, { recursive: true });
    assert.equal(spawnSync('certutil', ['-N', '-d', `sql:${profile}`, '--empty-password']).status, 0);
    const r = await trustDevCa({ home: t.home, dataDir: t.dataDir, stores: ['nss'] });
    assert.deepEqual(r.steps.map((s) => s.target).sort(), [join(t.home, '.pki', 'nssdb'), profile].sort());
    assert.match(nicknames(profile), /Gatehouse development CA/);
    assert.equal(existsSync(join(empty, 'cert9.db')), false);
  });

  it('the system store: the CA lands in the bundle update-ca-certificates builds, and leaves it on --uninstall', async () => {
    const t = fresh();
    const store = systemStore(join(t.dir, 'system'));
    const r = await trustDevCa({ home: t.home, dataDir: t.dataDir, stores: ['system'], system: store });
    assert.equal(r.steps[0]?.outcome, 'installed', r.steps[0]?.detail);
    const caPem = readFileSync(r.caPath, 'utf8').trim();
    assert.ok(readFileSync(store.bundle, 'utf8').includes(caPem), 'the bundle holds the CA');
    assert.ok(readFileSync(store.bundle, 'utf8').includes(store.other), 'and the roots it had');
    const u = await trustDevCa({
      home: t.home,
      dataDir: t.dataDir,
      stores: ['system'],
      system: store,
      uninstall: true,
    });
    assert.equal(u.steps[0]?.outcome, 'removed', u.steps[0]?.detail);
    assert.ok(!readFileSync(store.bundle, 'utf8').includes(caPem), 'the bundle no longer holds it');
    assert.ok(readFileSync(store.bundle, 'utf8').includes(store.other), 'but keeps the others');
  });

  it('no certutil: the NSS step fails naming the package to install', async () => {
    const t = fresh();
    const r = await trustDevCa({
      home: t.home,
      dataDir: t.dataDir,
      stores: ['nss'],
      certutil: join(t.dir, 'no-such-certutil'),
    });
    assert.equal(r.steps[0]?.outcome, 'failed');
    assert.match(r.steps[0]?.detail ?? '', /libnss3-tools/);
  });
});

describe('gatehouse trust: the command', () => {
  async function run(args: string[], t = fresh()) {
    let out = '';
    let err = '';
    const code = await trustCommand(args, {
      cwd: t.dir,
      home: t.home,
      dataDir: t.dataDir,
      stdout: { write: (s: string) => (out += s) },
      stderr: { write: (s: string) => (err += s) },
    });
    return { code, out, err };
  }

  it('--stores with an unknown store -> exit 2 naming it', async () => {
    const r = await run(['--stores', 'nss,keychain']);
    assert.equal(r.code, 2);
    assert.match(r.err, /--stores: nss or system, got keychain/);
  });

  it('an unknown flag -> exit 2', async () => {
    const r = await run(['--instal']);
    assert.equal(r.code, 2);
    assert.match(r.err, /--instal/);
  });

  it('--uninstall with no development CA -> nothing to remove, exit 0, no CA made', async () => {
    const t = fresh();
    const r = await run(['--uninstall'], t);
    assert.equal(r.code, 0);
    assert.match(r.out, /nothing to remove/);
    assert.equal(existsSync(t.dataDir), false);
  });

  it('--stores nss prints one line per database it changed', async () => {
    const t = fresh();
    const r = await run(['--stores', 'nss'], t);
    assert.equal(r.code, 0, r.out + r.err);
    assert.match(r.out, /installing the development CA .*ca\.pem\n {2}nss .*\.pki\/nssdb: installed\n/);
  });
});

/** Every file and folder under `dirs`: path -> mode, size, mtime and a hash of the bytes. */
function snapshot(...dirs: string[]): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (p: string) => {
    if (!existsSync(p)) return out.set(p, 'absent');
    const st = statSync(p);
    if (st.isDirectory()) {
      out.set(p, `dir ${st.mode.toString(8)} ${st.mtimeMs}`);
      for (const e of readdirSync(p)) walk(join(p, e));
    } else {
      const hash = createHash('sha256').update(readFileSync(p)).digest('hex');
      out.set(p, `file ${st.mode.toString(8)} ${st.size} ${st.mtimeMs} ${hash}`);
    }
  };
  for (const d of dirs) walk(d);
  return out;
}

describe('gatehouse trust --dry-run: lists the stores and files, changes nothing', () => {
  async function run(args: string[], t: ReturnType<typeof fresh>, system: SystemStore) {
    let out = '';
    let err = '';
    const code = await trustCommand(args, {
      cwd: t.dir,
      home: t.home,
      dataDir: t.dataDir,
      system,
      stdout: { write: (s: string) => (out += s) },
      stderr: { write: (s: string) => (err += s) },
    });
    return { code, out, err };
  }

  it('install, reinstall and --uninstall, each dry: every database and the system file named, none touched', async () => {
    const t = fresh();
    const store = systemStore(join(t.dir, 'system'));
    const chromium = join(t.home, '.pki', 'nssdb');
    const firefox = join(t.home, '.mozilla', 'firefox', 'abcd.default-release');
    mkdirSync(firefox, { recursive: true });
    assert.equal(spawnSync('certutil', ['-N', '-d', `sql:${firefox}`, '--empty-password']).status, 0);
    const watched = [t.home, t.dataDir, join(t.dir, 'system')];

    // Nothing made yet: no CA, no Chromium database.
    let before = snapshot(...watched);
    const dry = await run(['--dry-run'], t, store);
    assert.equal(dry.code, 0, dry.out + dry.err);
    assert.deepEqual(snapshot(...watched), before, 'a dry run changes no file');
    assert.equal(existsSync(t.dataDir), false, 'no CA is made');
    assert.equal(existsSync(chromium), false, "Chromium's database is not created");
    assert.match(dry.out, /^dry run: nothing is changed\n/);
    assert.match(dry.out, /would install the development CA .*ca\.pem \(made first: it does not exist yet\)/);
    assert.match(dry.out, new RegExp(`nss ${chromium}: would install \\(create the database, then add`));
    assert.match(dry.out, new RegExp(`nss ${firefox}: would install \\(add "Gatehouse development CA`));
    assert.match(
      dry.out,
      new RegExp(
        `system ${store.dir}/gatehouse-development-ca-\\S+\\.crt: would install \\(copy the CA there, then run update-ca-certificates`,
      ),
    );
    assert.doesNotMatch(dry.out, /restart the browser/);

    // Installed for real; a dry run again sees it there, and a dry --uninstall would remove each.
    const real = await run([], t, store);
    assert.equal(real.code, 0, real.out + real.err);
    const fileName = /system (\S+\.crt): installed/.exec(real.out)?.[1];
    assert.ok(fileName !== undefined && existsSync(fileName), real.out);
    before = snapshot(...watched);
    const again = await run(['--dry-run'], t, store);
    assert.equal(again.code, 0, again.out + again.err);
    assert.match(again.out, new RegExp(`nss ${chromium}: already installed`));
    assert.match(again.out, new RegExp(`nss ${firefox}: already installed`));
    assert.match(again.out, new RegExp(`system ${fileName}: already installed`));
    const dryRemove = await run(['--uninstall', '--dry-run'], t, store);
    assert.equal(dryRemove.code, 0, dryRemove.out + dryRemove.err);
    assert.match(dryRemove.out, /would remove the development CA .*ca\.pem\n/);
    assert.match(dryRemove.out, new RegExp(`nss ${chromium}: would remove`));
    assert.match(dryRemove.out, new RegExp(`nss ${firefox}: would remove`));
    assert.match(
      dryRemove.out,
      new RegExp(`system ${fileName}: would remove \\(delete it, then run update-ca-certificates`),
    );
    assert.deepEqual(snapshot(...watched), before, 'dry runs change no file');
    assert.match(nicknames(chromium), /Gatehouse development CA/, 'still trusted');
    assert.match(nicknames(firefox), /Gatehouse development CA/, 'still trusted');
  });
});
