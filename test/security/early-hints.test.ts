// Attacks through 103 Early Hints: a page's HTML (which an attacker may partly control, e.g. user
// content in a template) must not inject fields, point browsers at other origins, or cost more than a
// bounded scan. Real server on 127.0.0.1:0, raw HTTP/1.1 sockets.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { makeSite, raw, removeSite, startServer, type TestServer } from '../helpers/http.js';

const NAVIGATE = 'Sec-Fetch-Mode: navigate\r\nSec-Fetch-Dest: document\r\nAccept: text/html\r\n';
const OK_CSS = '/assets/ok-3f2a9c1b.css';

function page(body: string): string {
  return `<!doctype html><head>${body}<link rel=stylesheet href="${OK_CSS}"></head>`;
}

const PAGES: Record<string, string> = {
  'crlf.html': page(
    '<link rel=stylesheet href="/a-3f2a9c1b.css\r\nSet-Cookie: pwned=1">' +
      '<link rel=stylesheet href="/b-3f2a9c1b.css&#13;&#10;X-Injected: 1">' +
      '<link rel=stylesheet href="/c-3f2a9c1b.css>; rel=preload; as=script, <https://evil.example/x-3f2a9c1b.js">',
  ),
  'many.html': page(
    Array.from({ length: 10_000 }, (_, i) => `<link rel=stylesheet href="/s/${i}-3f2a9c1b.css">`).join(''),
  ),
  // In /d/: `..//evil.example/x` resolves to the same-origin path //evil.example/x, which as a Link
  // target would name the host evil.example (found by the seeded fuzz, FUZZ_SEED=18).
  'd/dotslash.html': page(
    '<script src="..//evil.example/x-3f2a9c1b.js"></script>' +
      '<script src="..&#x0d;//evil.example/y-3f2a9c1b.js"></script>' +
      '<link rel=stylesheet href="/d/..//evil.example/z-3f2a9c1b.css">',
  ),
  'd/base-dotslash.html': `<!doctype html><base href="/..//evil.example/"><link rel=stylesheet href="w-3f2a9c1b.css">`,
  'cross.html': page(
    '<link rel=stylesheet href="https://evil.example/a-3f2a9c1b.css">' +
      '<link rel=stylesheet href="//evil.example/b-3f2a9c1b.css">' +
      '<link rel=stylesheet href="/\\evil.example/c-3f2a9c1b.css">' +
      '<link rel=stylesheet href=" \t//evil.example/d-3f2a9c1b.css">' +
      '<link rel=stylesheet href="/&#x2f;evil.example/e-3f2a9c1b.css">' +
      '<script src="HTTPS://EVIL.EXAMPLE/f-3f2a9c1b.js"></script>',
  ),
  'js-url.html': page(
    '<script src="javascript:alert(1)//a-3f2a9c1b.js"></script>' +
      '<script src="JaVaScRiPt:alert(1)//b-3f2a9c1b.js"></script>' +
      '<script src="\u0001javascript:alert(1)//c-3f2a9c1b.js"></script>' +
      '<script src="java&#x09;script:alert(1)//d-3f2a9c1b.js"></script>' +
      '<link rel=preload as=script href="data:text/javascript,alert(1)//e-3f2a9c1b.js">',
  ),
  'base.html': `<base href="https://evil.example/"><link rel=stylesheet href="${OK_CSS}"><script src="a-3f2a9c1b.js"></script>`,
  'hidden.html': page(
    '<!-- <link rel=stylesheet href="/hidden1-3f2a9c1b.css"> -->' +
      '<script>var t = \'<link rel=stylesheet href="/hidden2-3f2a9c1b.css">\';</script>' +
      '<textarea><link rel=stylesheet href="/hidden3-3f2a9c1b.css"></textarea>',
  ),
  'huge.html': `${'<p>padding</p>'.repeat(80_000)}<link rel=stylesheet href="/late-3f2a9c1b.css">`,
};

/** The raw answer to one navigation request (Connection: close). */
function navigate(port: number, path: string, version = '1.1'): Promise<string> {
  return raw(port, `GET ${path} HTTP/${version}\r\nHost: 127.0.0.1\r\n${NAVIGATE}Connection: close\r\n\r\n`);
}

/** The head of the 103, or undefined. */
function earlyHead(text: string): string | undefined {
  return text.startsWith('HTTP/1.1 103 ') ? text.slice(0, text.indexOf('\r\n\r\n')) : undefined;
}

function linkValues(text: string): string[] {
  const head = earlyHead(text);
  if (head === undefined) return [];
  const lines = head.split('\r\n').slice(1);
  assert.equal(lines.length, 1, `the 103 holds one field line: ${JSON.stringify(lines)}`);
  assert.match(lines[0]!, /^Link: /);
  return lines[0]!.slice(6).split(', ');
}

describe('attacks on 103 Early Hints', () => {
  let dir: string;
  let s: TestServer;
  before(async () => {
    dir = makeSite(PAGES);
    s = await startServer(dir);
  });
  after(async () => {
    await s.close();
    removeSite(dir);
  });

  it('attack: HTML with an href holding CRLF -> no header injection', async () => {
    const text = await navigate(s.port, '/crlf.html');
    const heads = text.slice(0, text.lastIndexOf('\r\n\r\n'));
    assert.doesNotMatch(heads, /^(?:Set-Cookie|X-Injected):/im);
    const links = linkValues(text);
    // The newline is dropped as the URL parser drops it; `>`, `;`, `,` and spaces are escaped, so one
    // href stays one same-origin Link value: the text after it is path, not a field or a second link.
    assert.deepEqual(links, [
      '</a-3f2a9c1b.cssSet-Cookie:%20pwned=1>; rel=preload; as=style',
      '</b-3f2a9c1b.cssX-Injected:%201>; rel=preload; as=style',
      '</c-3f2a9c1b.css%3E%3B%20rel=preload%3B%20as=script%2C%20%3Chttps://evil.example/x-3f2a9c1b.js>; rel=preload; as=style',
      `<${OK_CSS}>; rel=preload; as=style`,
    ]);
    for (const l of links) assert.match(l, /^<\/[^<>]*>; rel=preload; as=style$/);
  });

  it('attack: 10 000 link tags -> capped at max (16)', async () => {
    const text = await navigate(s.port, '/many.html');
    const links = linkValues(text);
    assert.equal(links.length, 16);
    assert.equal(links[0], '</s/0-3f2a9c1b.css>; rel=preload; as=style');
    assert.match(text, /\r\n\r\nHTTP\/1\.1 200 /);
  });

  it('attack: cross-origin href (absolute, //, /\\, entity-encoded slash) -> not hinted', async () => {
    const text = await navigate(s.port, '/cross.html');
    assert.deepEqual(linkValues(text), [`<${OK_CSS}>; rel=preload; as=style`]);
  });

  it('attack: a path that becomes //host after dot segments (in the href or the <base>) -> not hinted', async () => {
    const text = await navigate(s.port, '/d/dotslash.html');
    assert.deepEqual(linkValues(text), [`<${OK_CSS}>; rel=preload; as=style`]);
    assert.equal(earlyHead(await navigate(s.port, '/d/base-dotslash.html')), undefined);
  });

  it('attack: javascript: / data: URL (any case, controls, entities) -> not hinted', async () => {
    const text = await navigate(s.port, '/js-url.html');
    assert.deepEqual(linkValues(text), [`<${OK_CSS}>; rel=preload; as=style`]);
  });

  it('attack: <base href> to another origin -> nothing hinted (every URL would go there)', async () => {
    const text = await navigate(s.port, '/base.html');
    assert.equal(earlyHead(text), undefined);
    assert.match(text, /^HTTP\/1\.1 200 /);
  });

  it('attack: link tags in a comment, a script string or a textarea -> not hinted', async () => {
    const text = await navigate(s.port, '/hidden.html');
    assert.deepEqual(linkValues(text), [`<${OK_CSS}>; rel=preload; as=style`]);
  });

  it('attack: a 1 MB page with its link at the end -> only the first 64 KB are scanned, page served', async () => {
    const text = await navigate(s.port, '/huge.html');
    assert.equal(earlyHead(text), undefined);
    assert.match(text, /^HTTP\/1\.1 200 /);
    assert.ok(text.includes('late-3f2a9c1b.css'), 'the whole page is still served');
  });

  it('attack: HTTP/1.0 client (reads any status as final) -> no 103', async () => {
    const text = await navigate(s.port, '/crlf.html', '1.0');
    assert.match(text, /^HTTP\/1\.1 200 /);
  });
});
