// Every package `npm ci` installs must admit the oldest Node our `engines` allows, or npm ci prints
// EBADENGINE there (issue 12 §5: cookie@2, which needs Node >= 22, came in through a devDependency).
// Lockfile v3 records each package's `engines`; a small range check reads them. It knows the forms
// that occur (listed below) and throws on anything else, so a new form fails instead of passing.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

type Version = readonly [number, number, number];
type Op = '>=' | '>' | '<' | '<=';
interface Comparator {
  op: Op;
  v: Version;
}

const TOKEN = /\s*(>=|<=|>|<|=|\^|~)?\s*v?(\d+|[xX*])(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?\s*/y;

/** One comparator as node-semver reads it, desugared into plain bounds on release versions. */
function desugar(op: string, raw: (string | undefined)[]): Comparator[] {
  const parts: number[] = [];
  for (const p of raw) {
    if (p === undefined || /^[xX*]$/.test(p)) break;
    parts.push(Number(p));
  }
  if (raw.slice(parts.length).some((p) => p !== undefined && !/^[xX*]$/.test(p)))
    throw new Error('a number after a wildcard');
  const [x = 0, y = 0, z = 0] = parts;
  const n = parts.length;
  const floor: Version = [x, y, z];
  /** The next version above the given precision: 1 -> X+1.0.0, 2 -> X.Y+1.0, 3 -> X.Y.Z+1. */
  const bump = (k: number): Version => (k === 1 ? [x + 1, 0, 0] : k === 2 ? [x, y + 1, 0] : [x, y, z + 1]);
  if (n === 0) {
    if (op === '' || op === '=' || op === '>=' || op === '<=' || op === '^' || op === '~') return [];
    throw new Error(`${op}* admits nothing`);
  }
  switch (op) {
    case '':
    case '=':
      return [
        { op: '>=', v: floor },
        { op: '<', v: bump(n) },
      ];
    case '>=':
      return [{ op: '>=', v: floor }];
    case '>':
      return [n === 3 ? { op: '>', v: floor } : { op: '>=', v: bump(n) }];
    case '<':
      return [{ op: '<', v: floor }];
    case '<=':
      return [n === 3 ? { op: '<=', v: floor } : { op: '<', v: bump(n) }];
    case '~':
      return [
        { op: '>=', v: floor },
        { op: '<', v: bump(Math.min(n, 2)) },
      ];
    case '^': {
      // The first non-zero part given may not change (^0.2.3 < 0.3.0, ^0.0.3 < 0.0.4, ^0.0 < 0.1.0).
      const fixed = x > 0 || n === 1 ? 1 : y > 0 || n === 2 ? 2 : 3;
      return [
        { op: '>=', v: floor },
        { op: '<', v: bump(fixed) },
      ];
    }
    default:
      throw new Error(`operator ${op}`);
  }
}

/** A range as alternatives (`||`) of comparator sets; throws naming the range on any other form. */
function parseRange(range: string): Comparator[][] {
  return range.split('||').map((set) => {
    if (/\s-\s/.test(set))
      throw new Error(`unparsed engines range "${range}": hyphen ranges are not handled`);
    const out: Comparator[] = [];
    TOKEN.lastIndex = 0;
    while (TOKEN.lastIndex < set.length) {
      const at = TOKEN.lastIndex;
      const m = TOKEN.exec(set);
      if (!m || m[0].length === 0) throw new Error(`unparsed engines range "${range}" at "${set.slice(at)}"`);
      try {
        out.push(...desugar(m[1] ?? '', [m[2], m[3], m[4]]));
      } catch (err) {
        throw new Error(`unparsed engines range "${range}": ${(err as Error).message}`);
      }
      // A prerelease or build tag right after a version (-rc.1, +build) is a form we do not handle.
      if (/^[-+]/.test(set.slice(TOKEN.lastIndex)))
        throw new Error(`unparsed engines range "${range}": prerelease or build tags are not handled`);
    }
    return out;
  });
}

function compare(a: Version, b: Version): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

function holds(v: Version, c: Comparator): boolean {
  const d = compare(v, c.v);
  return c.op === '>=' ? d >= 0 : c.op === '>' ? d > 0 : c.op === '<' ? d < 0 : d <= 0;
}

function satisfies(v: Version, range: string): boolean {
  return parseRange(range).some((set) => set.every((c) => holds(v, c)));
}

/** The range's shape with numbers as N, for the list of forms found. */
const shape = (range: string) => range.replace(/\d+/g, 'N');

const PKG = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { engines: { node: string } };
const floorMatch = /^>=\s*(\d+)\.(\d+)\.(\d+)$/.exec(PKG.engines.node);
const FLOOR: Version = floorMatch
  ? [Number(floorMatch[1]), Number(floorMatch[2]), Number(floorMatch[3])]
  : [0, 0, 0];
const FLOOR_TEXT = FLOOR.join('.');

describe('the engines range check', () => {
  const v20181: Version = [20, 18, 1];
  const cases: [string, string, boolean][] = [
    ['>=X.Y.Z below: admits', '>=20.18.1', true],
    ['>=X.Y.Z above: rejects', '>=20.19.0', false],
    ['>=N (cookie@2 needs Node 22): rejects', '>=22', false],
    ['>= with a space and .x', '>= 10.x', true],
    ['bare major that matches', '20', true],
    ['bare major that does not', '22', false],
    ['bare major.minor that does not', '20.17', false],
    ['exact version that differs', '20.18.0', false],
    ['alternatives, one matches', '20 || >=22', true],
    ['alternatives, none matches', '18 || >=22', false],
    ['^ within the major', '^20.9.0', true],
    ['^ above within the major', '^20.19.0', false],
    ['^ of another major', '^18.18.0', false],
    ['^ of a partial version', '^13.7 || ^14 || >=15.0.1', true],
    ['^0.minor never admits a higher major', '^0.20.0', false],
    ['comparator set: both hold', '>=18 <21', true],
    ['comparator set: upper bound excludes', '>=18 <20', false],
    ['comparator set after ||', '>=22 || 20 >=20.18', true],
    ['~ within the minor', '~20.18.0', true],
    ['~ of an older minor', '~20.17', false],
    ['<= partial is inclusive of the whole minor', '<=20.18', true],
    ['<= an older minor', '<=20.17', false],
    ['> partial means the next minor', '>20.18', false],
    ['> full version', '>20.18.0', true],
    ['* admits anything', '*', true],
    ['an empty range admits anything', '', true],
  ];
  for (const [name, range, expected] of cases) {
    test(`${name}: "${range}" -> ${expected}`, () => assert.equal(satisfies(v20181, range), expected));
  }
  const unparsed: [string, string][] = [
    ['a prerelease tag', '>=20.0.0-rc.1'],
    ['a hyphen range', '20.1.0 - 22'],
    ['a word', 'node >= 20'],
    ['&&', '>=20 && <22'],
    ['a number after a wildcard', '20.x.1'],
  ];
  for (const [name, range] of unparsed) {
    test(`unparsed: ${name} ("${range}") throws instead of passing`, () =>
      assert.throws(() => satisfies(v20181, range), /unparsed engines range/));
  }
});

type LockEntry = { version?: string; dev?: boolean; devOptional?: boolean; engines?: unknown };
const LOCK = JSON.parse(readFileSync(join(REPO, 'package-lock.json'), 'utf8')) as {
  lockfileVersion: number;
  packages: Record<string, LockEntry>;
};

/** The first release of each Node line we support, for what users install (production dependencies):
 *  engines' own floor, then 22 and 24. */
const USER_NODES: Version[] = [FLOOR, [22, 0, 0], [24, 0, 0]];
/** Contributors' `npm ci` installs the devDependencies too, and the tooling asks for more: madge's
 *  TypeScript parser pulls eslint-visitor-keys 5 (`^20.19.0 || ^22.13.0 || >=24`). */
const CONTRIBUTOR_NODES: Version[] = [
  [20, 19, 0],
  [22, 13, 0],
  [24, 0, 0],
];

/** Checks each entry's engines.node against `nodes`: the problems, and how many ranges of each form. */
function checkEngines(entries: [string, LockEntry][], nodes: Version[]) {
  const bad: string[] = [];
  const forms = new Map<string, number>();
  for (const [path, entry] of entries) {
    if (entry.engines === undefined) continue;
    const name = `${path || '(root)'}@${entry.version ?? '?'}`;
    if (typeof entry.engines !== 'object' || entry.engines === null || Array.isArray(entry.engines)) {
      bad.push(`${name}: engines is not an object: ${JSON.stringify(entry.engines)}`);
      continue;
    }
    const node = (entry.engines as Record<string, unknown>).node;
    if (node === undefined) continue;
    if (typeof node !== 'string') {
      bad.push(`${name}: engines.node is not a string: ${JSON.stringify(node)}`);
      continue;
    }
    forms.set(shape(node), (forms.get(shape(node)) ?? 0) + 1);
    try {
      for (const v of nodes)
        if (!satisfies(v, node)) bad.push(`${name}: engines.node "${node}" excludes ${v.join('.')}`);
    } catch (err) {
      bad.push(`${name}: ${(err as Error).message}`);
    }
  }
  const checked = [...forms.values()].reduce((a, b) => a + b, 0);
  return { bad, checked, forms: [...forms].map(([f, n]) => `"${f}" x${n}`).join(', ') };
}

describe('the lockfile against our Node versions', () => {
  test('the lockfile records engines per package (v2 or v3), and engines.node is ">=X.Y.Z"', () => {
    assert.ok(LOCK.lockfileVersion >= 2, `lockfileVersion ${LOCK.lockfileVersion}`);
    assert.ok(floorMatch, `package.json engines.node is not ">=X.Y.Z": ${PKG.engines.node}`);
  });

  test(`every production dependency supports Node ${USER_NODES.map((v) => v.join('.')).join(', ')} (what users install)`, (t) => {
    const entries = Object.entries(LOCK.packages).filter(([, e]) => !e.dev && !e.devOptional);
    const { bad, checked, forms } = checkEngines(entries, USER_NODES);
    t.diagnostic(`${checked} of ${entries.length} production packages set engines.node; forms: ${forms}`);
    assert.ok(checked > 0, 'no engines.node among the production packages');
    assert.deepEqual(bad, []);
  });

  test(`every locked dependency supports Node ${CONTRIBUTOR_NODES.map((v) => v.join('.')).join(', ')} (no EBADENGINE on npm ci)`, (t) => {
    const entries = Object.entries(LOCK.packages);
    const { bad, checked, forms } = checkEngines(entries, CONTRIBUTOR_NODES);
    t.diagnostic(`${checked} of ${entries.length} locked packages set engines.node; forms: ${forms}`);
    // Which packages need more than the users' floor: the reason CONTRIBUTOR_NODES differs.
    const aboveFloor = checkEngines(entries, [FLOOR]).bad;
    t.diagnostic(`above engines' floor ${FLOOR_TEXT}: ${aboveFloor.join('; ') || 'none'}`);
    assert.deepEqual(bad, []);
  });
});
