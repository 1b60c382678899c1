// Turns measurements into the printed report: a markdown table of req/s (median of rounds, with spread),
// gatehouse-vs-peer ratios, peak RSS, and the targets with met / MISSED.

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
      return c.state === 'ok' && c.rps.length ? median(c.rps) : undefined;
    },
  };
}

/** The first line of a (possibly multi-line) error plus the first line that names an error, if different. */
export function brief(detail = '', maxLength = 240) {
  const lines = String(detail)
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const first = lines[0] ?? '';
  const cause = lines.slice(1).find((l) => /error|emerg|alert|fatal|EADDR|ENOENT|EACCES/i.test(l));
  const text = cause && cause !== first ? `${first}: ${cause}` : first;
  return text.length > maxLength ? `${text.slice(0, maxLength - 3)}...` : text;
}

const SERVER_LEVEL = new Set(['failed to start', 'unavailable', 'crashed']);

/**
 * @param {object} run
 * @param {string[]} run.serverNames   columns, in order
 * @param {string[]} run.scenarioNames rows, in order
 * @param {(server: string, scenario: string) => { state: string, detail?: string, rps: number[],
 *   errors: string[] }} run.cell     state 'ok' when the server was checked and timed
 * @param {(server: string) => number | undefined} run.peakRssKb
 * @param {string} run.subject         the server the ratios and targets are about
 * @param {{ scenario: string, peer: string, min: number }[]} run.targets
 * @param {number} run.rssTargetMb
 * @returns {string} markdown
 */
export function renderReport({ serverNames, scenarioNames, cell, peakRssKb, subject, targets, rssTargetMb }) {
  const { median: med } = summarize({ cell });
  const notes = [];
  const note = (text) => {
    let i = notes.indexOf(text);
    if (i < 0) i = notes.push(text) - 1;
    return `[${i + 1}]`;
  };

  const out = [];
  const rows = scenarioNames.map((scenario) => [
    scenario,
    ...serverNames.map((server) => {
      const c = cell(server, scenario);
      if (SERVER_LEVEL.has(c.state)) return `${c.state} ${note(`${server}: ${c.state}: ${brief(c.detail)}`)}`;
      if (c.state !== 'ok') return `${c.state} ${note(`${server} / ${scenario}: ${brief(c.detail)}`)}`;
      if (!c.rps.length) return `no result ${note(`${server} / ${scenario}: ${brief(c.errors.join('\n'))}`)}`;
      const m = median(c.rps);
      const spread =
        c.rps.length > 1 ? ` ±${Math.round(((Math.max(...c.rps) - Math.min(...c.rps)) / 2 / m) * 100)}%` : '';
      const flagged = c.errors?.length
        ? ` (!) ${note(`${server} / ${scenario}: ${c.errors.join('; ')}`)}`
        : '';
      return `${fmtRps(m)}${spread}${flagged}`;
    }),
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

  if (notes.length) {
    out.push('');
    notes.forEach((text, i) => {
      out.push(`[${i + 1}] ${text.replace(/\s*\n\s*/g, ' | ')}`);
    });
  }

  // Targets
  const verdicts = [];
  out.push('', `Targets (${subject}, ratios to peers in this run):`);
  for (const t of targets) {
    const label = `${t.scenario.padEnd(5)} ${subject} >= ${t.min.toFixed(2)}x ${t.peer}`;
    if (!scenarioNames.includes(t.scenario)) continue;
    const a = serverNames.includes(subject) ? med(subject, t.scenario) : undefined;
    const b = serverNames.includes(t.peer) ? med(t.peer, t.scenario) : undefined;
    let verdict;
    let value = '';
    if (!serverNames.includes(t.peer)) verdict = 'not checked (peer not selected)';
    else if (a === undefined) verdict = `MISSED (no ${subject} result)`;
    else if (b === undefined) verdict = `not checked (no ${t.peer} result)`;
    else {
      const r = a / b;
      value = fmtRatio(r);
      verdict = r >= t.min ? 'met' : 'MISSED';
    }
    verdicts.push(verdict);
    out.push(`  ${label.padEnd(40)} ${value.padStart(7)}  ${verdict}`);
  }
  if (serverNames.includes(subject)) {
    const kb = peakRssKb(subject);
    const verdict = kb === undefined ? 'MISSED (not measured)' : kb / 1024 <= rssTargetMb ? 'met' : 'MISSED';
    verdicts.push(verdict);
    const value = kb === undefined ? '' : `${fmtMb(kb)} MB`;
    out.push(`  ${`peak RSS <= ${rssTargetMb} MB`.padEnd(40)} ${value.padStart(7)}  ${verdict}`);
  }
  const missed = verdicts.filter((v) => v.startsWith('MISSED')).length;
  const met = verdicts.filter((v) => v === 'met').length;
  out.push('', missed ? `${missed} target(s) MISSED, ${met} met.` : `All checked targets met (${met}).`);
  return out.join('\n');
}
