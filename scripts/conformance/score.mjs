// Scoring for scripts/conformance/run.mjs: pure functions over the suite's test list, its own
// determineTestResult and a results object. Tested in test/conformance/score.test.mjs.

/**
 * The package does not export its result types in every version, so learn them from
 * determineTestResult itself on a tiny synthetic suite: returns a function from its return value to
 * one of pass, yes, fail, optional_fail, no, setup_fail, retry, dependency_fail, untested, harness_fail
 * (else 'other'). harness_fail: the git HEAD suite's name for a request the client aborted (its 10 s
 * timeout); 0.4.5 calls that a fail, and a name learnt twice keeps its first meaning.
 */
export function resultClassifier(determineTestResult) {
  const syn = [
    {
      id: 'syn',
      tests: [
        { id: 'r', kind: 'required' },
        { id: 'o', kind: 'optimal' },
        { id: 'c', kind: 'check' },
        { id: 'd', kind: 'required', depends_on: ['r'] },
      ],
    },
  ];
  const fail = ['Assertion', 'x'];
  const key = (v) => JSON.stringify(v);
  const types = new Map(
    [
      ['pass', determineTestResult(syn, 'r', { r: true })],
      ['yes', determineTestResult(syn, 'c', { c: true })],
      ['fail', determineTestResult(syn, 'r', { r: fail })],
      ['optional_fail', determineTestResult(syn, 'o', { o: fail })],
      ['no', determineTestResult(syn, 'c', { c: fail })],
      ['setup_fail', determineTestResult(syn, 'r', { r: ['Setup', 'x'] })],
      ['retry', determineTestResult(syn, 'r', { r: ['Setup', 'retry'] })],
      ['dependency_fail', determineTestResult(syn, 'd', { r: fail, d: true })],
      ['untested', determineTestResult(syn, 'r', {})],
      ['harness_fail', determineTestResult(syn, 'r', { r: ['AbortError', 'x'] })],
    ]
      .map(([name, v]) => [key(v), name])
      .filter(([k], i, all) => all.findIndex(([k2]) => k2 === k) === i),
  );
  return (v) => types.get(key(v)) ?? 'other';
}

/**
 * @param suites  the suite's test list (what it scores against: the proxy mode's 355 tests)
 * @param determineTestResult  the package's own result logic
 * @returns score(results) -> { rows, count(kind, result), total(kind) }
 */
export function makeScorer(suites, determineTestResult) {
  const classify = resultClassifier(determineTestResult);
  const tests = suites.flatMap((s) => s.tests.map((t) => ({ ...t, kind: t.kind ?? 'required' })));
  return (results) => {
    const rows = tests.map((t) => ({
      id: t.id,
      name: t.name,
      kind: t.kind,
      result: classify(determineTestResult(suites, t.id, results)),
      detail: Array.isArray(results[t.id]) ? String(results[t.id][1] ?? '') : '',
    }));
    const count = (kind, result) => rows.filter((r) => r.kind === kind && r.result === result).length;
    const total = (kind) => rows.filter((r) => r.kind === kind).length;
    return { rows, count, total };
  };
}

/** The score line and the per-kind breakdown, as the proxy mode has always printed them. */
export function summaryLines(score) {
  const { rows, count, total } = score;
  const pad = (n) => String(n).padStart(3);
  const breakdown = (kind) => {
    const by = {};
    for (const r of rows) if (r.kind === kind) by[r.result] = (by[r.result] ?? 0) + 1;
    return Object.entries(by)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
  };
  return [
    `required pass ${pad(count('required', 'pass'))} / ${total('required')}   ` +
      `optimal pass ${pad(count('optimal', 'pass'))} / ${total('optimal')}   ` +
      `check yes ${pad(count('check', 'yes'))} / ${total('check')}`,
    `  required: ${breakdown('required')}`,
    `  optimal:  ${breakdown('optimal')}`,
    `  check:    ${breakdown('check')}`,
  ];
}

/** One message per floor missed; empty when every given floor is met (undefined = no floor). */
export function floorFailures(score, { floorRequired, floorOptimal }) {
  const out = [];
  const req = score.count('required', 'pass');
  const opt = score.count('optimal', 'pass');
  if (floorRequired !== undefined && req < floorRequired)
    out.push(`required pass ${req} is below the floor ${floorRequired}`);
  if (floorOptimal !== undefined && opt < floorOptimal)
    out.push(`optimal pass ${opt} is below the floor ${floorOptimal}`);
  return out;
}

/**
 * Tests of the given kinds that did not pass. `untested` ones (not run in this mode, e.g. the
 * suite's browser_skip tests in --private) are left out unless `withUntested`.
 */
export function notPassing(score, kinds, { withUntested = true } = {}) {
  return score.rows.filter(
    (r) => kinds.includes(r.kind) && r.result !== 'pass' && (withUntested || r.result !== 'untested'),
  );
}

export function formatRow(r) {
  return `${r.kind.padEnd(8)} ${r.result.padEnd(15)} ${r.id}  ${r.name ?? ''}${r.detail ? ` - ${r.detail}` : ''}`;
}

/** Every test, one line each: kind, result, id, name, detail (tabs and newlines in text flattened). */
export function toTsv(score) {
  const cell = (s) => String(s ?? '').replace(/[\t\r\n]+/g, ' ');
  const lines = ['kind\tresult\tid\tname\tdetail'];
  for (const r of score.rows) lines.push([r.kind, r.result, r.id, r.name, r.detail].map(cell).join('\t'));
  return `${lines.join('\n')}\n`;
}
