import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { escapeHtml, type ProblemDetails, problemJson } from '../../src/http/problem.js';

describe('problemJson (RFC 9457)', () => {
  const cases: [string, ProblemDetails, string][] = [
    [
      'type defaults to about:blank (RFC 9457 §3.1.1, §4.2.1)',
      { title: 'Not Found', status: 404 },
      '{"type":"about:blank","title":"Not Found","status":404}',
    ],
    [
      'all standard members in order (RFC 9457 §3.1)',
      {
        instance: '/x',
        detail: 'No file at /x',
        status: 404,
        title: 'Not Found',
        type: 'https://e.example/nf',
      },
      '{"type":"https://e.example/nf","title":"Not Found","status":404,"detail":"No file at /x","instance":"/x"}',
    ],
    [
      'extension members follow the standard ones (RFC 9457 §3.2)',
      { title: 'Too Many Requests', status: 429, retryAfterSec: 30, limits: [1, 2] },
      '{"type":"about:blank","title":"Too Many Requests","status":429,"retryAfterSec":30,"limits":[1,2]}',
    ],
    [
      'undefined members are left out',
      { title: 'Bad Gateway', status: 502, detail: undefined },
      '{"type":"about:blank","title":"Bad Gateway","status":502}',
    ],
    [
      '< > & U+2028 U+2029 are \\u-escaped (inert if sniffed as HTML)',
      { title: '<script>&', status: 400, detail: 'a\u2028b\u2029' },
      '{"type":"about:blank","title":"\\u003cscript\\u003e\\u0026","status":400,"detail":"a\\u2028b\\u2029"}',
    ],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => {
      const text = problemJson(input);
      assert.equal(text, expected);
      assert.deepEqual(JSON.parse(text), JSON.parse(JSON.stringify({ type: 'about:blank', ...input })));
    });
  }

  it('never throws: an extension JSON cannot carry is dropped', () => {
    assert.equal(
      problemJson({ title: 'Oops', status: 500, big: 1n }),
      '{"type":"about:blank","title":"Oops","status":500}',
    );
  });
});

describe('escapeHtml', () => {
  const cases: [string, string, string][] = [
    ['nothing to escape is returned as is', 'plain text', 'plain text'],
    ['all five special characters', `&<>"'`, '&amp;&lt;&gt;&quot;&#39;'],
    ['a script tag', '<script>alert(1)</script>', '&lt;script&gt;alert(1)&lt;/script&gt;'],
    ['an attribute breakout', '" onload="x', '&quot; onload=&quot;x'],
    ['existing entities are escaped again', '&amp;', '&amp;amp;'],
    ['unicode passes through', 'caf\u00e9 \u4e2d', 'caf\u00e9 \u4e2d'],
    ['empty string', '', ''],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => assert.equal(escapeHtml(input), expected));
  }
});
