// 103 Early Hints from the static handler over HTTP/1.1, read on a raw socket against a real server on
// 127.0.0.1:0: who gets the 103, what it lists, and that a page's hints follow its file version.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseServeFlags } from '../../../src/cli/main.js';
import { parseConfig } from '../../../src/config/load.js';
import { makeSite, raw, removeSite, startServer, type TestServer } from '../../helpers/http.js';
import { waitUntil } from '../../helpers/wait.js';

const CSS = '/assets/main-3f2a9c1b.css';
const JS = '/assets/app-B-x9aZ_k.js';
const FONT = '/assets/inter-9b8c7d6e.woff2';
const VENDOR = 'export const vendor = 1;\n';
const V = createHash('sha256').update(VENDOR).digest('base64url').slice(0, 10);

const PAGE = `<!doctype html><html><head>
<link rel=stylesheet href="${CSS}">
<link rel=preload as=font href="${FONT}" type=font/woff2>
<script type=module src="${JS}"></script>
<script src="/vendor.js?v=${V}"></script>
<script src="/vendor.js?v=AAAAAAAAAA"></script>
<link rel=stylesheet href="/plain.css">
<script src="docs-9b8c7d6e.js"></script>
</head><body>home</body></html>`;

const HINTS = [
  `<${CSS}>; rel=preload; as=style`,
  `<${FONT}>; rel=preload; as=font; crossorigin`,
  `<${JS}>; rel=modulepreload`,
  `</vendor.js?v=${V}>; rel=preload; as=script`,
  '</docs-9b8c7d6e.js>; rel=preload; as=script',
];

function site(): Record<string, string> {
  return {
    'index.html': PAGE,
    'docs/index.html':
      '<link rel=stylesheet href="guide-3f2a9c1b.css"><link rel=stylesheet href="/assets/main-3f2a9c1b.css">',
    'fresh.html': `<link rel=stylesheet href="${CSS}">`,
    'big.html': `<link rel=stylesheet href="${CSS}">${'<p>filler</p>\n'.repeat(200)}`,
    'app.js': 'console.log(1)',
    'vendor.js': VENDOR,
    'plain.css': 'body{}',
    [CSS.slice(1)]: 'body{color:red}',
  };
}

interface Exchange {
  /** The interim responses' heads, in order. */
  interim: string[];
  /** The final response's status line and head. */
  final: string;
}

/** One request on a fresh connection (Connection: close), the raw answer split into 1xx heads and the final head. */
async function exchange(
  port: number,
  path: string,
  headers: string[] = [],
  first = 'GET',
  version = '1.1',
): Promise<Exchange> {
  const text = await raw(
    port,
    `${first} ${path} HTTP/${version}\r\nHost: 127.0.0.1\r\n${headers.map((h) => `${h}\r\n`).join('')}Connection: close\r\n\r\n`,
  );
  const interim: string[] = [];
  let rest = text;
  while (/^HTTP\/1\.[01] 1\d\d /.test(rest)) {
    const end = rest.indexOf('\r\n\r\n');
    interim.push(rest.slice(0, end));
    rest = rest.slice(end + 4);
  }
  return { interim, final: rest.slice(0, rest.indexOf('\r\n\r\n')) };
}

/** The Link values of a 103 head (Node writes one `Link` field, values joined by `, `). */
function linksOf(head: string): string[] {
  const line = head.split('\r\n').find((l) => /^link:/i.test(l));
  return line === undefined
    ? []
    : line
        .slice(line.indexOf(':') + 1)
        .trim()
        .split(', ');
}

const NAVIGATE = ['Sec-Fetch-Mode: navigate', 'Sec-Fetch-Dest: document', 'Accept: text/html'];

describe('103 Early Hints over HTTP/1.1 (static.earlyHints on by default)', () => {
  let dir: string;
  let s: TestServer;
  before(async () => {
    dir = makeSite(site());
    s = await startServer(dir, { static: { spa: true, maxCachedFileBytes: 1024 } });
  });
  after(async () => {
    await s.close();
    removeSite(dir);
  });

  it('browser navigation: one 103 with the hashed and verified ?v= assets, then the 200', async () => {
    const x = await exchange(s.port, '/', NAVIGATE);
    assert.equal(x.interim.length, 1, x.interim.join('\n---\n'));
    assert.match(x.interim[0]!, /^HTTP\/1\.1 103 Early Hints\r\n/);
    assert.deepEqual(linksOf(x.interim[0]!), HINTS);
    assert.match(x.final, /^HTTP\/1\.1 200 /);
  });

  it('Sec-Fetch-Dest: document alone is enough', async () => {
    const x = await exchange(s.port, '/', ['Sec-Fetch-Dest: document']);
    assert.equal(x.interim.length, 1);
  });

  it('Expect: 100-continue client gets it', async () => {
    const x = await exchange(s.port, '/', ['Expect: 100-continue']);
    assert.ok(
      x.interim.some((h) => h.startsWith('HTTP/1.1 103 ')),
      x.interim.join('\n'),
    );
  });

  it('plain request (curl-like, no 1xx signal): no 103', async () => {
    const x = await exchange(s.port, '/', ['Accept: */*']);
    assert.deepEqual(x.interim, []);
    assert.match(x.final, /^HTTP\/1\.1 200 /);
  });

  it('HTTP/1.0 client, even navigating: no 103 (RFC 9110 §15.2)', async () => {
    const x = await exchange(s.port, '/', NAVIGATE, 'GET', '1.0');
    assert.deepEqual(x.interim, []);
    assert.match(x.final, / 200 /);
  });

  it('HEAD: no 103', async () => {
    const x = await exchange(s.port, '/', NAVIGATE, 'HEAD');
    assert.deepEqual(x.interim, []);
    assert.match(x.final, / 200 /);
  });

  it('304 (If-None-Match matches): no 103', async () => {
    const first = await exchange(s.port, '/', NAVIGATE);
    const etag = /\r\nETag: ([^\r]+)/i.exec(first.final)![1]!;
    const x = await exchange(s.port, '/', [...NAVIGATE, `If-None-Match: ${etag}`]);
    assert.match(x.final, / 304 /);
    assert.deepEqual(x.interim, []);
  });

  it('206 (Range): no 103', async () => {
    const x = await exchange(s.port, '/', [...NAVIGATE, 'Range: bytes=0-9']);
    assert.match(x.final, / 206 /);
    assert.deepEqual(x.interim, []);
  });

  it('412 (If-Match fails): no 103', async () => {
    const x = await exchange(s.port, '/', [...NAVIGATE, 'If-Match: "nope"']);
    assert.match(x.final, / 412 /);
    assert.deepEqual(x.interim, []);
  });

  it('a non-HTML file: no 103', async () => {
    const x = await exchange(s.port, '/app.js', NAVIGATE);
    assert.deepEqual(x.interim, []);
    assert.match(x.final, / 200 /);
  });

  it('relative hrefs resolve against the page directory (/docs/)', async () => {
    const x = await exchange(s.port, '/docs/', NAVIGATE);
    assert.deepEqual(linksOf(x.interim[0]!), [
      '</docs/guide-3f2a9c1b.css>; rel=preload; as=style',
      `<${CSS}>; rel=preload; as=style`,
    ]);
  });

  it('SPA fallback served at another path: only the root-relative hints', async () => {
    const x = await exchange(s.port, '/app/some/route', NAVIGATE);
    assert.match(x.final, / 200 /);
    assert.deepEqual(
      linksOf(x.interim[0]!),
      HINTS.filter((h) => !h.includes('docs-')),
    );
  });

  it('a page streamed from disk (bigger than maxCachedFileBytes) is scanned too', async () => {
    const x = await exchange(s.port, '/big.html', NAVIGATE);
    assert.deepEqual(linksOf(x.interim[0]!), [`<${CSS}>; rel=preload; as=style`]);
  });

  it('concurrent first requests for a page all get its 103 (they share one computation)', async () => {
    const xs = await Promise.all(Array.from({ length: 6 }, () => exchange(s.port, '/fresh.html', NAVIGATE)));
    for (const x of xs) {
      assert.match(x.final, / 200 /);
      assert.deepEqual(linksOf(x.interim[0] ?? ''), [`<${CSS}>; rel=preload; as=style`]);
    }
  });

  it('a changed page gets new hints (computed per file version)', async () => {
    const before = await exchange(s.port, '/docs/', NAVIGATE);
    assert.equal(linksOf(before.interim[0]!).length, 2);
    writeFileSync(
      join(dir, 'docs/index.html'),
      '<script type=module src="/assets/next-Zz9yX8wV.js"></script>',
    );
    await waitUntil('the new hints are sent', async () => {
      const x = await exchange(s.port, '/docs/', NAVIGATE);
      return (
        x.interim.length === 1 &&
        linksOf(x.interim[0]!).join() === '</assets/next-Zz9yX8wV.js>; rel=modulepreload'
      );
    });
    writeFileSync(join(dir, 'docs/index.html'), '<p>no assets</p>');
    await waitUntil('no 103 for a page without assets', async () => {
      const x = await exchange(s.port, '/docs/', NAVIGATE);
      return x.interim.length === 0 && x.final.includes(' 200 ');
    });
  });
});

describe('static.earlyHints switch and cap', () => {
  const cases: [string, unknown, number][] = [
    ['earlyHints: false -> no 103', false, 0],
    ['earlyHints: { enabled: false } -> no 103', { enabled: false }, 0],
    ['earlyHints: { max: 2 } -> two Link values', { max: 2 }, 2],
    ['earlyHints: true -> all five', true, 5],
  ];
  for (const [name, earlyHints, want] of cases) {
    it(name, async () => {
      const dir = makeSite(site());
      const s = await startServer(dir, { static: { earlyHints } as never });
      try {
        const x = await exchange(s.port, '/', NAVIGATE);
        assert.match(x.final, / 200 /);
        if (want === 0) assert.deepEqual(x.interim, []);
        else assert.deepEqual(linksOf(x.interim[0]!), HINTS.slice(0, want));
      } finally {
        await s.close();
        removeSite(dir);
      }
    });
  }
});

describe('--no-early-hints', () => {
  it('turns static.earlyHints off, beside --spa', () => {
    const { overrides } = parseServeFlags(['--spa', '--no-early-hints']);
    const c = parseConfig({ ...overrides, root: '/srv' });
    assert.deepEqual(c.static.earlyHints, { enabled: false, max: 16 });
    assert.equal(c.static.spa, true);
  });

  it('absent: on, with the default cap', () => {
    const c = parseConfig({ ...parseServeFlags([]).overrides, root: '/srv' });
    assert.deepEqual(c.static.earlyHints, { enabled: true, max: 16 });
  });

  it('bad config names the key', () => {
    assert.throws(() => parseConfig({ static: { earlyHints: { max: -1 } } }), /static\.earlyHints/);
    assert.throws(() => parseConfig({ static: { earlyHints: 'yes' } }), /static\.earlyHints/);
    assert.throws(
      () => parseConfig({ static: { earlyHints: { enabled: true, extra: 1 } } }),
      /static\.earlyHints/,
    );
  });
});
