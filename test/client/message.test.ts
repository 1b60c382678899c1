// The postMessage guard: onMessageFrom accepts only listed origins (exact match after normalising the
// list), postTo never sends to '*'. An EventTarget stands in for the window; the real-browser check
// (iframes on other origins) is the Chromium suite's.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type MessageSource, onMessageFrom, postTo } from '../../src/client/message.js';

class FakeMessageEvent extends Event {
  constructor(
    readonly origin: string,
    readonly data: unknown,
    readonly source: unknown = null,
  ) {
    super('message');
  }
}

function windowDouble() {
  const target = new EventTarget();
  return {
    target: target as unknown as MessageSource,
    post: (origin: string, data: unknown, source?: unknown) =>
      target.dispatchEvent(new FakeMessageEvent(origin, data, source)),
  };
}

describe('onMessageFrom: which messages reach the handler', () => {
  const cases: [string, string | string[], string, boolean][] = [
    // name, allowed origins, event.origin, handled
    ['listed origin -> handled', ['https://app.example'], 'https://app.example', true],
    ['one string instead of a list -> handled', 'https://app.example', 'https://app.example', true],
    [
      'second of two listed -> handled',
      ['https://a.example', 'https://b.example'],
      'https://b.example',
      true,
    ],
    ['unlisted origin -> ignored', ['https://app.example'], 'https://evil.example', false],
    [
      'listed with a path and trailing slash -> normalised, handled',
      ['https://app.example/x/'],
      'https://app.example',
      true,
    ],
    [
      'listed with the default port -> normalised, handled',
      ['https://app.example:443'],
      'https://app.example',
      true,
    ],
    ['listed in upper case -> normalised, handled', ['HTTPS://APP.EXAMPLE'], 'https://app.example', true],
    ['other port -> ignored', ['https://app.example'], 'https://app.example:8443', false],
    [
      'attack: http origin with the https one listed -> ignored',
      ['https://app.example'],
      'http://app.example',
      false,
    ],
    [
      'attack: origin app.example.evil.test with app.example listed -> ignored',
      ['https://app.example'],
      'https://app.example.evil.test',
      false,
    ],
    [
      'attack: origin evilapp.example with app.example listed -> ignored',
      ['https://app.example'],
      'https://evilapp.example',
      false,
    ],
    [
      'event origin with a trailing slash -> ignored (exact match)',
      ['https://app.example'],
      'https://app.example/',
      false,
    ],
    [
      'attack: opaque origin "null" (sandboxed iframe), not listed -> ignored',
      ['https://app.example'],
      'null',
      false,
    ],
    ['opaque origin "null", listed -> handled', ['https://app.example', 'null'], 'null', true],
    ['empty event origin -> ignored', ['https://app.example'], '', false],
  ];
  for (const [name, origins, origin, handled] of cases) {
    it(name, () => {
      const w = windowDouble();
      const got: unknown[] = [];
      onMessageFrom(origins, (data) => got.push(data), { target: w.target });
      w.post(origin, { hello: 1 });
      assert.deepEqual(got, handled ? [{ hello: 1 }] : []);
    });
  }

  it('handler gets (data, event)', () => {
    const w = windowDouble();
    const got: [unknown, MessageEvent][] = [];
    onMessageFrom('https://app.example', (data, ev) => got.push([data, ev]), { target: w.target });
    w.post('https://app.example', 'hi');
    assert.equal(got[0]?.[0], 'hi');
    assert.equal(got[0]?.[1].origin, 'https://app.example');
  });

  it('attack: listed origin but another window, with options.source -> ignored; that window -> handled', () => {
    const w = windowDouble();
    const frame = {};
    const got: unknown[] = [];
    onMessageFrom('https://app.example', (d) => got.push(d), { target: w.target, source: frame });
    w.post('https://app.example', 'other window', {});
    w.post('https://app.example', 'no source');
    w.post('https://evil.example', 'right window, wrong origin', frame);
    w.post('https://app.example', 'the frame', frame);
    assert.deepEqual(got, ['the frame']);
  });

  it('unsubscribe -> no more calls', () => {
    const w = windowDouble();
    const got: unknown[] = [];
    const off = onMessageFrom('https://app.example', (d) => got.push(d), { target: w.target });
    w.post('https://app.example', 1);
    off();
    w.post('https://app.example', 2);
    assert.deepEqual(got, [1]);
  });
});

describe('onMessageFrom: configuration refused', () => {
  const bad: [string, string | string[], RegExp][] = [
    ["'*' -> thrown, naming why", '*', /'\*' is refused: it trusts every site/],
    ["'*' among others -> thrown", ['https://app.example', '*'], /'\*' is refused/],
    ['not a URL -> thrown naming the value', ['app.example'], /"app\.example" is not a scheme:\/\/host/],
    ['file: URL (opaque origin) -> thrown, pointing at null', ['file:///tmp/x.html'], /list 'null' itself/],
    ['data: URL (opaque origin) -> thrown', ['data:text/html,hi'], /not a scheme:\/\/host/],
    ["'file://' (Chromium's URL#origin for file:) -> thrown", ['file://'], /list 'null' itself/],
    ['about:blank -> thrown', ['about:blank'], /not a scheme:\/\/host/],
    ['javascript: URL -> thrown', ['javascript:alert(1)'], /not a scheme:\/\/host/],
    ['blob: with an opaque inner URL -> thrown', ['blob:null/0b5e'], /not a scheme:\/\/host/],
    ['a non-special scheme with a host -> thrown', ['chrome-extension://abcdef'], /not a scheme:\/\/host/],
    ['empty list -> thrown', [], /no origins/],
  ];
  for (const [name, origins, re] of bad) {
    it(name, () =>
      assert.throws(
        () => onMessageFrom(origins, () => {}, { target: windowDouble().target }),
        (e: Error) => re.test(e.message),
      ),
    );
  }

  it("blob: with an https inner URL -> that URL's origin is listed", () => {
    const w = windowDouble();
    const got: unknown[] = [];
    onMessageFrom('blob:https://app.example/0b5e', (d) => got.push(d), { target: w.target });
    w.post('https://app.example', 1);
    assert.deepEqual(got, [1]);
  });

  it('no window (Node without a target) -> thrown, saying to pass options.target', () => {
    assert.equal(typeof (globalThis as { addEventListener?: unknown }).addEventListener, 'undefined');
    assert.throws(() => onMessageFrom('https://app.example', () => {}), /pass options\.target/);
  });
});

describe('postTo', () => {
  function recorder() {
    const calls: unknown[][] = [];
    return { calls, target: { postMessage: (...args: unknown[]) => void calls.push(args) } };
  }

  it('explicit origin -> posted with that origin, normalised', () => {
    const r = recorder();
    postTo(r.target, { a: 1 }, 'https://App.Example:443/some/path');
    assert.deepEqual(r.calls, [[{ a: 1 }, 'https://app.example', undefined]]);
  });

  it('transfer list -> passed through', () => {
    const r = recorder();
    const buf = new ArrayBuffer(8);
    postTo(r.target, buf, 'https://app.example', [buf]);
    assert.deepEqual(r.calls[0]?.[2], [buf]);
  });

  const refused: [string, string, RegExp][] = [
    ["'*' -> thrown naming why, nothing posted", '*', /postTo: '\*' is refused: it trusts every site/],
    ["'null' -> thrown, nothing posted", 'null', /not a scheme:\/\/host/],
    ["'/' (relative) -> thrown, nothing posted", '/', /not a scheme:\/\/host/],
    ['empty -> thrown, nothing posted', '', /not a scheme:\/\/host/],
    ["'file://' -> thrown, nothing posted", 'file://', /not a scheme:\/\/host/],
  ];
  for (const [name, origin, re] of refused) {
    it(name, () => {
      const r = recorder();
      assert.throws(() => postTo(r.target, 'secret', origin), re);
      assert.deepEqual(r.calls, []);
    });
  }
});

// Whether an origin is opaque is decided by its URL's scheme (URL standard, "origin"), not read from
// URL#origin: engines disagree there. Node answers "null" for every opaque case, so a guard that took
// URL#origin would pass in Node; Chromium answers "file://" for file: URLs (as
// test/browser/postmessage.test.ts shows), and such a guard then lists file:// as if it were a site.
// Each row runs under Node's URL and under a URL that answers #origin as Chromium does; the guard's
// answer must not change.
describe('the opaque-origin rule is the scheme, not URL#origin', () => {
  /** Node's URL with #origin as Chromium serialises it: a file: URL (or a blob: of one) is "file://". */
  class ChromiumOriginURL extends URL {
    override get origin(): string {
      const inner = this.protocol === 'blob:' ? this.pathname : this.href;
      return /^file:/i.test(inner) ? 'file://' : super.origin;
    }
  }
  function underURL<T>(impl: typeof URL, run: () => T): T {
    const node = globalThis.URL;
    globalThis.URL = impl;
    try {
      return run();
    } finally {
      globalThis.URL = node;
    }
  }
  /** What the guard makes of `x`: the origin it listens for (and posts to), or the error's text. */
  function guardOf(x: string): { listens: string; posts: string } {
    const w = windowDouble();
    const r = { calls: [] as unknown[][] };
    let listens = 'TypeError';
    try {
      const got: string[] = [];
      onMessageFrom(x, (_d, ev) => got.push(ev.origin), { target: w.target });
      // Which origin is accepted: the tuple one the row expects, or file:// as Chromium spells it.
      for (const o of ['https://app.example', 'file://', 'null']) w.post(o, 1);
      listens = got.join(' ');
    } catch (e) {
      if (!(e instanceof TypeError)) throw e;
    }
    let posts = 'TypeError';
    try {
      postTo({ postMessage: (...a: unknown[]) => void r.calls.push(a) }, 'secret', x);
      posts = String(r.calls[0]?.[1]);
    } catch (e) {
      if (!(e instanceof TypeError)) throw e;
    }
    return { listens, posts };
  }
  const rows: [string, string, string, { listens: string; posts: string }][] = [
    // name, value, Chromium's URL#origin for it, what the guard does (both engines)
    ['file: document', 'file:///tmp/x.html', 'file://', { listens: 'TypeError', posts: 'TypeError' }],
    ["'file://' itself", 'file://', 'file://', { listens: 'TypeError', posts: 'TypeError' }],
    [
      'file: with a host',
      'file://host/share/x.html',
      'file://',
      { listens: 'TypeError', posts: 'TypeError' },
    ],
    ['blob: of a file: URL', 'blob:file:///tmp/x', 'file://', { listens: 'TypeError', posts: 'TypeError' }],
    ['data: URL', 'data:text/html,hi', 'null', { listens: 'TypeError', posts: 'TypeError' }],
    [
      'https URL (a tuple origin)',
      'https://App.Example:443/x',
      'https://app.example',
      { listens: 'https://app.example', posts: 'https://app.example' },
    ],
    [
      'blob: of an https URL',
      'blob:https://app.example/0b5e',
      'https://app.example',
      { listens: 'https://app.example', posts: 'https://app.example' },
    ],
  ];
  for (const [name, value, chromiumOrigin, guard] of rows) {
    it(`${name}: Node's URL#origin ${JSON.stringify(new URL(value).origin)}, Chromium's ${JSON.stringify(chromiumOrigin)} -> the guard ${guard.listens === 'TypeError' ? 'refuses it' : `uses ${guard.listens}`} under both`, () => {
      assert.equal(
        underURL(ChromiumOriginURL, () => new URL(value).origin),
        chromiumOrigin,
      );
      assert.deepEqual(guardOf(value), guard, "under Node's URL");
      assert.deepEqual(
        underURL(ChromiumOriginURL, () => guardOf(value)),
        guard,
        "under Chromium's URL#origin",
      );
    });
  }
});
