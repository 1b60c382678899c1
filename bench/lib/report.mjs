// Turns measurements into the printed report: per scenario group a markdown table of req/s (median of
// rounds, with spread), peak RSS and the group subject's ratios to its peers; then the targets with met /
// MISSED.

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return undefined;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

const int = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const fmtRps = (n) => int.format(n);
const fmtRatio = (r) => `${r.toFixed(2)}x`;
const fmtMb = (kb) => (kb === undefined ? 'n/a' : (kb / 1024).toFixed(1));

function table(header, rows, alignRight = true) {
  const line = (cells) => `| ${cells.join(' | ')} |`;
  const sep = header.map((_, i) => (i === 0 || !alignRight ? '---' : '---:'));
  return [line(header), line(sep), ...rows.map(line)].join('\n');
}

/** Medians per (server, scenario) from a `cell(server, scenario)` accessor; undefined when not measured. */
export function summarize({ cell }) {
  return {
    median(server, scenario) {
      const c = cell(server, scenario);
      return c?.state === 'ok' && c.rps.length ? median(c.rps) : undefined;
    },
  };
}

/** The first line of a (possibly multi-line) error plus the line that names its cause, if different. */
export function brief(detail = '', maxLength = 240) {
  const lines = String(detail)
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const first = lines[0] ?? '';
  // The line naming the error, else (e.g. `gatehouse: config.json: cors.origins: ...`) the first log line.
  const cause =
    lines.slice(1).find((l) => /error|emerg|alert|fatal|EADDR|ENOENT|EACCES/i.test(l)) ?? lines[1];
  const text = cause && cause !== first ? `${first}: ${cause}` : first;
  return text.length > maxLength ? `${text.slice(0, maxLength - 3)}...` : text;
}

const SERVER_LEVEL = new Set(['failed to start', 'unavailable', 'crashed']);

/**
 * @param {object} run
 * @param {{ title: string, subject: string, serverNames: string[], scenarioNames: string[] }[]} run.groups
 *   one table each: rows are its scenarios, columns its servers (in order), ratios are subject / peer
 * @param {(server: string, scenario: string) => { state: string, detail?: string, rps: number[],
 *   errors: string[] } | undefined} run.cell   state 'ok' when the server was checked and timed; undefined
 *   when the server does not run that scenario
 * @param {(server: string) => number | undefined} run.peakRssKb
 * @param {{ scenario: string, subject: string, peer: string, min: number }[]} run.targets
 * @param {{ server: string, maxMb: number }[]} run.rssTargets
 * @returns {string} markdown
 */
export function renderReport({ groups, cell, peakRssKb, targets, rssTargets }) {
  const { median: med } = summarize({ cell });
  const notes = [];
  const note = (text) => {
    let i = notes.indexOf(text);
    if (i < 0) i = notes.push(text) - 1;
    return `[${i + 1}]`;
  };
  const rpsCell = (server, scenario) => {
    const c = cell(server, scenario);
    if (!c) return '-';
    if (SERVER_LEVEL.has(c.state)) return `${c.state} ${note(`${server}: ${c.state}: ${brief(c.detail)}`)}`;
    if (c.state !== 'ok') return `${c.state} ${note(`${server} / ${scenario}: ${brief(c.detail)}`)}`;
    if (!c.rps.length) return `no result ${note(`${server} / ${scenario}: ${brief(c.errors.join('\n'))}`)}`;
    const m = median(c.rps);
    const spread =
      c.rps.length > 1 ? ` ±${Math.round(((Math.max(...c.rps) - Math.min(...c.rps)) / 2 / m) * 100)}%` : '';
    const flagged = c.errors?.length ? ` (!) ${note(`${server} / ${scenario}: ${c.errors.join('; ')}`)}` : '';
    return `${fmtRps(m)}${spread}${flagged}`;
  };

  const out = [];
  for (const { title, subject, serverNames, scenarioNames } of groups) {
    if (!serverNames.length || !scenarioNames.length) continue;
    if (out.length) out.push('');
    out.push(`### ${title}`, '');
    const rows = scenarioNames.map((scenario) => [
      scenario,
      ...serverNames.map((server) => rpsCell(server, scenario)),
    ]);
    rows.push(['peak RSS (MB)', ...serverNames.map((server) => fmtMb(peakRssKb(server)))]);
    out.push(table(['req/s (median)', ...serverNames], rows));

    const peers = serverNames.filter((s) => s !== subject);
    if (serverNames.includes(subject) && peers.length) {
      out.push('');
      const ratioRows = scenarioNames.map((scenario) => [
        scenario,
        ...peers.map((peer) => {
          const a = med(subject, scenario);
          const b = med(peer, scenario);
          return a !== undefined && b ? fmtRatio(a / b) : 'n/a';
        }),
      ]);
      out.push(table([`${subject} / peer`, ...peers], ratioRows));
    }
  }

  if (notes.length) {
    out.push('');
    notes.forEach((text, i) => {
      out.push(`[${i + 1}] ${text.replace(/\s*\n\s*/g, ' | ')}`);
    });
  }

  // Targets: only those whose subject and peer both run the scenario in this run.
  const runs = (server, scenario) => cell(server, scenario) !== undefined;
  const lines = [];
  for (const t of targets) {
    if (!runs(t.subject, t.scenario) && !runs(t.peer, t.scenario)) continue;
    const label = `${t.scenario} ${t.subject} >= ${t.min.toFixed(2)}x ${t.peer}`;
    const a = med(t.subject, t.scenario);
    const b = med(t.peer, t.scenario);
    let verdict;
    let value = '';
    if (!runs(t.subject, t.scenario)) verdict = `not checked (${t.subject} not selected)`;
    else if (!runs(t.peer, t.scenario)) verdict = `not checked (${t.peer} not selected)`;
    else if (a === undefined) verdict = `MISSED (no ${t.subject} result)`;
    else if (b === undefined) verdict = `not checked (no ${t.peer} result)`;
    else {
      const r = a / b;
      value = fmtRatio(r);
      verdict = r >= t.min ? 'met' : 'MISSED';
    }
    lines.push({ label, value, verdict });
  }
  for (const t of rssTargets) {
    if (!groups.some((g) => g.serverNames.includes(t.server))) continue;
    const kb = peakRssKb(t.server);
    const verdict = kb === undefined ? 'MISSED (not measured)' : kb / 1024 <= t.maxMb ? 'met' : 'MISSED';
    lines.push({
      label: `${t.server} peak RSS <= ${t.maxMb} MB`,
      value: kb === undefined ? '' : `${fmtMb(kb)} MB`,
      verdict,
    });
  }
  const width = Math.max(40, ...lines.map((l) => l.label.length + 1));
  out.push('', 'Targets (ratios to peers in this run):');
  for (const { label, value, verdict } of lines) {
    out.push(`  ${label.padEnd(width)} ${value.padStart(8)}  ${verdict}`);
  }
  const verdicts = lines.map((l) => l.verdict);
  const missed = verdicts.filter((v) => v.startsWith('MISSED')).length;
  const met = verdicts.filter((v) => v === 'met').length;
  out.push('', missed ? `${missed} target(s) MISSED, ${met} met.` : `All checked targets met (${met}).`);
  return out.join('\n');
}
