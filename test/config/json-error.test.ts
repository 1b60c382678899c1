// Where a config file stops being JSON (src/config/json-error.ts), against JSON.parse as the oracle:
// seeded mutations of a real config are valid exactly when JSON.parse accepts them, and the offset found
// is where V8 reports its position or up to a literal's length before it (V8 reads a bad literal on
// before it stops, e.g. `tr1ue`).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { lineColumn, locateJsonError } from '../../src/config/json-error.js';
import { forAll, ITERATIONS } from '../helpers/random.js';

const BASE = JSON.stringify(
  {
    root: 'dist',
    static: { spa: true, etag: 'weak', memoryCacheBytes: 1.5e7 },
    proxy: [
      { prefix: '/api', upstream: 'http://127.0.0.1:3000', stripPrefix: false, cache: { enabled: true } },
    ],
    cachePolicy: [{ glob: '/x/**', cacheControl: 'no-cache' }],
    headers: [{ glob: '/**', set: { 'x-a': 'q"\\u00e9\n' } }],
    n: [-0.5, [null, false], {}],
  },
  null,
  2,
);
const PIECES = [
  '{',
  '}',
  '[',
  ']',
  ',',
  ':',
  '"',
  '\\',
  '-',
  '0',
  '1',
  'e',
  '.',
  ' ',
  '\n',
  '\r',
  't',
  'x',
  "'",
  '/',
  '\u0001',
  'u',
  'n',
  '\ufeff',
];

describe('locateJsonError', () => {
  it('table: each mistake, its place and reason', () => {
    const cases: [string, number, number, RegExp][] = [
      ['{"a":}', 1, 6, /^expected a value, found "}"$/],
      ['{"a": 1,}', 1, 9, /no trailing commas/],
      ['[1,2,]', 1, 6, /no trailing commas/],
      ['{"a" 1}', 1, 6, /^expected ':' after the key, found "1"$/],
      ['{\n  "a": tru\n}', 2, 8, /^expected a value, found "t"$/],
      ['{"a": 1', 1, 8, /found the end of the file$/],
      ['{"a":1}x', 1, 8, /^expected the end of the file after the value, found "x"$/],
      ["{'a':1}", 1, 2, /JSON strings take double quotes/],
      ['{"a":"x\ny"}', 1, 8, /^a control character \("\\n"\) inside a string/],
      ['{"a":"\\x"}', 1, 8, /^a bad escape in a string: \\x$/],
      ['{"a": -}', 1, 8, /^expected a digit after "-", found "}"$/],
      ['{\r\n  /* no */ "a": 1}', 2, 3, /JSON has no comments/],
    ];
    for (const [text, line, column, reason] of cases) {
      const at = locateJsonError(text);
      assert.ok(at, JSON.stringify(text));
      assert.deepEqual([at.line, at.column], [line, column], JSON.stringify(text));
      assert.match(at.reason, reason, JSON.stringify(text));
      assert.throws(() => JSON.parse(text));
    }
    assert.equal(locateJsonError(BASE), undefined);
  });

  it('nesting deeper than the stack -> no position (the caller keeps JSON.parse message)', () => {
    assert.equal(locateJsonError('['.repeat(200_000)), undefined);
  });

  it('lineColumn: LF ends a line, a CR before it stays in the line', () => {
    assert.deepEqual(lineColumn('ab\r\ncd', 4), { line: 2, column: 1 });
    assert.deepEqual(lineColumn('ab\r\ncd', 2), { line: 1, column: 3 });
    assert.deepEqual(lineColumn('', 0), { line: 1, column: 1 });
  });

  it('fuzz: valid exactly when JSON.parse accepts; the offset at or up to 5 before V8 position', () => {
    let positioned = 0;
    forAll(
      0x750,
      ITERATIONS,
      (g) => g.mutate(BASE, PIECES, 3),
      (text) => {
        let v8: string | undefined;
        try {
          JSON.parse(text);
        } catch (err) {
          v8 = (err as Error).message;
        }
        const at = locateJsonError(text);
        assert.equal(at === undefined, v8 === undefined, `ours ${JSON.stringify(at)}, JSON.parse: ${v8}`);
        if (at === undefined) return;
        assert.deepEqual(lineColumn(text, at.offset), { line: at.line, column: at.column });
        const m = /at position (\d+)/.exec(v8!);
        if (m === null) return;
        positioned++;
        const ahead = Number(m[1]) - at.offset;
        assert.ok(ahead >= 0 && ahead <= 5, `ours ${at.offset}, V8 ${m[1]}: ${v8}`);
      },
    );
    assert.ok(positioned > ITERATIONS / 4, `${positioned} positioned errors compared`);
  });
});
