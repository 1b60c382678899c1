// 103 Early Hints, pure parts (src/http/early-hints.ts): what a page's HTML hints, table-style, each case
// named by its condition; the eligibility decision; a seeded fuzz of the tokenizer (never throws, never
// a CR/LF, every Link value passes Node's own writeEarlyHints check, no URL the page did not name).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  EARLY_HINTS_MAX,
  type EarlyHintsRequest,
  earlyHintsEligible,
  escapeLinkUrl,
  formatHintLink,
  scanEarlyHints,
} from '../../src/http/early-hints.js';
import { forAll, type Gen, ITERATIONS } from '../helpers/random.js';

const CSS = '/assets/main-3f2a9c1b.css';
const JS = '/assets/app-B-x9aZ_k.js';

function links(html: string | Uint8Array, baseDir = '/', max?: number): string[] {
  return scanEarlyHints(html, { baseDir, versionParam: 'v', ...(max === undefined ? {} : { max }) }).map(
    formatHintLink,
  );
}

describe('scanEarlyHints: what a page hints', () => {
  const cases: [string, string, string[]][] = [
    ['stylesheet, hashed name', `<link rel=stylesheet href="${CSS}">`, [`<${CSS}>; rel=preload; as=style`]],
    ['classic script, hashed name', `<script src="${JS}"></script>`, [`<${JS}>; rel=preload; as=script`]],
    [
      'module script -> modulepreload',
      `<script type=module src="${JS}"></script>`,
      [`<${JS}>; rel=modulepreload`],
    ],
    ['link rel=modulepreload', `<link rel=modulepreload href="${JS}">`, [`<${JS}>; rel=modulepreload`]],
    [
      'preload as=font gets crossorigin (fonts are fetched in CORS mode)',
      '<link rel=preload as=font href="/f/inter-9b8c7d6e.woff2">',
      ['</f/inter-9b8c7d6e.woff2>; rel=preload; as=font; crossorigin'],
    ],
    [
      'preload as=image',
      '<link rel=preload as=image href="/i/hero-9b8c7d6e.webp">',
      ['</i/hero-9b8c7d6e.webp>; rel=preload; as=image'],
    ],
    ['preload as=fetch: not a kind we hint', '<link rel=preload as=fetch href="/d/x-9b8c7d6e.json">', []],
    [
      'preload image with imagesrcset: the href may not be the one used',
      `<link rel=preload as=image href="/i/a-9b8c7d6e.png" imagesrcset="/i/a-9b8c7d6e.png 1x">`,
      [],
    ],
    [
      'crossorigin=use-credentials kept',
      `<script type=module crossorigin=use-credentials src="${JS}"></script>`,
      [`<${JS}>; rel=modulepreload; crossorigin=use-credentials`],
    ],
    [
      'crossorigin with another value reads as anonymous',
      `<link rel=stylesheet crossorigin=bogus href="${CSS}">`,
      [`<${CSS}>; rel=preload; as=style; crossorigin`],
    ],
    ['unhashed name: not hinted', '<link rel=stylesheet href="/style.css">', []],
    ['CamelCase word is not a hash', '<script src="/app-LoginPage.js"></script>', []],
    [
      '?v= with 8+ characters: a candidate (verified later)',
      '<script src="/vendor.js?v=abcdefghij"></script>',
      ['</vendor.js?v=abcdefghij>; rel=preload; as=script'],
    ],
    ['?v= too short: not hinted', '<script src="/vendor.js?v=abc"></script>', []],
    [
      'repeated ?v=: ambiguous, not hinted',
      '<script src="/vendor.js?v=abcdefghij&v=abcdefghik"></script>',
      [],
    ],
    [
      '&amp; in the attribute decoded',
      '<script src="/vendor.js?v=abcdefghij&amp;x=1"></script>',
      ['</vendor.js?v=abcdefghij&x=1>; rel=preload; as=script'],
    ],
    [
      '&amp without ; before a letter stays as written (HTML §13.2.5.73), before a dot it is &',
      '<script src="/a&ampb-3f2a9c1b.js"></script><script src="/c&amp.d-3f2a9c1b.js"></script>',
      ['</a&ampb-3f2a9c1b.js>; rel=preload; as=script', '</c&.d-3f2a9c1b.js>; rel=preload; as=script'],
    ],
    [
      'a % that starts no escape: not hinted (the browser would send it raw)',
      '<script src="/%%a-3f2a9c1b.js"></script><script src="/%41b-3f2a9c1b.js"></script>',
      ['</%41b-3f2a9c1b.js>; rel=preload; as=script'],
    ],
    [
      'upper-case tag and attribute names',
      `<LINK REL=StyleSheet HREF="${CSS}">`,
      [`<${CSS}>; rel=preload; as=style`],
    ],
    ['single-quoted value', `<link rel='stylesheet' href='${CSS}'>`, [`<${CSS}>; rel=preload; as=style`]],
    ['unquoted value', `<link rel=stylesheet href=${CSS}>`, [`<${CSS}>; rel=preload; as=style`]],
    ['self-closing tag', `<link rel=stylesheet href=${CSS} />`, [`<${CSS}>; rel=preload; as=style`]],
    ['spaces around =', `<link rel = "stylesheet" href = "${CSS}">`, [`<${CSS}>; rel=preload; as=style`]],
    [
      'first of two href attributes counts',
      `<link rel=stylesheet href="${CSS}" href="/b-12345678.css">`,
      [`<${CSS}>; rel=preload; as=style`],
    ],
    [
      '`>` inside a quoted value',
      `<link title="a>b" rel=stylesheet href="${CSS}">`,
      [`<${CSS}>; rel=preload; as=style`],
    ],
    ['inside a comment: not hinted', `<!-- <link rel=stylesheet href="${CSS}"> -->`, []],
    [
      'after an abrupt comment <!-->',
      `<!--><link rel=stylesheet href="${CSS}">`,
      [`<${CSS}>; rel=preload; as=style`],
    ],
    [
      'inside a <script> body: not hinted',
      `<script>document.write('<link rel=stylesheet href="${CSS}">')</script>`,
      [],
    ],
    ['inside <noscript>: not hinted', `<noscript><link rel=stylesheet href="${CSS}"></noscript>`, []],
    ['inside <template>: inert, not hinted', `<template><script src="${JS}"></script></template>`, []],
    ['inside <textarea>: text', `<textarea><link rel=stylesheet href="${CSS}"></textarea>`, []],
    [
      'after </script > with a space',
      `<script>x</script ><link rel=stylesheet href="${CSS}">`,
      [`<${CSS}>; rel=preload; as=style`],
    ],
    [
      '</scripty> does not end a script',
      `<script>x</scripty><link rel=stylesheet href="${CSS}"></script>`,
      [],
    ],
    ['alternate stylesheet: not fetched at once', `<link rel="alternate stylesheet" href="${CSS}">`, []],
    ['print stylesheet: low priority, not hinted', `<link rel=stylesheet media=print href="${CSS}">`, []],
    ['nomodule script: not hinted', `<script nomodule src="${JS}"></script>`, []],
    [
      'importmap / template script types: not hinted',
      `<script type=importmap src="${JS}"></script><script type="text/x-template" src="${JS}"></script>`,
      [],
    ],
    [
      'text/javascript type: classic',
      `<script type="text/javascript" src="${JS}"></script>`,
      [`<${JS}>; rel=preload; as=script`],
    ],
    [
      'cross-origin absolute URL: not hinted',
      '<link rel=stylesheet href="https://cdn.example/a-3f2a9c1b.css">',
      [],
    ],
    [
      'protocol-relative //host: not hinted',
      '<link rel=stylesheet href="//evil.example/a-3f2a9c1b.css">',
      [],
    ],
    [
      'backslash (read as / by browsers): not hinted',
      '<link rel=stylesheet href="/\\evil.example/a-3f2a9c1b.css">',
      [],
    ],
    ['javascript: URL: not hinted', '<script src="javascript:alert(1)//a-3f2a9c1b.js"></script>', []],
    ['data: URL: not hinted', '<script src="data:text/javascript,1//a-3f2a9c1b.js"></script>', []],
    [
      'leading spaces and tabs stripped',
      `<link rel=stylesheet href="  \t${CSS}\n">`,
      [`<${CSS}>; rel=preload; as=style`],
    ],
    ['fragment dropped', `<link rel=stylesheet href="${CSS}#x">`, [`<${CSS}>; rel=preload; as=style`]],
    [
      'duplicate URL hinted once',
      `<link rel=stylesheet href="${CSS}"><link rel=preload as=style href="${CSS}">`,
      [`<${CSS}>; rel=preload; as=style`],
    ],
    [
      '<base href> to another origin: nothing hinted',
      `<base href="https://cdn.example/"><link rel=stylesheet href="${CSS}">`,
      [],
    ],
    ['end tag attributes with quotes are skipped', `</div class="<link rel=stylesheet href='${CSS}'>">`, []],
  ];
  for (const [name, html, want] of cases) {
    it(name, () => assert.deepEqual(links(html), want));
  }
});

describe('scanEarlyHints: URLs resolved and escaped', () => {
  const cases: [string, string, string, string[]][] = [
    ['relative href against the page directory', '/docs/', 'a-3f2a9c1b.css', ['</docs/a-3f2a9c1b.css>']],
    [
      './ and ../ removed (RFC 3986 §5.2.4)',
      '/docs/guide/',
      './../a-3f2a9c1b.css',
      ['</docs/a-3f2a9c1b.css>'],
    ],
    ['%2e%2e read as .. (as browsers do)', '/docs/', '%2e%2e/a-3f2a9c1b.css', ['</a-3f2a9c1b.css>']],
    ['.. above the root stays at the root', '/', '../../a-3f2a9c1b.css', ['</a-3f2a9c1b.css>']],
    [
      'space, ;, comma, <, > and a quote escaped',
      '/',
      "/x y;z,<>'/a-3f2a9c1b.css",
      ["</x%20y%3Bz%2C%3C%3E'/a-3f2a9c1b.css>"],
    ],
    ['non-ASCII as UTF-8', '/', '/é/a-3f2a9c1b.css', ['</%C3%A9/a-3f2a9c1b.css>']],
    // The browser sends such a % raw (WHATWG URL), which no Link value names exactly: no hint.
    ['a % not starting an escape: not hinted', '/', '/100%/a-3f2a9c1b.css', []],
    ['an existing escape kept', '/', '/a%20b/a-3f2a9c1b.css', ['</a%20b/a-3f2a9c1b.css>']],
    ['control character escaped', '/', '/a\u0001b/a-3f2a9c1b.css', ['</a%01b/a-3f2a9c1b.css>']],
  ];
  for (const [name, baseDir, href, want] of cases) {
    it(name, () => {
      const got = links(`<link rel=stylesheet href="${href}">`, baseDir).map((l) =>
        l.slice(0, l.indexOf(';')),
      );
      assert.deepEqual(got, want);
    });
  }

  it('root-relative <base href> resolves relative URLs, which then no longer depend on the page', () => {
    const c = scanEarlyHints('<base href="/static/"><script src="a-3f2a9c1b.js"></script>', {
      baseDir: '/docs/',
      versionParam: 'v',
    });
    assert.deepEqual(
      c.map((x) => [x.url, x.relative]),
      [['/static/a-3f2a9c1b.js', false]],
    );
  });

  it('relative href marked relative; root-relative not', () => {
    const c = scanEarlyHints(`<script src="a-3f2a9c1b.js"></script><link rel=stylesheet href="${CSS}">`, {
      baseDir: '/docs/',
      versionParam: 'v',
    });
    assert.deepEqual(
      c.map((x) => x.relative),
      [true, false],
    );
  });

  it('escapeLinkUrl keeps RFC 3986 characters other than ; and ,', () => {
    assert.equal(escapeLinkUrl("/a-b_c.d~e!$&'()*+=:@/?x"), "/a-b_c.d~e!$&'()*+=:@/?x");
    assert.equal(escapeLinkUrl('\ud800'), '%EF%BF%BD'); // lone surrogate -> U+FFFD
  });
});

describe('scanEarlyHints: bounds', () => {
  it(`capped at max (default ${EARLY_HINTS_MAX}), in document order`, () => {
    let html = '';
    for (let i = 0; i < 100; i++) html += `<link rel=stylesheet href="/a/s${i}-3f2a9c1b.css">`;
    const got = links(html);
    assert.equal(got.length, EARLY_HINTS_MAX);
    assert.equal(got[0], '</a/s0-3f2a9c1b.css>; rel=preload; as=style');
    assert.equal(links(html, '/', 3).length, 3);
    assert.deepEqual(links(html, '/', 0), []);
  });

  it('only the first 64 KB are scanned', () => {
    const pad = `<p>${'x'.repeat(64 * 1024)}</p>`;
    assert.deepEqual(links(`${pad}<link rel=stylesheet href="${CSS}">`), []);
    assert.equal(links(`<link rel=stylesheet href="${CSS}">${pad}`).length, 1);
  });

  it('bytes decoded as UTF-8 (a cut multi-byte character is harmless)', () => {
    const bytes = new TextEncoder().encode(`<link rel=stylesheet href="/é/a-3f2a9c1b.css">`);
    assert.deepEqual(links(bytes), ['</%C3%A9/a-3f2a9c1b.css>; rel=preload; as=style']);
  });

  it('a document that ends inside a tag or a comment yields what came before', () => {
    assert.equal(
      links(`<link rel=stylesheet href="${CSS}"><link rel=stylesheet href="/b-3f2a9c1b.css`).length,
      1,
    );
    assert.equal(links(`<link rel=stylesheet href="${CSS}"><!-- <x`).length, 1);
    assert.equal(links(`<script src="${JS}"></script><script>unterminated`).length, 1);
  });
});

describe('earlyHintsEligible', () => {
  const base: EarlyHintsRequest = {
    httpVersionMajor: 1,
    httpVersionMinor: 1,
    method: 'GET',
    status: 200,
    secFetchMode: undefined,
    secFetchDest: undefined,
    expect: undefined,
  };
  const cases: [string, Partial<EarlyHintsRequest>, string][] = [
    ['HTTP/2 GET 200 -> send', { httpVersionMajor: 2, httpVersionMinor: 0 }, 'send'],
    ['HTTP/1.1 browser navigation (Sec-Fetch-Mode: navigate) -> send', { secFetchMode: 'navigate' }, 'send'],
    ['HTTP/1.1 Sec-Fetch-Dest: document -> send', { secFetchDest: 'document' }, 'send'],
    ['HTTP/1.1 Expect: 100-continue -> send', { expect: '100-Continue' }, 'send'],
    ['HTTP/1.1 without a 1xx signal (curl-like) -> skip', {}, 'no 1xx signal'],
    [
      'HTTP/1.1 Sec-Fetch-Mode: cors (a fetch(), not a page) -> skip',
      { secFetchMode: 'cors' },
      'no 1xx signal',
    ],
    [
      'HTTP/1.0 even with navigate -> skip (RFC 9110 §15.2)',
      { httpVersionMinor: 0, secFetchMode: 'navigate' },
      'http/1.0',
    ],
    [
      'HTTP/0.9-like major 0 -> skip',
      { httpVersionMajor: 0, httpVersionMinor: 9, secFetchMode: 'navigate' },
      'http/1.0',
    ],
    ['HEAD -> skip', { method: 'HEAD', httpVersionMajor: 2 }, 'method'],
    ['POST -> skip', { method: 'POST', httpVersionMajor: 2 }, 'method'],
    ['304 -> skip', { status: 304, httpVersionMajor: 2 }, 'status'],
    ['206 -> skip', { status: 206, httpVersionMajor: 2 }, 'status'],
    ['412 -> skip', { status: 412, httpVersionMajor: 2 }, 'status'],
  ];
  for (const [name, over, want] of cases) {
    it(name, () => {
      const d = earlyHintsEligible({ ...base, ...over });
      assert.equal(d.kind === 'send' ? 'send' : d.reason, want);
    });
  }
});

// Node's check in writeEarlyHints (lib/internal/validators.js): a value failing it throws mid-request.
const NODE_LINK = /^(?:<[^>]*>)(?:\s*;\s*[^;"\s]+(?:=(")?[^;"\s]*\1)?)*$/;

const PIECES = [
  '<',
  '>',
  '/',
  '=',
  '"',
  "'",
  ' ',
  '\t',
  '\r\n',
  '\n',
  '!',
  '-',
  '--',
  '<!--',
  '-->',
  '?',
  '&',
  '&amp;',
  '&#10;',
  '&#x0d;',
  ';',
  ',',
  '#',
  '%',
  '%2e',
  '..',
  '\\',
  ':',
  'é',
  '\u0000',
  '\ud800',
  'link',
  'LINK',
  'script',
  '</script>',
  'rel',
  'stylesheet',
  'preload',
  'modulepreload',
  'as',
  'font',
  'href',
  'src',
  'type',
  'module',
  'crossorigin',
  'base',
  'javascript:',
  'https://evil.example',
  '//evil.example',
  'a-3f2a9c1b.css',
  'b-B-x9aZ_k.js',
  'v=abcdefghij',
];

const TEMPLATES = [
  (u: string) => `<link rel=stylesheet href="${u}">`,
  (u: string) => `<link rel=preload as=font href='${u}'>`,
  (u: string) => `<script type=module src=${u}></script>`,
  (u: string) => `<script src="${u}"></script>`,
];

function makeDoc(g: Gen): string {
  let s = '';
  const parts = 1 + g.int(12);
  for (let k = 0; k < parts; k++) {
    if (g.chance(0.4)) s += g.pick(TEMPLATES)(g.string(PIECES, 6));
    else s += g.string(PIECES, 10);
  }
  return g.chance(0.3) ? g.mutate(s, PIECES, 6) : s;
}

/** Percent-decodes what can be decoded; the rest as is. */
function lenientDecode(s: string): string {
  return s.replace(/(?:%[0-9A-Fa-f]{2})+/g, (m) => {
    try {
      return decodeURIComponent(m);
    } catch {
      return m;
    }
  });
}

describe('scanEarlyHints fuzz (seeded)', () => {
  it('never throws; Link values single-line, accepted by Node, from URLs the page named, same-origin', () => {
    let hinted = 0;
    forAll(0xea71, ITERATIONS, makeDoc, (doc) => {
      const found = scanEarlyHints(doc, { baseDir: '/d/', versionParam: 'v', max: 8 });
      if (found.length > 0) hinted++;
      assert.ok(found.length <= 8, 'capped');
      const seen = new Set<string>();
      for (const c of found) {
        const link = formatHintLink(c);
        assert.ok(!/[\r\n\u0000]/.test(link), `no CR/LF/NUL: ${JSON.stringify(link)}`);
        assert.match(link, NODE_LINK);
        assert.ok(/^[\x21-\x7e]+$/.test(c.url), `visible ASCII only: ${JSON.stringify(c.url)}`);
        assert.ok(c.url.startsWith('/') && !c.url.startsWith('//'), `root-relative: ${c.url}`);
        assert.ok(!seen.has(c.url), 'deduplicated');
        seen.add(c.url);
        const name = lenientDecode(c.path.slice(c.path.lastIndexOf('/') + 1));
        // The URL parser drops tab/CR/LF inside a URL; `&amp;` is `&`, and so is `&amp` unless a
        // letter, digit or `=` follows it (HTML §13.2.5.73).
        const plainDoc = doc.replace(/&amp(;|(?![=A-Za-z0-9]))/g, '&').replace(/[\t\n\r]/g, '');
        assert.ok(
          name === '' ||
            lenientDecode(plainDoc).includes(name) ||
            name.includes('\ufffd') ||
            doc.includes('&#'),
          `file name ${JSON.stringify(name)} from the page`,
        );
      }
    });
    // The oracle must have something to judge: a fair share of the documents yield hints.
    assert.ok(hinted > ITERATIONS / 20, `only ${hinted} of ${ITERATIONS} documents gave hints`);
  });

  it('random bytes never throw', () => {
    forAll(
      0xea72,
      ITERATIONS,
      (g) => g.bytes(400),
      (bytes) => {
        for (const c of scanEarlyHints(bytes, { baseDir: '/', versionParam: 'v' })) {
          assert.match(formatHintLink(c), NODE_LINK);
        }
      },
    );
  });
});
