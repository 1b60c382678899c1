// The report of gatehouse check: findings in area order, the summary counts, the JSON shape of
// DESIGN.md, and the text form (headings, marks, second line, colour only when asked, escapes).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildReport, renderJson, renderText } from '../../src/inspect/report.js';
import type { Area, Check, Finding, Severity } from '../../src/inspect/types.js';
import { recording } from '../helpers/recording.js';

const f = (area: Area, severity: Severity, name: string, message = `${name} message`): Finding => ({
  id: `${area}.${name}`,
  area,
  severity,
  message,
  evidence: `x-${name}: 1`,
  rfc: 'RFC 9111 §4.2.1',
});
const checkOf =
  (...fs: Finding[]): Check =>
  () =>
    fs;

describe('buildReport', () => {
  it('findings from several checks come out in area order, in check order within an area', () => {
    const report = buildReport(recording(), [
      checkOf(f('security', 'info', 'c'), f('caching', 'error', 'a')),
      checkOf(f('redirects', 'warning', 'r'), f('caching', 'info', 'b')),
    ]);
    assert.deepEqual(
      report.findings.map((x) => x.id),
      ['redirects.r', 'caching.a', 'caching.b', 'security.c'],
    );
  });

  it('summary counts each severity', () => {
    const report = buildReport(recording(), [
      checkOf(
        f('caching', 'error', 'a'),
        f('caching', 'error', 'b'),
        f('cors', 'warning', 'c'),
        f('jsonp', 'info', 'd'),
      ),
    ]);
    assert.deepEqual(report.summary, { errors: 2, warnings: 1, infos: 1 });
  });

  it('url and finalUrl come from the recording', () => {
    const report = buildReport(recording({ url: 'http://a.example/', finalUrl: 'https://a.example/' }), []);
    assert.equal(report.url, 'http://a.example/');
    assert.equal(report.finalUrl, 'https://a.example/');
    assert.deepEqual(report.summary, { errors: 0, warnings: 0, infos: 0 });
  });

  it('default checks: the protocol check runs (http-version on any answered site)', () => {
    const report = buildReport(recording());
    assert.ok(report.findings.some((x) => x.id === 'protocol.http-version'));
  });
});

describe('renderJson: the DESIGN shape', () => {
  it('url, finalUrl, status, findings with id, severity, message, evidence, rfc (and area), summary', () => {
    const report = buildReport(recording({ probes: { primary: { status: 502 } } }), [
      checkOf(f('cors', 'error', 'star')),
    ]);
    const json = JSON.parse(renderJson(report)) as Record<string, unknown>;
    // The final status beside url/finalUrl; the DESIGN keys kept, in their order; then what passed
    // and every request sent.
    assert.deepEqual(Object.keys(json), [
      'url',
      'finalUrl',
      'status',
      'findings',
      'summary',
      'passed',
      'probes',
    ]);
    assert.equal(json.status, 502);
    assert.deepEqual(json.findings, [
      {
        id: 'cors.star',
        area: 'cors',
        severity: 'error',
        message: 'star message',
        evidence: 'x-star: 1',
        rfc: 'RFC 9111 §4.2.1',
      },
    ]);
    assert.deepEqual(json.summary, { errors: 1, warnings: 0, infos: 0 });
  });
});

describe('renderText', () => {
  const report = buildReport(recording({ url: 'http://a.example/', finalUrl: 'https://a.example/' }), [
    checkOf(f('caching', 'info', 'i'), f('caching', 'error', 'e'), f('cors', 'warning', 'w')),
  ]);

  it('headings per area with findings, errors first, evidence and RFC on an indented second line', () => {
    const text = renderText(report, { color: false });
    const lines = text.split('\n');
    assert.equal(lines[0], 'gatehouse check http://a.example/');
    assert.equal(lines[1], 'final URL https://a.example/');
    assert.equal(lines[2], 'status 200');
    const caching = lines.indexOf('Caching');
    assert.ok(caching > 0);
    assert.equal(lines[caching + 1], '  ERROR e message [caching.e]');
    assert.equal(lines[caching + 2], '        x-e: 1 | RFC 9111 §4.2.1');
    assert.equal(lines[caching + 3], '  info  i message [caching.i]');
    assert.ok(lines.indexOf('CORS') > caching);
    assert.ok(!lines.includes('Redirects'), 'an area without findings has no heading');
  });

  it('one summary line at the end, singular for 1 (issue 26)', () => {
    const text = renderText(report, { color: false });
    assert.ok(text.endsWith('\n1 error, 1 warning, 1 info\n'), text);
    const none = renderText(buildReport(recording(), [checkOf()]), { color: false });
    assert.ok(none.endsWith('\n0 errors, 0 warnings, 0 infos\n'), none);
    const two = buildReport(recording(), [checkOf(f('cors', 'warning', 'a'), f('cors', 'warning', 'b'))]);
    assert.ok(renderText(two, { color: false }).endsWith('\n0 errors, 2 warnings, 0 infos\n'));
  });

  it('no final response: the status line says so', () => {
    const lost = buildReport(recording({ probes: { primary: { error: 'reset' } } }), [checkOf()]);
    assert.equal(lost.status, null);
    assert.match(renderText(lost, { color: false }), /\nstatus none \(no final response\)\n/);
  });

  it('no colour unless asked; with colour, ANSI marks', () => {
    assert.doesNotMatch(renderText(report, { color: false }), /\u001b\[/);
    assert.match(renderText(report, { color: true }), /\u001b\[31mERROR\u001b\[0m/);
  });

  it('attack: an ANSI escape or newline in a server header is shown escaped, never sent raw', () => {
    const hostile = buildReport(recording(), [
      checkOf({
        ...f('security', 'info', 'leak'),
        evidence: 'server: \u001b[2J\u001b[31mpwned\r\nfake: line',
      }),
    ]);
    const text = renderText(hostile, { color: false });
    assert.doesNotMatch(text, /\u001b|\r/);
    assert.match(text, /server: \\x1b\[2J\\x1b\[31mpwned\\x0d\\x0afake: line/);
  });

  // A bidi override reorders what follows (`evil\u202Egpj.js` reads as `eviljs.jpg`, UAX #9 §2) and
  // U+2028 ends a line on some terminals: neither may reach the terminal raw from a finding's message.
  it('attack: bidi overrides, isolates and U+2028/U+2029 in a finding message -> each a \\u escape, one line', () => {
    const hostile = buildReport(recording(), [
      checkOf({
        ...f('caching', 'warning', 'name'),
        message: 'evil\u202egpj.js\u2028fake: line \u2066x\u2069 \u202a\u202b\u202c\u202d\u2029end',
        evidence: 'x-name: a\u202eb\u2028c',
      }),
    ]);
    const lines = renderText(hostile, { color: false }).split('\n');
    const at = lines.indexOf('Caching');
    assert.equal(
      lines[at + 1],
      '  WARN  evil\\u202egpj.js\\u2028fake: line \\u2066x\\u2069 \\u202a\\u202b\\u202c\\u202d\\u2029end [caching.name]',
    );
    assert.equal(lines[at + 2], '        x-name: a\\u202eb\\u2028c | RFC 9111 §4.2.1');
    assert.doesNotMatch(lines.join('\n'), /[\u2028\u2029\u202a-\u202e\u2066-\u2069]/);
    // The JSON report escapes them too (RFC 8259 §7) and still parses to the same message.
    const json = renderJson(hostile);
    assert.doesNotMatch(json, /[\u2028\u2029\u202a-\u202e\u2066-\u2069]/);
    const parsed = JSON.parse(json) as { findings: Finding[] };
    assert.equal(parsed.findings[0]?.message, hostile.findings[0]?.message);
  });
});
