// Fuzzing parseConfig (src/config/) with seeded hostile JSON: valid configs with one part replaced by a
// wrong type, an out-of-range number, a control character, an unknown or prototype-polluting key, a
// missing key, or wholly random JSON values. Oracles: the answer is either a config or a ConfigError
// (never another exception) whose every line names a key path that leads into the input; a config
// that loads maps to server options and loads again to itself; nothing leaks onto Object.prototype.
// Replay a failure with the FUZZ_SEED printed in the message.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, parseConfig, toServerOptions } from '../../src/config/load.js';
import { configSchema } from '../../src/config/schema.js';
import { keysAt } from '../../src/config/suggest.js';
import { forAll, type Gen, ITERATIONS } from '../helpers/random.js';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** The examples of the old README (now docs/configuration.md and docs/policy.md), which must load. */
const BASES: Json[] = [
  {},
  {
    $schema: './node_modules/gatehouse-http/schema.json',
    root: 'dist',
    listen: { host: '0.0.0.0', port: 8080 },
    static: { spa: true, etag: 'strong', assetsDir: 'assets' },
    cachePolicy: [
      { glob: '/docs/**', cacheControl: 'public, max-age=300' },
      { regex: '^/api-cache/', cacheControl: 'private, max-age=60', expires: false },
      { contentType: 'application/json', cacheControl: 'no-store' },
    ],
    limits: { maxUrlBytes: 8192 },
    log: { format: 'json' },
  },
  {
    cors: {
      origins: ['https://app.example.com', 'https://*.example.com'],
      credentials: true,
      headers: ['Content-Type', 'Authorization'],
      exposeHeaders: ['X-Request-Id'],
      maxAgeSec: 86400,
    },
    jsonp: { paths: ['/data/*.json'], callbackParam: 'callback' },
    redirects: [
      { from: '/old-blog/:slug', to: '/blog/:slug', status: 301 },
      { from: '/docs/*', to: 'https://docs.example.com/*' },
      { from: '^/v(\\d+)/(.*)$', to: '/api/v$1/$2', status: 308, keepQuery: true },
    ],
    headers: [{ preset: 'security' }, { glob: '/embed/**', remove: ['X-Frame-Options'] }],
    trustProxy: ['loopback', '10.0.0.0/8'],
    limits: { rateLimit: { requestsPerSec: 20, burst: 40 }, maxBodyBytes: 1048576 },
  },
  {
    proxy: [
      {
        prefix: '/api',
        upstream: ['http://10.0.0.5:3000', 'http://10.0.0.6:3000'],
        stripPrefix: true,
        balance: 'least-busy',
        timeouts: { connectMs: 5000, headersMs: 30000, idleMs: 60000 },
        health: { failures: 3, cooldownMs: 10000, path: '/healthz', intervalMs: 10000 },
      },
      { prefix: '/cached', upstream: 'http://127.0.0.1:3001', cache: { enabled: true, store: 'memory' } },
    ],
    websocket: [{ path: '/ws', mode: 'broadcast', heartbeatIntervalMs: 30000, maxPayloadBytes: 1048576 }],
  },
];

const HOSTILE_SCALARS: Json[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  65536,
  -0,
  1e308,
  -1e308,
  Number.MAX_SAFE_INTEGER + 2,
  '',
  ' ',
  'x',
  '0',
  'true',
  '/',
  '*',
  '**',
  '\0',
  '\r\n',
  'a\nb',
  '\u2028',
  '\ud800',
  '../..',
  'http://',
  'javascript:alert(1)',
  '(a+)+$',
  '[',
  '{a,',
  '10.0.0.0/33',
  'x'.repeat(5000),
];
const KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'unknown',
  'Root',
  'PORT',
  '',
  ' ',
  'a.b',
  '0',
];

function clone(v: Json): Json {
  return JSON.parse(JSON.stringify(v));
}

function hostileValue(g: Gen, depth = 0): Json {
  const k = g.int(depth > 2 ? 1 : 4);
  if (k === 0) return g.pick(HOSTILE_SCALARS);
  if (k === 1) return Array.from({ length: g.int(3) }, () => hostileValue(g, depth + 1));
  if (k === 2) return g.pick(BASES.map(clone));
  // An object with a key JSON.parse makes own (`__proto__` included, as a config file would).
  return JSON.parse(`{${JSON.stringify(g.pick(KEYS))}: ${JSON.stringify(hostileValue(g, depth + 1))}}`);
}

/** Every container in `v` with the path to it. */
function containers(
  v: Json,
  path: (string | number)[] = [],
  out: { node: Json; path: (string | number)[] }[] = [],
) {
  if (v !== null && typeof v === 'object') {
    out.push({ node: v, path });
    if (Array.isArray(v)) {
      for (const [i, x] of v.entries()) containers(x, [...path, i], out);
    } else for (const k of Object.keys(v)) containers(v[k]!, [...path, k], out);
  }
  return out;
}

/** A valid config with 1-3 edits: a value replaced, a key removed, an unknown key added. */
function mutatedConfig(g: Gen): Json {
  const root = clone(g.pick(BASES));
  for (let n = 1 + g.int(3); n > 0; n--) {
    const { node } = g.pick(containers(root));
    if (node === null || typeof node !== 'object') continue;
    if (Array.isArray(node)) {
      const op = g.int(3);
      if (op === 0 && node.length) node[g.int(node.length)] = hostileValue(g);
      else if (op === 1) node.push(hostileValue(g));
      else node.splice(g.int(node.length + 1), 1);
      continue;
    }
    const keys = Object.keys(node);
    const op = g.int(4);
    if (op <= 1 && keys.length) node[g.pick(keys)] = hostileValue(g);
    else if (op === 2 && keys.length) delete node[g.pick(keys)];
    else
      Object.defineProperty(node, g.pick(KEYS), {
        value: hostileValue(g),
        enumerable: true,
        writable: true,
        configurable: true,
      });
  }
  return root;
}

/** Splits `a.b[2]["x.y"]` into segments; null when the text is not a key path. */
function pathSegments(text: string): (string | number)[] | null {
  const out: (string | number)[] = [];
  const re = /(?:^|\.)([^.[\]"]+)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]/y;
  for (re.lastIndex = 0; re.lastIndex < text.length; ) {
    const m = re.exec(text);
    if (!m) return null;
    out.push(m[2] !== undefined ? Number(m[2]) : m[3] !== undefined ? (JSON.parse(m[3]) as string) : m[1]!);
  }
  return out;
}

/** True when every segment but the last leads to an own property of `input`. */
function leadsInto(input: unknown, segs: (string | number)[]): boolean {
  let v = input;
  for (const s of segs.slice(0, -1)) {
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, s)) return false;
    v = (v as Record<string | number, unknown>)[s];
  }
  return true;
}

function check(input: unknown): void {
  let config: ReturnType<typeof parseConfig>;
  try {
    config = parseConfig(input);
  } catch (err) {
    assert.ok(
      err instanceof ConfigError,
      `only ConfigError, got ${(err as Error)?.name}: ${(err as Error)?.message}`,
    );
    const lines = err.message.split('\n');
    assert.ok(lines.length >= 1);
    for (const line of lines) {
      const m = /^config: (?:unknown key (.*?)(?: \(did you mean (.*)\?\))?|(.*?): .+)$/s.exec(line);
      assert.ok(m, `a line that names a key: ${JSON.stringify(line)}`);
      const path = m[1] ?? m[3]!;
      if (m[2] !== undefined) {
        // The suggestion is a sibling of the unknown key that the schema accepts.
        const near = pathSegments(m[2]);
        const unknown = pathSegments(path);
        assert.ok(near && unknown && near.length === unknown.length, `a sibling key: ${line}`);
        assert.deepEqual(near.slice(0, -1), unknown.slice(0, -1), line);
        assert.ok(keysAt(configSchema, near.slice(0, -1)).includes(String(near.at(-1))), line);
      }
      const isObject = input !== null && typeof input === 'object' && !Array.isArray(input);
      if (path === '(top level)') {
        assert.ok(!isObject, `an object config gets errors naming a key: ${line}`);
        continue;
      }
      const segs = pathSegments(path);
      assert.ok(segs && segs.length > 0, `a key path: ${line}`);
      assert.ok(leadsInto(input, segs), `${path} leads into the input: ${line}`);
    }
    return;
  }
  // A config that loads maps to server options, and loads again to the same config.
  assert.equal(typeof toServerOptions(config), 'object');
  assert.deepEqual(parseConfig(config), config);
}

describe('fuzz: parseConfig', () => {
  it('the README examples load', () => {
    for (const b of BASES) parseConfig(b);
  });

  it(`${ITERATIONS} valid configs with wrong types, bad ranges, control characters, unknown and __proto__ keys: a config or a ConfigError naming the key`, () => {
    forAll(0xc0f1, ITERATIONS, mutatedConfig, (input) => {
      check(input);
      assert.deepEqual(Object.keys(Object.prototype), [], 'nothing leaks onto Object.prototype');
    });
  });

  it(`${ITERATIONS} random JSON values (scalars, arrays, nested objects) at the top level: a config or a ConfigError`, () => {
    forAll(0xc0f2, ITERATIONS, (g) => hostileValue(g), check);
  });
});
