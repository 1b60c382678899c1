// The report of `gatehouse check`: the checks' findings in area order with their counts, as JSON
// (DESIGN: { url, finalUrl, findings: [{ id, severity, message, evidence, rfc }], summary }) or as text.
import { forTerminal, jsonForTerminal } from '../http/terminal.js';
import { CHECKS } from './checks/index.js';
import { passedChecks, probeRuns } from './checks/passed.js';
import type { Area, Check, Finding, Recording, Report, Severity } from './types.js';

export const AREAS: readonly Area[] = [
  'status',
  'redirects',
  'protocol',
  'caching',
  'validators',
  'coding',
  'cors',
  'jsonp',
  'security',
];

export const AREA_TITLES: Readonly<Record<Area, string>> = {
  status: 'Status and assets',
  redirects: 'Redirects',
  protocol: 'Protocol and TLS',
  caching: 'Caching',
  validators: 'Validators',
  coding: 'Content coding',
  cors: 'CORS',
  jsonp: 'JSONP',
  security: 'Security headers',
};

const SEVERITY_ORDER: Readonly<Record<Severity, number>> = { error: 0, warning: 1, info: 2 };

/** Runs the checks; findings sorted by area (stable within one: the check's own order). */
export function buildReport(rec: Recording, checks: readonly Check[] = CHECKS): Report {
  const findings = checks.flatMap((check) => check(rec));
  const rank = (f: Finding) => AREAS.indexOf(f.area);
  const ordered = findings
    .map((f, i) => ({ f, i }))
    .sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i)
    .map(({ f }) => f);
  const status = rec.probes.primary?.response?.status ?? null;
  const passes = passedChecks(rec);
  const passed = AREAS.flatMap((a) => passes.filter((p) => p.area === a));
  const summary = summarize(ordered);
  return {
    url: rec.url,
    finalUrl: rec.finalUrl,
    status,
    findings: ordered,
    summary,
    passed,
    probes: probeRuns(rec),
  };
}

export function summarize(findings: readonly Finding[]): Report['summary'] {
  const summary = { errors: 0, warnings: 0, infos: 0 };
  for (const f of findings) {
    if (f.severity === 'error') summary.errors++;
    else if (f.severity === 'warning') summary.warnings++;
    else summary.infos++;
  }
  return summary;
}

/**
 * The JSON form: the Report itself, `area` kept on each finding (an addition to the DESIGN shape); C1
 * controls, U+2028/9 and bidi overrides a server sent are \u-escaped (same value, nothing raw).
 */
export function renderJson(report: Report): string {
  return `${jsonForTerminal(report, 2)}\n`;
}

/** `1 warning`, `2 warnings`, `0 warnings`. */
function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

const MARKS: Readonly<Record<Severity, string>> = { error: 'ERROR', warning: 'WARN ', info: 'info ' };
const COLORS: Readonly<Record<Severity, string>> = { error: '31', warning: '33', info: '36' };

export interface TextOptions {
  color: boolean;
  /** Also list what passed (`--verbose`), under each area after its findings. */
  verbose?: boolean;
}

/**
 * The readable report: a heading per area that has findings, one line per finding (mark, message,
 * id), its evidence and RFC on an indented second line, and `N errors, N warnings, N infos` last
 * (singular for 1: `1 error, 1 warning, 1 info`). With `verbose`, each area's passes follow its findings.
 */
export function renderText(report: Report, o: TextOptions = { color: false }): string {
  const paint = (code: string, s: string) => (o.color ? `\u001b[${code}m${s}\u001b[0m` : s);
  const out: string[] = [`gatehouse check ${forTerminal(report.url)}`];
  if (report.finalUrl !== report.url) out.push(`final URL ${forTerminal(report.finalUrl)}`);
  out.push(`status ${report.status ?? 'none (no final response)'}`);
  for (const area of AREAS) {
    const inArea = report.findings.filter((f) => f.area === area);
    const passed = o.verbose === true ? report.passed.filter((p) => p.area === area) : [];
    if (inArea.length === 0 && passed.length === 0) continue;
    inArea.sort((a, b) => SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity]);
    out.push('', paint('1', AREA_TITLES[area]));
    for (const f of inArea) {
      out.push(`  ${paint(COLORS[f.severity], MARKS[f.severity])} ${forTerminal(f.message)} [${f.id}]`);
      const second = [f.evidence, f.rfc]
        .filter((s) => s !== '')
        .map(forTerminal)
        .join(' | ');
      if (second !== '') out.push(`        ${paint('2', second)}`);
    }
    for (const p of passed) {
      out.push(`  ${paint('32', 'pass ')} ${forTerminal(p.message)} [${p.id}]`);
      if (p.evidence !== '') out.push(`        ${paint('2', forTerminal(p.evidence))}`);
    }
  }
  const s = report.summary;
  const line = `${count(s.errors, 'error')}, ${count(s.warnings, 'warning')}, ${count(s.infos, 'info')}`;
  out.push('', s.errors > 0 ? paint('31;1', line) : line);
  return `${out.join('\n')}\n`;
}
