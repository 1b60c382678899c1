// File access behind one interface (src/server/files/access.ts): the static handler serves a site
// held in memory (test/helpers/memory-files.ts) under a root that does not exist on disk, through a
// real server on 127.0.0.1 and real requests. A read that went to node:fs instead would find nothing
// (a 404 or a 500), so every answer here proves the handler used only the interface. Then the
// contract both implementations keep (node:fs over a temp folder, the memory one), and node:fs's
// opt-in watch.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseConfig, toServerOptions } from '../../../src/config/load.js';
import type { GatehouseConfigInput } from '../../../src/config/schema.js';
import { createGatehouse } from '../../../src/server/app/gatehouse.js';
import { type FileAccess, readAll } from '../../../src/server/files/access.js';
import { createNodeFiles, nodeFiles } from '../../../src/server/files/node.js';
import {
  createStaticHandler,
  type StandaloneStaticHandler as StaticHandler,
} from '../../../src/server/index.js';
import { get } from '../../helpers/http.js';
import { MemoryFiles } from '../../helpers/memory-files.js';
import { waitUntil } from '../../helpers/wait.js';

/** A root that is nowhere on disk. */
const ROOT = join(tmpdir(), `gatehouse-memory-site-${process.pid}-${randomBytes(6).toString('hex')}`);
/** Streamed, not kept in memory (maxCachedFileBytes below is 1024). */
const BIG = Buffer.from(Array.from({ length: 4096 }, (_, i) => String.fromCharCode(97 + (i % 26))).join(''));
const HOME = '<!doctype html><title>home</title>';

const hashOf = (b: Buffer) => createHash('sha256').update(b).digest('base64url').slice(0, 27);

const SITE = {
  'index.html': HOME,
  'app.js': 'console.log("app");\n',
  'big.txt': BIG,
  'docs/guide.txt': 'the guide',
  'docs/notes/todo.txt': 'todo',
};

const CONFIG: GatehouseConfigInput = {
  log: { format: 'off' },
  static: { maxCachedFileBytes: 1024, directoryListing: true, revalidateMs: 1000 },
};

/** The static handler alone on a clock that stands still: what it holds is trusted until told. */
async function serveStatic(
  files: FileAccess,
): Promise<{ url: string; handler: StaticHandler; server: Server }> {
  const o = toServerOptions(parseConfig({ ...CONFIG, root: ROOT }));
  const handler = createStaticHandler({
    root: o.root,
    static: o.static,
    cachePolicy: o.cachePolicy,
    files,
    nowMs: () => 1_000_000,
  });
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, handler, server };
}

async function stop(s: { handler: StaticHandler; server: Server }): Promise<void> {
  s.handler.files.close();
  s.server.closeAllConnections();
  await new Promise((r) => s.server.close(r));
}

describe('the static handler on a FileAccess of its own (a site in memory)', () => {
  let mem: MemoryFiles;
  let s: Awaited<ReturnType<typeof serveStatic>>;
  before(async () => {
    assert.equal(existsSync(ROOT), false, 'the root must not exist on disk');
    mem = new MemoryFiles(ROOT, SITE);
    s = await serveStatic(mem);
  });
  after(() => stop(s));

  it('GET of a small file: 200, its bytes, the strong ETag of its content', async () => {
    const r = await get(s.url, '/index.html');
    assert.equal(r.status, 200);
    assert.equal(r.text, HOME);
    assert.equal(r.headers.etag, `"${hashOf(Buffer.from(HOME))}"`);
    assert.match(String(r.headers['content-type']), /^text\/html/);
    assert.ok((mem.calls.get('readSized') ?? 0) > 0, 'read whole through the interface');
  });

  it('GET / answers the index file', async () => {
    const r = await get(s.url, '/');
    assert.equal(r.status, 200);
    assert.equal(r.text, HOME);
  });

  it('GET of a large file: streamed through the interface, hashed through it for its strong ETag', async () => {
    const before = mem.calls.get('stream') ?? 0;
    const r = await get(s.url, '/big.txt');
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, BIG);
    assert.equal(r.headers['content-length'], String(BIG.length));
    assert.equal(r.headers.etag, `"${hashOf(BIG)}"`);
    assert.ok((mem.calls.get('stream') ?? 0) > before);
  });

  it('HEAD: the fields of a GET, no body', async () => {
    const r = await get(s.url, '/big.txt', { method: 'HEAD' });
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-length'], String(BIG.length));
    assert.equal(r.body.length, 0);
  });

  it('Range on a streamed file -> 206 with those bytes; on a file in memory too', async () => {
    const r = await get(s.url, '/big.txt', { headers: { range: 'bytes=100-149' } });
    assert.equal(r.status, 206);
    assert.equal(r.headers['content-range'], `bytes 100-149/${BIG.length}`);
    assert.deepEqual(r.body, BIG.subarray(100, 150));
    const tail = await get(s.url, '/index.html', { headers: { range: 'bytes=-6' } });
    assert.equal(tail.status, 206);
    assert.equal(tail.text, HOME.slice(-6));
  });

  it('two ranges of a streamed file -> multipart/byteranges with both parts', async () => {
    const r = await get(s.url, '/big.txt', { headers: { range: 'bytes=0-9,4000-4009' } });
    assert.equal(r.status, 206);
    assert.match(String(r.headers['content-type']), /^multipart\/byteranges; boundary=/);
    assert.ok(r.text.includes(BIG.subarray(0, 10).toString()));
    assert.ok(r.text.includes(BIG.subarray(4000, 4010).toString()));
  });

  it('If-None-Match with the ETag -> 304 without a body', async () => {
    const { etag } = (await get(s.url, '/big.txt', { method: 'HEAD' })).headers;
    const r = await get(s.url, '/big.txt', { headers: { 'if-none-match': etag! } });
    assert.equal(r.status, 304);
    assert.equal(r.body.length, 0);
  });

  it('?v= verified on a streamed file: pinned, and read from a file opened through the interface', async () => {
    const before = mem.calls.get('open') ?? 0;
    const r = await get(s.url, `/big.txt?v=${hashOf(BIG).slice(0, 10)}`);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, BIG);
    assert.match(String(r.headers['cache-control']), /immutable/);
    assert.ok((mem.calls.get('open') ?? 0) > before);
  });

  it('a folder without an index file -> its listing, from readDir', async () => {
    const r = await get(s.url, '/docs/');
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /^text\/html/);
    assert.ok(r.text.includes('guide.txt'), r.text);
    assert.ok(r.text.includes('notes/'), r.text);
    assert.ok((mem.calls.get('readDir') ?? 0) > 0);
  });

  it('a path with nothing at it -> 404; a folder without its slash -> 301', async () => {
    assert.equal((await get(s.url, '/nothing.txt')).status, 404);
    const r = await get(s.url, '/docs');
    assert.equal(r.status, 301);
    assert.equal(r.headers.location, '/docs/');
  });

  it('watch: a change is served once the interface tells of it, not before (the clock stands still)', async () => {
    assert.equal(mem.watching(), 1, 'the view watches the root');
    // Twice: a path is kept from its second request on.
    await get(s.url, '/app.js');
    const first = await get(s.url, '/app.js');
    assert.equal(first.text, 'console.log("app");\n');
    mem.write('app.js', 'console.log("app, v2");\n');
    const unchanged = await get(s.url, '/app.js');
    assert.equal(unchanged.text, first.text, 'trusted until told (no notice yet)');
    assert.equal(unchanged.headers.etag, first.headers.etag);
    mem.notify('app.js');
    const changed = await waitUntil('the new version is served', async () => {
      const r = await get(s.url, '/app.js');
      return r.text === 'console.log("app, v2");\n' ? r : undefined;
    });
    assert.notEqual(changed.headers.etag, first.headers.etag);
  });

  it('watch: a file added to a listed folder shows in its listing once told', async () => {
    await get(s.url, '/docs/notes/');
    assert.ok(!(await get(s.url, '/docs/notes/')).text.includes('added.txt'));
    mem.write('docs/notes/added.txt', 'new');
    mem.notify('docs/notes/added.txt');
    await waitUntil('the listing names the new file', async () =>
      (await get(s.url, '/docs/notes/')).text.includes('added.txt'),
    );
  });

  it('close() stops watching', async () => {
    const other = await serveStatic(mem);
    assert.equal(mem.watching(), 2);
    await stop(other);
    assert.equal(mem.watching(), 1);
  });
});

/** The 103s' Link fields and the final status of one navigation. */
function navigate(url: string, path: string): Promise<{ links: string[]; status: number }> {
  return new Promise((resolve, reject) => {
    const links: string[] = [];
    const req = request(`${url}${path}`, { headers: { 'sec-fetch-dest': 'document' } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ links, status: res.statusCode! }));
    });
    req.on('information', (info) => {
      if (info.statusCode === 103) links.push(String(info.headers.link));
    });
    req.on('error', reject).end();
  });
}

describe('a Gatehouse given `files` (GatehouseDeps)', () => {
  it('streamed JSON wrapped as JSONP, and the early hints of a streamed page, read through the interface', async () => {
    const json = JSON.stringify({ items: Array.from({ length: 500 }, (_, i) => i) });
    const css = '/assets/main-3f2a9c1b.css';
    const page = `<link rel=stylesheet href="${css}">${'<p>filler</p>\n'.repeat(200)}`;
    const mem = new MemoryFiles(ROOT, { 'data.json': json, 'page.html': page, [css.slice(1)]: 'p{}' });
    const o = toServerOptions(parseConfig({ ...CONFIG, root: ROOT, jsonp: { paths: ['/data.json'] } }));
    const app = createGatehouse(o, { files: mem });
    const { url } = await app.listen();
    try {
      assert.ok(json.length > 1024 && page.length > 1024, 'both are streamed');
      const r = await get(url, '/data.json?callback=cb');
      assert.equal(r.status, 200);
      assert.equal(r.text, `/**/ cb(${json});`);
      const nav = await navigate(url, '/page.html');
      assert.equal(nav.status, 200);
      assert.deepEqual(nav.links, [`<${css}>; rel=preload; as=style`]);
    } finally {
      await app.close();
    }
  });

  it('serves the memory site: GET, 304, a hash manifest written through the interface', async () => {
    const mem = new MemoryFiles(ROOT, SITE);
    const o = toServerOptions(
      parseConfig({
        ...CONFIG,
        root: ROOT,
        // Hashed in the background above 1 KB: the hash is recorded in the folder's manifest.
        static: { ...CONFIG.static, hashInlineMaxBytes: 1024, hashManifest: 'write' },
      }),
    );
    const app = createGatehouse(o, { files: mem });
    const { url } = await app.listen();
    try {
      const r = await get(url, '/index.html');
      assert.equal(r.status, 200);
      assert.equal(r.text, HOME);
      const again = await get(url, '/index.html', { headers: { 'if-none-match': r.headers.etag! } });
      assert.equal(again.status, 304);
      // Above hashInlineMaxBytes: W/"size-mtime" at once, the content hash once computed in the background.
      assert.match(String((await get(url, '/big.txt')).headers.etag), /^W\//);
      await waitUntil(
        'the strong ETag',
        async () => (await get(url, '/big.txt')).headers.etag === `"${hashOf(BIG)}"`,
      );
      await waitUntil('the manifest is written through the interface', () => mem.calls.get('rename') === 1);
      const manifest = await readAll(mem.stream(join(ROOT, '.gatehouse-hashes.json'), 0));
      assert.equal(JSON.parse(manifest.toString()).files['big.txt'].hash, hashOf(BIG));
    } finally {
      await app.close();
    }
  });
});

/** The contract every FileAccess keeps, run against node:fs (a temp folder) and the memory one. */
for (const kind of ['node:fs', 'memory'] as const) {
  describe(`FileAccess contract: ${kind}`, () => {
    let root: string;
    let files: FileAccess;
    /** Replaces a file's bytes as a deploy does: a new file renamed over the name. */
    let replace: (name: string, content: string) => void;
    before(() => {
      const content = { 'a.txt': '0123456789', 'sub/b.txt': 'b', 'empty.txt': '' };
      if (kind === 'node:fs') {
        root = mkdtempSync(join(tmpdir(), 'gatehouse-files-'));
        for (const [name, text] of Object.entries(content)) {
          mkdirSync(dirname(join(root, name)), { recursive: true });
          writeFileSync(join(root, name), text);
        }
        files = nodeFiles;
        replace = (name, text) => {
          writeFileSync(join(root, `${name}.new`), text);
          renameSync(join(root, `${name}.new`), join(root, name));
        };
      } else {
        root = ROOT;
        const mem = new MemoryFiles(ROOT, content);
        files = mem;
        replace = (name, text) => mem.write(name, text);
      }
    });
    after(() => {
      if (kind === 'node:fs') rmSync(root, { recursive: true, force: true });
    });

    it('stat: a file, a folder, nothing', async () => {
      const st = await files.stat(join(root, 'a.txt'));
      assert.ok(st?.isFile());
      assert.equal(st?.size, 10);
      assert.ok((await files.stat(root))?.isDirectory());
      assert.equal(await files.stat(join(root, 'none.txt')), undefined);
    });

    it('readSized: the bytes a stat described; undefined when the file has fewer; an empty file', async () => {
      assert.equal((await files.readSized(join(root, 'a.txt'), 10))?.toString(), '0123456789');
      assert.equal((await files.readSized(join(root, 'a.txt'), 4))?.toString(), '0123');
      assert.equal(await files.readSized(join(root, 'a.txt'), 11), undefined);
      assert.equal((await files.readSized(join(root, 'empty.txt'), 0))?.length, 0);
      await assert.rejects(files.readSized(join(root, 'none.txt'), 1));
    });

    it('stream: [start, end] inclusive, to the end without end; nothing there -> an error', async () => {
      assert.equal((await readAll(files.stream(join(root, 'a.txt'), 2, 5))).toString(), '2345');
      assert.equal((await readAll(files.stream(join(root, 'a.txt'), 7))).toString(), '789');
      await assert.rejects(readAll(files.stream(join(root, 'none.txt'), 0)));
    });

    it('open: stat, read at a position, stream; the version opened, even after the name is replaced', async () => {
      const f = await files.open(join(root, 'a.txt'));
      try {
        replace('a.txt', 'replaced');
        assert.equal((await f.stat()).size, 10);
        const buf = Buffer.alloc(4);
        assert.equal(await f.read(buf, 3), 4);
        assert.equal(buf.toString(), '3456');
        assert.equal((await readAll(f.stream(8))).toString(), '89');
        assert.equal((await readAll(f.stream(0, 1))).toString(), '01');
      } finally {
        await f.close();
      }
      assert.equal((await files.readSized(join(root, 'a.txt'), 8))?.toString(), 'replaced');
      await assert.rejects(files.open(join(root, 'none.txt')));
    });

    it('readDir, createFile (only new), rename, remove', async () => {
      const names = (await files.readDir(root)).map((d) => d.name);
      assert.ok(names.includes('a.txt'));
      const made = join(root, 'made.tmp');
      await files.createFile(made, 'made');
      await assert.rejects(files.createFile(made, 'again'));
      await files.rename(made, join(root, 'made.txt'));
      assert.equal((await files.readSized(join(root, 'made.txt'), 4))?.toString(), 'made');
      assert.equal(await files.stat(made), undefined);
      await files.remove(join(root, 'made.txt'));
      assert.equal(await files.stat(join(root, 'made.txt')), undefined);
      assert.equal((await files.realPath(join(root, 'a.txt'))).endsWith('a.txt'), true);
    });
  });
}

describe('node:fs watch (createNodeFiles({ watch: true }))', () => {
  it('is off by default; on, it names a file written under the root', async () => {
    assert.equal(nodeFiles.watch, undefined);
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-watch-'));
    const seen: (string | undefined)[] = [];
    const stop = createNodeFiles({ watch: true }).watch!(dir, (p) => seen.push(p));
    try {
      writeFileSync(join(dir, 'new.txt'), 'new');
      await waitUntil('the write is told', () => seen.includes(join(dir, 'new.txt')));
    } finally {
      stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the static handler imports no node:fs', () => {
  it('no file of src/server/static/ imports node:fs or node:fs/promises', () => {
    const dir = join(import.meta.dirname, '../../../src/server/static');
    const offenders = readdirSync(dir).filter((name) =>
      /from 'node:fs(\/promises)?'/.test(readFileSync(join(dir, name), 'utf8')),
    );
    assert.deepEqual(offenders, []);
  });
});
