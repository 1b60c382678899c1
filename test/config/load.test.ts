// Config: one schema for file and flags; errors name the key path.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig, mergeConfig, parseConfig } from '../../src/config/load.js';
import { makeSite, removeSite } from '../helpers/http.js';

describe('parseConfig', () => {
  it('fills in the defaults', () => {
    const c = parseConfig({});
    assert.equal(c.listen.port, 8080);
    assert.equal(c.listen.host, '127.0.0.1');
    assert.equal(c.static.etag, 'strong');
    assert.equal(c.static.spa, false);
    assert.equal(c.static.memoryCacheBytes, 64 * 1024 * 1024);
    assert.equal(c.limits.maxUrlBytes, 8192);
    assert.deepEqual(c.cachePolicy, []);
  });

  const bad: [string, unknown, RegExp][] = [
    ['unknown top-level key, nothing close', { nope: 1 }, /^config: unknown key nope$/],
    [
      'unknown nested key',
      { static: { spaa: true } },
      /^config: unknown key static\.spaa \(did you mean static\.spa\?\)$/,
    ],
    ['a mistyped top-level key', { statc: {} }, /^config: unknown key statc \(did you mean static\?\)$/],
    [
      'a mistyped key in an array element',
      { proxy: [{ prefix: '/a', upstream: 'http://127.0.0.1:1', stripPrefx: false }] },
      /^config: unknown key proxy\[0\]\.stripPrefx \(did you mean proxy\[0\]\.stripPrefix\?\)$/,
    ],
    [
      'a mistyped key behind a union (earlyHints: boolean or object)',
      { static: { earlyHints: { enabeld: true } } },
      /^config: unknown key static\.earlyHints\.enabeld \(did you mean static\.earlyHints\.enabled\?\)$/,
    ],
    [
      'a mistyped key behind a transform (websocket endpoints)',
      { websocket: [{ path: '/ws', mode: 'echo', rateLimt: {} }] },
      /^config: unknown key websocket\[0\]\.rateLimt \(did you mean websocket\[0\]\.rateLimit\?\)$/,
    ],
    ['wrong type', { listen: { port: 'eighty' } }, /listen\.port/],
    ['port out of range', { listen: { port: 70000 } }, /listen\.port/],
    ['bad enum', { static: { etag: 'medium' } }, /static\.etag/],
    ['rule without a matcher', { cachePolicy: [{ cacheControl: 'no-cache' }] }, /cachePolicy\[0\]/],
    [
      'rule with a broken regex',
      { cachePolicy: [{ regex: '(', cacheControl: 'x' }] },
      /cachePolicy\[0\]\.regex/,
    ],
    [
      'unknown key in a rule',
      { cachePolicy: [{ glob: '*', cacheControl: 'x', ttl: 1 }] },
      /cachePolicy\[0\]\.ttl/,
    ],
    ['unknown key holding a dot is quoted, not read as a path', { 'a.b': 1 }, /unknown key \["a\.b"\]$/],
    ['empty unknown key is quoted', { static: { '': 1 } }, /unknown key static\[""\]$/],
    [
      'a CR LF in a value quoted by a reason stays on one line',
      { cors: { origins: ['https://a.example'], headers: ['a\r\nb'] } },
      /^config: cors\.headers(\[\d+\])?: [^\n]*a\\u000d\\u000ab[^\n]*$/,
    ],
    [
      'a newline in a broken regex stays on one line',
      { cachePolicy: [{ regex: '\n(', cacheControl: 'x' }] },
      /^config: cachePolicy\[0\]\.regex: [^\n]*\\u000a/,
    ],
    [
      'a redis cache store without the top-level redis',
      { proxy: [{ prefix: '/', upstream: 'http://127.0.0.1:1', cache: { enabled: true, store: 'redis' } }] },
      /^config: proxy\[0\]\.cache\.store: "redis" needs the top-level redis\.url$/,
    ],
  ];
  for (const [name, input, msg] of bad) {
    it(`${name} -> ConfigError naming the key`, () => {
      assert.throws(
        () => parseConfig(input),
        (err: unknown) => err instanceof ConfigError && msg.test(err.message),
      );
    });
  }
});

describe('mergeConfig', () => {
  it('flags override file values deeply; arrays replace', () => {
    assert.deepEqual(
      mergeConfig({ listen: { port: 1, host: 'a' }, x: [1, 2] }, { listen: { port: 2 }, x: [3] }),
      {
        listen: { port: 2, host: 'a' },
        x: [3],
      },
    );
  });
});

describe('loadConfig', () => {
  it('reads gatehouse.config.json from cwd; root relative to the file; flags win', () => {
    const dir = makeSite({ 'site/index.html': 'x' });
    try {
      writeFileSync(
        join(dir, 'gatehouse.config.json'),
        JSON.stringify({ root: 'site', listen: { port: 9000 } }),
      );
      const a = loadConfig({ cwd: dir });
      assert.equal(a.config.root, join(dir, 'site'));
      assert.equal(a.config.listen.port, 9000);
      const b = loadConfig({ cwd: dir, overrides: { listen: { port: 9001 } } });
      assert.equal(b.config.listen.port, 9001);
      assert.equal(b.config.listen.host, '127.0.0.1');
    } finally {
      removeSite(dir);
    }
  });

  it('invalid JSON: the line and column of the mistake (a trailing comma, a comment, a CRLF file), a BOM ignored', () => {
    const dir = makeSite({});
    const fails = (text: string): string => {
      writeFileSync(join(dir, 'c.json'), text);
      try {
        loadConfig({ cwd: dir, configPath: 'c.json' });
      } catch (err) {
        assert.ok(err instanceof ConfigError);
        return err.message;
      }
      assert.fail('loaded');
    };
    try {
      const file = join(dir, 'c.json');
      assert.equal(
        fails('{\n  "root": "dist",\n  "static": { "spa": true, }\n}\n'),
        `${file}: invalid JSON at line 3, column 28: expected a key after ",", found "}" (JSON has no trailing commas)`,
      );
      assert.equal(
        fails('{\r\n  // the site\r\n  "root": "dist"\r\n}'),
        `${file}: invalid JSON at line 2, column 3: expected a key in double quotes, found "/" (JSON has no comments)`,
      );
      assert.equal(
        fails('{\n  "root": "dist"\n  "static": {}\n}'),
        `${file}: invalid JSON at line 3, column 3: expected ',' or '}', found "\\""`,
      );
      assert.equal(
        fails(''),
        `${file}: invalid JSON at line 1, column 1: expected a value, found the end of the file`,
      );
      writeFileSync(file, '\ufeff{ "root": "." }');
      assert.equal(loadConfig({ cwd: dir, configPath: 'c.json' }).config.root, dir);
    } finally {
      removeSite(dir);
    }
  });

  it('a bad file names the file and the key', () => {
    const dir = makeSite({});
    try {
      writeFileSync(join(dir, 'c.json'), JSON.stringify({ static: { bogus: 1 } }));
      assert.throws(
        () => loadConfig({ cwd: dir, configPath: 'c.json' }),
        /c\.json: unknown key static\.bogus/,
      );
      writeFileSync(join(dir, 'd.json'), '{ not json');
      assert.throws(
        () => loadConfig({ cwd: dir, configPath: 'd.json' }),
        /d\.json: invalid JSON at line 1, column 3: expected a key in double quotes, found "n"$/,
      );
      assert.throws(() => loadConfig({ cwd: dir, configPath: 'missing.json' }), /missing\.json: cannot read/);
    } finally {
      removeSite(dir);
    }
  });
});
