import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { precompressDir } from '../../src/build/precompress.js';
import { type CommandIO, precompressCommand } from '../../src/cli/precompress.js';

const scratch: string[] = [];
after(() => Promise.all(scratch.map((d) => rm(d, { recursive: true, force: true }))));

/** A fresh temp folder holding `files` (path -> contents). */
async function site(files: Record<string, string | Buffer>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'gatehouse-precompress-'));
  scratch.push(root);
  for (const [path, body] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), body);
  }
  return root;
}

/** Text that compresses well, different per seed, of about `sizeBytes`. */
function text(seed: string, sizeBytes = 4000): string {
  let out = '';
  for (let i = 0; out.length < sizeBytes; i++) out += `${seed} line ${i}: the quick brown fox ${i % 7}\n`;
  return out;
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function run(args: string[], opts: { tty?: boolean } = {}): Promise<Run> {
  const out = { stdout: '', stderr: '' };
  const io: CommandIO = {
    stdout: { write: (s: string) => (out.stdout += s) },
    stderr: { isTTY: opts.tty ?? false, columns: 60, write: (s: string) => (out.stderr += s) },
  };
  const code = await precompressCommand(args, io);
  return { code, ...out };
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** Every file under root, relative, sorted. */
async function listing(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() || e.isSymbolicLink())
    .map((e) => join(e.parentPath, e.name).slice(root.length + 1))
    .sort();
}

function kB(bytes: number): string {
  return `${(bytes / 1000).toFixed(1)} kB`;
}

async function sizeOf(path: string): Promise<number> {
  return (await stat(path)).size;
}

describe('precompress: what gets written', () => {
  test('siblings decompress to the exact original bytes, dated no earlier than the file', async () => {
    const files = {
      'index.html': text('html'),
      'assets/app.js': text('js', 20_000),
      'assets/app.css': text('css'),
      'assets/logo.svg': `<svg xmlns="http://www.w3.org/2000/svg">${text('svg')}</svg>`,
      'data/feed.json': JSON.stringify({ items: text('json').split('\n') }),
      'assets/module.wasm': Buffer.concat([Buffer.from([0, 0x61, 0x73, 0x6d]), Buffer.alloc(5000, 7)]),
      'fonts/body.ttf': Buffer.from(text('ttf')),
    };
    const root = await site(files);
    const r = await run([root]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    for (const [path, body] of Object.entries(files)) {
      const original = Buffer.from(body);
      const abs = join(root, path);
      const br = await readFile(`${abs}.br`);
      const gz = await readFile(`${abs}.gz`);
      assert.deepEqual(brotliDecompressSync(br), original, `${path}.br`);
      assert.deepEqual(gunzipSync(gz), original, `${path}.gz`);
      assert.ok(br.length < original.length && gz.length < original.length, path);
      const fileMtimeMs = (await stat(abs)).mtimeMs;
      assert.ok((await stat(`${abs}.br`)).mtimeMs >= fileMtimeMs, `${path}.br mtime`);
      assert.ok((await stat(`${abs}.gz`)).mtimeMs >= fileMtimeMs, `${path}.gz mtime`);
    }
    assert.match(r.stdout, /^precompressed 7 files \(0 skipped, 0 not worth it\): /);
  });

  test('small files, images, woff/woff2, unknown types and existing siblings are left alone', async () => {
    const root = await site({
      'small.js': 'console.log(1);\n'.repeat(10),
      'photo.png': Buffer.from(text('png')),
      'photo.jpg': Buffer.from(text('jpg')),
      'font.woff2': Buffer.from(text('woff2')),
      'font.woff': Buffer.from(text('woff')),
      'blob.bin': Buffer.from(text('bin')),
      'old.js.br': Buffer.from(text('br')),
      'old.js.gz': Buffer.from(text('gz')),
      'archive.tar.gz': Buffer.from(text('tar')),
    });
    const before = await listing(root);
    const r = await run([root]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await listing(root), before);
    assert.match(r.stdout, /^precompressed 0 files \(0 skipped, 0 not worth it\)/);
  });

  test('--min-bytes sets the size threshold (default 1024)', async () => {
    const body = 'console.log("hi");\n'.repeat(40); // 760 bytes
    const root = await site({ 'a.js': body });
    await run([root]);
    assert.equal(await exists(join(root, 'a.js.br')), false);
    const r = await run([root, '--min-bytes', '500']);
    assert.equal(r.code, 0);
    assert.deepEqual(brotliDecompressSync(await readFile(join(root, 'a.js.br'))), Buffer.from(body));
    assert.match(
      (await run(['--min-bytes=10000', root, '--force'])).stdout,
      /^precompressed 0 files \(0 skipped/,
    );
  });

  test('dot folders are skipped, .well-known at the top is included', async () => {
    const root = await site({
      '.git/objects/x.js': text('git'),
      '.cache/page.html': text('cache'),
      'sub/.hidden/y.css': text('hidden'),
      'sub/.well-known/nested.json': text('nested'),
      '.well-known/security.txt': text('security'),
      '.well-known/assetlinks.json': text('assetlinks'),
      '.env.json': text('dotfile'),
    });
    const r = await run([root]);
    assert.equal(r.code, 0, r.stderr);
    const written = (await listing(root)).filter((p) => p.endsWith('.br'));
    assert.deepEqual(written, [
      '.env.json.br',
      '.well-known/assetlinks.json.br',
      '.well-known/security.txt.br',
    ]);
  });

  test('symlinks are not followed: linked files and folders get no siblings', async () => {
    const outside = await site({ 'lib.js': text('outside'), 'dir/deep.js': text('deep') });
    const root = await site({ 'real.js': text('real') });
    await symlink(join(outside, 'lib.js'), join(root, 'link.js'));
    await symlink(join(outside, 'dir'), join(root, 'linkdir'));
    const r = await run([root]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await listing(root), ['link.js', 'linkdir', 'real.js', 'real.js.br', 'real.js.gz']);
    assert.deepEqual(await listing(outside), ['dir/deep.js', 'lib.js']);
  });

  test('a file that does not get smaller gets no sibling, and a stale one is deleted', async () => {
    const noise = randomBytes(4096);
    const root = await site({ 'noise.txt': noise, 'noise2.wasm': randomBytes(3000), 'ok.js': text('ok') });
    await writeFile(join(root, 'noise.txt.gz'), 'stale');
    await utimes(join(root, 'noise.txt.gz'), new Date(1_000_000_000_000), new Date(1_000_000_000_000));
    const r = await run([root]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await listing(root), ['noise.txt', 'noise2.wasm', 'ok.js', 'ok.js.br', 'ok.js.gz']);
    assert.match(r.stdout, /^precompressed 1 file \(0 skipped, 2 not worth it\)/);
    // Nothing to remember "not worth it" by: the next run compresses and drops them again.
    assert.match((await run([root])).stdout, /^precompressed 0 files \(1 skipped, 2 not worth it\)/);
  });
});

describe('precompress: up to date, stale, --force', () => {
  test('a second run skips up-to-date files; --force redoes them', async () => {
    const root = await site({ 'a.js': text('a'), 'b.css': text('b') });
    assert.match((await run([root])).stdout, /^precompressed 2 files \(0 skipped, 0 not worth it\)/);
    // Plant a wrong but newer .br: only --force may replace it.
    const br = join(root, 'a.js.br');
    await writeFile(br, 'not brotli');
    const second = await run([root]);
    assert.match(
      second.stdout,
      /^precompressed 0 files \(2 skipped, 0 not worth it\): 0\.0 kB -> br 0\.0 kB/,
    );
    assert.equal(await readFile(br, 'utf8'), 'not brotli');
    const forced = await run([root, '--force']);
    assert.match(forced.stdout, /^precompressed 2 files \(0 skipped, 0 not worth it\)/);
    assert.equal(brotliDecompressSync(await readFile(br)).toString(), text('a'));
  });

  test('a sibling older than its file is rewritten; a current one is kept', async () => {
    const root = await site({ 'app.js': text('app') });
    const js = join(root, 'app.js');
    const fileMtime = (await stat(js)).mtime;
    await writeFile(`${js}.gz`, 'stale gzip');
    await utimes(`${js}.gz`, fileMtime, new Date(fileMtime.getTime() - 60_000));
    await writeFile(`${js}.br`, 'current brotli (planted)');
    await utimes(`${js}.br`, fileMtime, new Date(fileMtime.getTime() + 60_000));
    const r = await run([root]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(gunzipSync(await readFile(`${js}.gz`)).toString(), text('app'));
    assert.equal(await readFile(`${js}.br`, 'utf8'), 'current brotli (planted)');
    // The kept .br counts with its own size in the summary.
    const gz = await sizeOf(`${js}.gz`);
    const x = await sizeOf(js);
    const brSize = 'current brotli (planted)'.length;
    const pct = (y: number) => Math.round((1 - y / x) * 100);
    assert.equal(
      r.stdout,
      `precompressed 1 file (0 skipped, 0 not worth it): ${kB(x)} -> br ${kB(brSize)} (-${pct(brSize)}%), gz ${kB(gz)} (-${pct(gz)}%)\n`,
    );
  });

  test('a file dated in the future gets siblings dated no earlier', async () => {
    const root = await site({ 'future.js': text('future') });
    const js = join(root, 'future.js');
    const futureSec = Math.floor(Date.now() / 1000) + 86_400 + 0.123_456_789; // sub-millisecond part on purpose
    await utimes(js, futureSec, futureSec);
    assert.equal((await run([root])).code, 0);
    const fileMtimeMs = (await stat(js)).mtimeMs;
    assert.ok((await stat(`${js}.br`)).mtimeMs >= fileMtimeMs);
    assert.ok((await stat(`${js}.gz`)).mtimeMs >= fileMtimeMs);
    assert.match((await run([root])).stdout, /\(1 skipped, /);
  });
});

describe('precompress: options and output', () => {
  test('the summary matches the files written', async () => {
    const root = await site({
      'a.js': text('a', 30_000),
      'b/c.html': text('c', 9000),
      'b/d.svg': `<svg>${text('d', 2000)}</svg>`,
      'noise.txt': randomBytes(2000),
      'tiny.css': 'a{}',
    });
    const r = await run([root]);
    assert.equal(r.code, 0, r.stderr);
    const originals = ['a.js', 'b/c.html', 'b/d.svg'].map((p) => join(root, p));
    let x = 0;
    let br = 0;
    let gz = 0;
    for (const p of originals) {
      x += await sizeOf(p);
      br += await sizeOf(`${p}.br`);
      gz += await sizeOf(`${p}.gz`);
    }
    const pct = (y: number) => Math.round((1 - y / x) * 100);
    assert.equal(
      r.stdout,
      `precompressed 3 files (0 skipped, 1 not worth it): ${kB(x)} -> br ${kB(br)} (-${pct(br)}%), gz ${kB(gz)} (-${pct(gz)}%)\n`,
    );
  });

  test('--no-brotli writes only .gz, --no-gzip only .br', async () => {
    const root = await site({ 'a.js': text('a') });
    const gzOnly = await run([root, '--no-brotli']);
    assert.deepEqual(await listing(root), ['a.js', 'a.js.gz']);
    assert.match(gzOnly.stdout, /: \d+\.\d kB -> gz \d+\.\d kB \(-\d+%\)\n$/);
    const root2 = await site({ 'a.js': text('a') });
    const brOnly = await run([root2, '--no-gzip']);
    assert.deepEqual(await listing(root2), ['a.js', 'a.js.br']);
    assert.match(brOnly.stdout, /: \d+\.\d kB -> br \d+\.\d kB \(-\d+%\)\n$/);
    // With .gz disabled, a missing .gz does not make a file out of date.
    assert.match((await run([root2, '--no-gzip'])).stdout, /\(1 skipped, /);
  });

  test('--dry-run writes and deletes nothing, and says what it would do', async () => {
    const root = await site({ 'a.js': text('a'), 'noise.txt': randomBytes(2000), 'noise.txt.br': 'stale' });
    await utimes(join(root, 'noise.txt.br'), new Date(0), new Date(0));
    const before = await listing(root);
    const r = await run([root, '--dry-run']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await listing(root), before);
    assert.match(r.stdout, /^would write a\.js\.br \(\d+\.\d kB\)$/m);
    assert.match(r.stdout, /^would write a\.js\.gz \(\d+\.\d kB\)$/m);
    assert.match(r.stdout, /^would delete noise\.txt\.br \(not smaller\)$/m);
    assert.match(r.stdout, /^would precompress 1 file \(0 skipped, 1 not worth it\): /m);
  });

  test('progress bar on a TTY stderr only; --quiet prints nothing', async () => {
    const root = await site({ 'a.js': text('a'), 'b.js': text('b') });
    const tty = await run([root], { tty: true });
    assert.match(tty.stderr, /^\r\[[#.]{20}\] 0\/2 a\.js\x1b\[K/);
    assert.ok(tty.stderr.endsWith('\r\x1b[K'), 'the bar is cleared before the summary');
    assert.match(tty.stdout, /^precompressed 2 files/);
    const plain = await run([root, '--force']);
    assert.equal(plain.stderr, '');
    const quiet = await run([root, '--force', '--quiet'], { tty: true });
    assert.deepEqual([quiet.code, quiet.stdout, quiet.stderr], [0, '', '']);
  });

  test('a file that cannot be written fails the run with exit 1 and names it', async () => {
    const root = await site({ 'a.js': text('a'), 'b.js': text('b') });
    await mkdir(join(root, 'a.js.br')); // a folder where the sibling should go
    const r = await run([root]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^gatehouse precompress: a\.js: /);
    assert.match(r.stdout, /^precompressed 1 file \(0 skipped, 0 not worth it, 1 failed\)/);
    assert.equal(gunzipSync(await readFile(join(root, 'b.js.gz'))).toString(), text('b'));
    assert.deepEqual(
      (await listing(root)).filter((p) => p.endsWith('.tmp')),
      [],
      'no temp files left behind',
    );
  });

  test('large files are streamed through the compressor', async () => {
    const body = text('big', 200_000);
    const root = await site({ 'big.js': body, 'noise.txt': randomBytes(5000) });
    const opts = {
      dir: root,
      minBytes: 1024,
      force: false,
      codings: ['br', 'gzip'] as const,
      streamAboveBytes: 0,
    };
    const dry = await precompressDir({ ...opts, dryRun: true });
    assert.deepEqual(await listing(root), ['big.js', 'noise.txt']);
    const report = await precompressDir({ ...opts, dryRun: false });
    // 200 kB is above MANIFEST_MIN_FILE_BYTES: its hash is recorded too (hash-manifest.ts).
    assert.deepEqual(await listing(root), [
      '.gatehouse-hashes.json',
      'big.js',
      'big.js.br',
      'big.js.gz',
      'noise.txt',
    ]);
    assert.equal(brotliDecompressSync(await readFile(join(root, 'big.js.br'))).toString(), body);
    assert.equal(gunzipSync(await readFile(join(root, 'big.js.gz'))).toString(), body);
    assert.equal(report.codedBytes.br, await sizeOf(join(root, 'big.js.br')));
    assert.deepEqual(dry, report, 'a dry run measures what a real run writes');
    assert.deepEqual([report.written, report.notWorthIt, report.failed], [1, 1, 0]);
  });
});

describe('precompress: hash manifests', () => {
  const hashOf = (b: string | Buffer) => createHash('sha256').update(b).digest('base64url').slice(0, 27);
  const manifestOf = async (dir: string) =>
    JSON.parse(await readFile(join(dir, '.gatehouse-hashes.json'), 'utf8')) as {
      format: string;
      version: number;
      files: Record<string, { ino: number; size: number; mtimeMs: number; ctimeMs: number; hash: string }>;
    };

  test('every file of 64 KiB and more, compressible or not, in its own folder; a dry run writes none', async () => {
    const video = randomBytes(100 * 1024);
    const big = text('big', 100_000);
    const root = await site({ 'media/clip.mp4': video, 'big.js': big, 'small.js': text('s', 4000) });
    const opts = { dir: root, minBytes: 1024, force: false, codings: ['gzip'] as const };
    await precompressDir({ ...opts, dryRun: true });
    assert.equal(await exists(join(root, '.gatehouse-hashes.json')), false, 'dry run');
    const report = await precompressDir({ ...opts, dryRun: false });
    assert.equal(report.failed, 0);
    const top = await manifestOf(root);
    assert.deepEqual([top.format, top.version], ['gatehouse-hashes', 1]);
    assert.deepEqual(Object.keys(top.files), ['big.js'], 'small.js and big.js.gz are below 64 KiB');
    const st = await stat(join(root, 'big.js'));
    assert.deepEqual(top.files['big.js'], {
      ino: st.ino,
      size: st.size,
      mtimeMs: st.mtimeMs,
      ctimeMs: st.ctimeMs,
      hash: hashOf(big),
    });
    const media = await manifestOf(join(root, 'media'));
    assert.equal(media.files['clip.mp4']?.hash, hashOf(video));
  });

  test('a rerun keeps matching entries, replaces stale ones and drops removed files', async () => {
    const root = await site({ 'a.bin': randomBytes(70_000), 'b.bin': randomBytes(70_000) });
    const opts = { dir: root, minBytes: 1024, force: false, codings: ['gzip'] as const, dryRun: false };
    await precompressDir(opts);
    const first = await manifestOf(root);
    const b2 = randomBytes(80_000);
    await writeFile(join(root, 'b.bin'), b2);
    await rm(join(root, 'a.bin'));
    await writeFile(join(root, 'c.bin'), randomBytes(70_000));
    await precompressDir(opts);
    const second = await manifestOf(root);
    assert.deepEqual(Object.keys(second.files), ['b.bin', 'c.bin']);
    assert.equal(second.files['b.bin']?.hash, hashOf(b2));
    assert.notEqual(second.files['b.bin']?.hash, first.files['b.bin']?.hash);
  });
});

describe('precompress: usage errors exit 2 with one line naming the problem', () => {
  const cases: [name: string, args: (root: string) => string[], message: RegExp][] = [
    ['unknown flag', (root) => [root, '--brotli'], /unknown option --brotli \(see /],
    ['misspelt flag', (root) => [root, '--no-gzp'], /unknown option --no-gzp \(did you mean --no-gzip\?\)/],
    ['unknown short flag', (root) => ['-f', root], /unknown option -f/],
    ['missing DIR', () => ['--force'], /missing DIR/],
    ['two DIRs', (root) => [root, root], /takes one DIR/],
    ['DIR is a file', (root) => [join(root, 'a.js')], /not a directory: .*a\.js/],
    ['DIR does not exist', (root) => [join(root, 'nope')], /does not exist: .*nope/],
    ['--min-bytes without a value', (root) => [root, '--min-bytes'], /--min-bytes needs a value/],
    ['--min-bytes not a number', (root) => [root, '--min-bytes', '1k'], /--min-bytes: not a byte count: 1k/],
    ['boolean flag with a value', (root) => [root, '--force=yes'], /--force takes no value/],
    ['both codings off', (root) => [root, '--no-brotli', '--no-gzip'], /nothing to do/],
  ];
  for (const [name, args, message] of cases) {
    test(name, async () => {
      const root = await site({ 'a.js': text('a') });
      const r = await run(args(root));
      assert.equal(r.code, 2);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, message);
      assert.match(r.stderr, /^gatehouse precompress: [^\n]+\n$/);
      assert.deepEqual(await listing(root), ['a.js']);
    });
  }

  test('--help prints usage and exits 0', async () => {
    const r = await run(['--help']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^Usage: gatehouse precompress DIR/);
    for (const flag of ['--min-bytes', '--force', '--no-brotli', '--no-gzip', '--dry-run', '--quiet']) {
      assert.ok(r.stdout.includes(flag), flag);
    }
  });
});
