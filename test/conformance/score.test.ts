// scripts/conformance/score.mjs: scoring, summary lines, floors and failure lists, over a small
// synthetic suite and a stand-in for the package's determineTestResult with 0.4.5's logic (the real
// one lives in the installed suite, which npm test does not install).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

type Kind = 'required' | 'optimal' | 'check';
interface SuiteTest {
  id: string;
  name?: string;
  kind?: Kind;
  depends_on?: string[];
}
interface Suite {
  id: string;
  tests: SuiteTest[];
}
type Results = Record<string, true | [string, string]>;
interface Row {
  id: string;
  kind: Kind;
  result: string;
  name?: string;
  detail: string;
}
interface Score {
  rows: Row[];
  count(kind: Kind, result: string): number;
  total(kind: Kind): number;
}
type Determine = (suites: Suite[], id: string, results: Results) => unknown;
interface ScoreModule {
  makeScorer(suites: Suite[], determine: Determine): (results: Results) => Score;
  summaryLines(score: Score): string[];
  floorFailures(score: Score, floors: { floorRequired?: number; floorOptimal?: number }): string[];
  notPassing(score: Score, kinds: Kind[], opts?: { withUntested?: boolean }): Row[];
  toTsv(score: Score): string;
}

const { makeScorer, summaryLines, floorFailures, notPassing, toTsv } = (await import(
  new URL('../../scripts/conformance/score.mjs', import.meta.url).href
)) as ScoreModule;

// http-cache-tests 0.4.5 lib/display.mjs determineTestResult, reduced to its symbols.
const T = {
  untested: ['-'],
  pass: ['ok'],
  fail: ['x'],
  optional_fail: ['!'],
  yes: ['Y'],
  no: ['N'],
  setup_fail: ['s'],
  dependency_fail: ['d'],
  retry: ['r'],
};
const determine: Determine = (suites, id, results) => {
  const t = suites.flatMap((s) => s.tests).find((x) => x.id === id)!;
  const r = results[id];
  if (r === undefined) return T.untested;
  for (const dep of t.depends_on ?? []) {
    const d = determine(suites, dep, results);
    if (d !== T.pass && d !== T.yes) return T.dependency_fail;
  }
  if (Array.isArray(r) && r[0] === 'Setup') return r[1] === 'retry' ? T.retry : T.setup_fail;
  const kind = t.kind ?? 'required';
  if (kind === 'required') return r === true ? T.pass : T.fail;
  if (kind === 'optimal') return r === true ? T.pass : T.optional_fail;
  return r === true ? T.yes : T.no;
};

const suites: Suite[] = [
  {
    id: 's',
    tests: [
      { id: 'req-pass', name: 'passes' },
      { id: 'req-fail', name: 'fails', kind: 'required' },
      { id: 'req-dep', name: 'depends on a failure', depends_on: ['req-fail'] },
      { id: 'req-setup', name: 'setup fails' },
      { id: 'req-skipped', name: 'browser_skip: never run' },
      { id: 'opt-pass', kind: 'optimal' },
      { id: 'opt-fail', name: 'optional', kind: 'optimal' },
      { id: 'chk-yes', kind: 'check' },
    ],
  },
];
const results: Results = {
  'req-pass': true,
  'req-fail': ['Assertion', 'Response 2 comes from cache'],
  'req-dep': true,
  'req-setup': ['Setup', 'Response 1 status is 500'],
  'opt-pass': true,
  'opt-fail': ['Assertion', 'tab\there\nand a newline'],
  'chk-yes': true,
};
const score = makeScorer(suites, determine)(results);
const resultOf = (id: string) => score.rows.find((r) => r.id === id)?.result;

describe('conformance score: each test classified by the suite logic', () => {
  const cases: Array<[string, string, string]> = [
    ['true for a required test -> pass', 'req-pass', 'pass'],
    ['an assertion on a required test -> fail', 'req-fail', 'fail'],
    ['a failed prerequisite -> dependency_fail', 'req-dep', 'dependency_fail'],
    ['a Setup error -> setup_fail', 'req-setup', 'setup_fail'],
    ['no result (not run in this mode) -> untested', 'req-skipped', 'untested'],
    ['an assertion on an optimal test -> optional_fail', 'opt-fail', 'optional_fail'],
    ['true for a check -> yes', 'chk-yes', 'yes'],
  ];
  for (const [name, id, want] of cases) test(name, () => assert.equal(resultOf(id), want));
  test("an aborted request (0.4.5's logic) -> fail, not harness_fail", () => {
    const aborted = makeScorer(suites, determine)({ ...results, 'req-fail': ['AbortError', 'aborted'] });
    assert.equal(aborted.rows.find((r) => r.id === 'req-fail')?.result, 'fail');
  });
  test("an aborted request (git HEAD's logic: its own result type) -> harness_fail", () => {
    const harness = ['h'];
    const headLogic: Determine = (s, id, r) => {
      const v = r[id];
      return Array.isArray(v) && v[0] === 'AbortError' ? harness : determine(s, id, r);
    };
    const aborted = makeScorer(suites, headLogic)({ ...results, 'req-fail': ['AbortError', 'aborted'] });
    assert.equal(aborted.rows.find((r) => r.id === 'req-fail')?.result, 'harness_fail');
    assert.equal(aborted.rows.find((r) => r.id === 'req-setup')?.result, 'setup_fail');
  });
  test('a value the suite logic never returns -> other', () => {
    const odd = makeScorer(suites, (s, id, r) => (id === 'req-pass' ? ['??'] : determine(s, id, r)))(results);
    assert.equal(odd.rows.find((r) => r.id === 'req-pass')?.result, 'other');
  });
});

describe('conformance score: summary and floors', () => {
  test('summary line has pass / total per kind, then the breakdown', () => {
    const lines = summaryLines(score);
    assert.equal(lines[0], 'required pass   1 / 5   optimal pass   1 / 2   check yes   1 / 1');
    assert.equal(lines[1], '  required: pass 1, fail 1, dependency_fail 1, setup_fail 1, untested 1');
    assert.equal(lines[2], '  optimal:  pass 1, optional_fail 1');
  });
  const cases: Array<[string, { floorRequired?: number; floorOptimal?: number }, string[]]> = [
    ['no floors -> none missed', {}, []],
    ['floors equal to the score -> met', { floorRequired: 1, floorOptimal: 1 }, []],
    [
      'required floor above the score -> missed',
      { floorRequired: 2 },
      ['required pass 1 is below the floor 2'],
    ],
    [
      'both floors above -> both named',
      { floorRequired: 2, floorOptimal: 3 },
      ['required pass 1 is below the floor 2', 'optimal pass 1 is below the floor 3'],
    ],
    ['floor 0 -> always met', { floorRequired: 0, floorOptimal: 0 }, []],
  ];
  for (const [name, floors, want] of cases)
    test(name, () => assert.deepEqual(floorFailures(score, floors), want));
});

describe('conformance score: failure lists', () => {
  test('required not passing, untested left out -> fail, dependency_fail, setup_fail in suite order', () => {
    const ids = notPassing(score, ['required'], { withUntested: false }).map((r) => r.id);
    assert.deepEqual(ids, ['req-fail', 'req-dep', 'req-setup']);
  });
  test('required not passing with untested -> the skipped test too', () => {
    const ids = notPassing(score, ['required']).map((r) => r.id);
    assert.deepEqual(ids, ['req-fail', 'req-dep', 'req-setup', 'req-skipped']);
  });
  test('tsv: a header, one line per test, tabs and newlines in details flattened', () => {
    const lines = toTsv(score).replace(/\n$/, '').split('\n');
    assert.equal(lines[0], 'kind\tresult\tid\tname\tdetail');
    assert.equal(lines.length, 1 + 8);
    assert.ok(lines.every((l) => l.split('\t').length === 5));
    assert.ok(lines.includes('required\tfail\treq-fail\tfails\tResponse 2 comes from cache'));
    assert.ok(lines.includes('optimal\toptional_fail\topt-fail\toptional\ttab here and a newline'));
  });
});
