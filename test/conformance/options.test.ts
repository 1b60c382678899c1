// scripts/conformance/options.mjs: the conformance runner's command line, table-style.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

interface Options {
  mode: 'proxy' | 'private';
  adapter: string | undefined;
  cache: boolean;
  store: string;
  suite: 'npm' | 'head';
  via: 'cli' | 'express';
  out: string | undefined;
  keepAlive: boolean;
  floorRequired: number | undefined;
  floorOptimal: number | undefined;
  timeoutSec: number;
}
type Parsed = { kind: 'ok'; options: Options } | { kind: 'help' } | { kind: 'usage'; message: string };
interface OptionsModule {
  parseOptions(argv: string[], env?: Record<string, string>, cwd?: string): Parsed;
}

const { parseOptions } = (await import(
  new URL('../../scripts/conformance/options.mjs', import.meta.url).href
)) as OptionsModule;

function ok(argv: string[], env: Record<string, string> = {}): Options {
  const r = parseOptions(argv, env, '/work/here');
  assert.equal(r.kind, 'ok', JSON.stringify(r));
  return (r as { options: Options }).options;
}

describe('conformance options: accepted', () => {
  const cases: Array<[string, string[], Record<string, string>, Partial<Options>]> = [
    [
      'no flags -> proxy mode, memory store, 900 s',
      [],
      {},
      { mode: 'proxy', store: 'memory', suite: 'npm', via: 'cli', timeoutSec: 900 },
    ],
    ['--suite head', ['--suite', 'head', '--cache'], {}, { suite: 'head', mode: 'proxy' }],
    ['--suite npm', ['--suite=npm'], {}, { suite: 'npm' }],
    ['--via express', ['--via', 'express', '--cache'], {}, { via: 'express', cache: true, mode: 'proxy' }],
    ['--via cli', ['--via', 'cli'], {}, { via: 'cli' }],
    [
      '--suite head --via express --store redis',
      ['--suite', 'head', '--via', 'express', '--cache', '--store', 'redis'],
      {},
      { suite: 'head', via: 'express', store: 'redis' },
    ],
    ['--private --suite head', ['--private', '--suite', 'head'], {}, { mode: 'private', suite: 'head' }],
    ['--cache --store disk', ['--cache', '--store', 'disk'], {}, { cache: true, store: 'disk' }],
    ['--cache --store redis', ['--cache', '--store', 'redis'], {}, { cache: true, store: 'redis' }],
    [
      '--private alone -> default adapter (undefined here)',
      ['--private'],
      {},
      { mode: 'private', adapter: undefined },
    ],
    [
      '--private --adapter relative -> resolved against cwd',
      ['--private', '--adapter', 'a/b.mjs'],
      {},
      { adapter: '/work/here/a/b.mjs' },
    ],
    ['--out relative -> resolved against cwd', ['--private', '--out', 'res'], {}, { out: '/work/here/res' }],
    [
      'floors as integers',
      ['--private', '--floor-required', '145', '--floor-optimal', '0'],
      {},
      { floorRequired: 145, floorOptimal: 0 },
    ],
    ['no floor flags -> no floors', ['--private'], {}, { floorRequired: undefined, floorOptimal: undefined }],
    ['GATEHOUSE_CONFORMANCE_TIMEOUT used', [], { GATEHOUSE_CONFORMANCE_TIMEOUT: '60' }, { timeoutSec: 60 }],
    [
      '--timeout wins over the environment',
      ['--timeout', '30'],
      { GATEHOUSE_CONFORMANCE_TIMEOUT: '60' },
      { timeoutSec: 30 },
    ],
    [
      'GATEHOUSE_CONFORMANCE_CONFIG with proxy mode is fine',
      ['--cache'],
      { GATEHOUSE_CONFORMANCE_CONFIG: '{}' },
      { mode: 'proxy' },
    ],
  ];
  for (const [name, argv, env, want] of cases) {
    test(name, () => {
      const got = ok(argv, env);
      for (const [k, v] of Object.entries(want)) assert.equal(got[k as keyof Options], v, k);
    });
  }
});

describe('conformance options: usage errors name the flag', () => {
  const cases: Array<[string, string[], Record<string, string>, RegExp]> = [
    ['--adapter without --private', ['--adapter', 'x.mjs'], {}, /--adapter: only with --private/],
    ['--private --cache', ['--private', '--cache'], {}, /--cache: not with --private/],
    ['--private --store disk', ['--private', '--store', 'disk'], {}, /--store: not with --private/],
    ['--private --keep-alive', ['--private', '--keep-alive'], {}, /--keep-alive: not with --private/],
    ['--private --proxy-port', ['--private', '--proxy-port', '8080'], {}, /--proxy-port: not with --private/],
    ['--private --via express', ['--private', '--via', 'express'], {}, /--via: not with --private/],
    ['--suite neither npm nor head', ['--suite', 'main'], {}, /--suite: expected npm or head, got 'main'/],
    ['--suite without a value', ['--suite'], {}, /--suite/],
    [
      '--via neither cli nor express',
      ['--via', 'koa'],
      {},
      /--via: expected cli, express, bun or deno, got 'koa'/,
    ],
    [
      '--private with GATEHOUSE_CONFORMANCE_CONFIG set',
      ['--private'],
      { GATEHOUSE_CONFORMANCE_CONFIG: '{"cache":{}}' },
      /GATEHOUSE_CONFORMANCE_CONFIG: not with --private/,
    ],
    [
      '--store neither memory, disk nor redis',
      ['--cache', '--store', 'mongo'],
      {},
      /--store: expected memory, disk or redis/,
    ],
    ['negative floor', ['--floor-required=-1'], {}, /--floor-required: expected an integer 0\.\.10000/],
    ['fractional floor', ['--floor-optimal', '1.5'], {}, /--floor-optimal: expected an integer/],
    ['empty floor', ['--floor-required', ''], {}, /--floor-required: expected an integer/],
    ['word as floor', ['--floor-required', 'many'], {}, /--floor-required: expected an integer/],
    ['port 0', ['--origin-port', '0'], {}, /--origin-port: expected an integer 1\.\.65535/],
    ['timeout from a bad environment', [], { GATEHOUSE_CONFORMANCE_TIMEOUT: 'soon' }, /--timeout: expected/],
    ['unknown flag', ['--privat'], {}, /--privat/],
    ['positional argument', ['http://x'], {}, /http:\/\/x/],
  ];
  for (const [name, argv, env, want] of cases) {
    test(name, () => {
      const r = parseOptions(argv, env, '/work/here');
      assert.equal(r.kind, 'usage');
      assert.match((r as { message: string }).message, want);
    });
  }
  test('-h -> help', () => assert.equal(parseOptions(['-h'], {}).kind, 'help'));
});
