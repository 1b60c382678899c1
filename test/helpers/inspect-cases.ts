// Shared by the inspector's area tests (test/inspect/): the seeded hostile-site fuzz helpers, the
// finding table harness and the fires-and-stays-quiet pairs over a good recording.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Area, Finding, ProbeName, Recording, Severity } from '../../src/inspect/types.js';
import type { Gen } from './random.js';
import type { ExchangeSpec } from './recording.js';

/** Fuzz helpers over one area's PIECES (the text a hostile or broken site might send there). */
export function hostileFuzz(pieces: readonly string[]) {
  /** A field value: pieces, or any text a parser would let through (no CR, LF or NUL). */
  const hostileValue = (g: Gen): string =>
    g.chance(0.7) ? g.string(pieces, 6) : g.anyString(24).replace(/[\r\n\0]/g, '');

  function hostileExchange(g: Gen, names: readonly string[], url: string): ExchangeSpec {
    const headers: [string, string][] = [];
    for (const name of names) if (g.chance(0.6)) headers.push([name, hostileValue(g)]);
    if (g.chance(0.2)) headers.push([g.pick(names), hostileValue(g)]); // a repeated field line
    return {
      url,
      status: g.pick([200, 204, 206, 301, 302, 303, 304, 307, 308, 400, 404, 405, 500, 599]),
      headers,
      body: g.string(pieces, 6),
      requestHeaders: headers.length > 0 && g.chance(0.5) ? [headers[0]!] : [],
    };
  }

  return { hostileValue, hostileExchange };
}

/** Every finding is of `area`, its id in that area, message and evidence one line each. */
export function assertWellFormed(findings: readonly Finding[], area: string): void {
  for (const f of findings) {
    assert.equal(f.area, area);
    assert.ok(f.id.startsWith(`${area}.`), f.id);
    assert.doesNotMatch(f.message, /[\r\n]/);
    assert.doesNotMatch(f.evidence, /[\r\n]/);
  }
}

/** [condition, recording, id, fires, severity when not the table's]. */
export type FindingCase = [
  condition: string,
  rec: Recording,
  id: string,
  fires: boolean,
  severity?: Severity,
];

export interface FindingTable {
  area: Area;
  check: (rec: Recording) => Finding[];
  cases: readonly FindingCase[];
  /** Every finding id of the area with its usual severity. */
  severity: Record<string, Severity>;
  /** What `rfc` must match (default: an RFC section). */
  rfc?: RegExp;
  /** Also assert that every id the cases give is in `severity`. */
  allIdsListed?: boolean;
}

/**
 * Adds to the current describe: one test per case (a firing case also checks severity, area, a
 * one-line message without a period, evidence and rfc), and one that each id fires and stays quiet.
 */
export function findingTableTests(t: FindingTable): void {
  const rfc = t.rfc ?? /^RFC \d+ §/;
  for (const [condition, rec, id, fires, severity] of t.cases) {
    it(`${condition} -> ${fires ? '' : 'no '}${id}${severity ? ` (${severity})` : ''}`, () => {
      const findings = t.check(rec);
      const f = findings.find((x) => x.id === id);
      if (!fires) {
        assert.equal(f, undefined, `unexpected ${id}: ${f?.message}`);
        return;
      }
      assert.ok(f, `expected ${id}, got ${findings.map((x) => x.id).join(', ')}`);
      assert.equal(f.severity, severity ?? t.severity[id]);
      assert.equal(f.area, t.area);
      assert.ok(f.message.length > 0 && !f.message.includes('\n') && !f.message.endsWith('.'));
      assert.ok(f.evidence.length > 0);
      assert.match(f.rfc, rfc);
    });
  }

  it('every finding id has a case that fires it and one that keeps it quiet', () => {
    for (const id of Object.keys(t.severity)) {
      assert.ok(
        t.cases.some((c) => c[2] === id && c[3]),
        `${id} never fires`,
      );
      assert.ok(
        t.cases.some((c) => c[2] === id && !c[3]),
        `${id} never stays quiet`,
      );
    }
    if (!t.allIdsListed) return;
    const emitted = new Set(t.cases.flatMap((c) => t.check(c[1]).map((f) => f.id)));
    for (const id of emitted) assert.ok(id in t.severity, `${id} has no severity in the table`);
  });
}

/** Probes to lay over an area's good recording (undefined: not sent). */
export type Probes = Partial<Record<ProbeName, ExchangeSpec | undefined>>;

/** `good` with the probes of `over` in place, those set to undefined left out. */
export function withProbes(good: Probes, over: Probes): Partial<Record<ProbeName, ExchangeSpec>> {
  const probes: Partial<Record<ProbeName, ExchangeSpec>> = {};
  for (const [name, x] of Object.entries({ ...good, ...over })) {
    if (x !== undefined) probes[name as ProbeName] = x;
  }
  return probes;
}

export interface ProbesCase {
  name: string;
  probes: Probes;
}

/** [id, fires on, quiet on]; ids are `area.name:severity`. */
export type FiresAndQuiet = [id: string, fire: ProbesCase, quiet: ProbesCase];

/** Adds two tests per id: the firing probes give it, the quiet ones do not. */
export function firesAndQuietTests(cases: readonly FiresAndQuiet[], ids: (probes: Probes) => string[]): void {
  for (const [id, fire, quiet] of cases) {
    it(`${id}: fires on ${fire.name}`, () => {
      const got = ids(fire.probes);
      assert.ok(got.includes(id), got.join(' '));
    });
    it(`${id}: quiet on ${quiet.name}`, () => {
      const got = ids(quiet.probes);
      assert.ok(!got.includes(id), got.join(' '));
    });
  }
}
