// Turns measurements into the printed report: per scenario group markdown tables of req/s and of requests
// per server CPU-second (medians of rounds, with spread), each with the group subject's ratios to its peers,
// plus peak RSS and the servers' CPU utilisation; a flood group (ws-flood) as each server's latency and
// req/s quiet vs flooded with the flooded / quiet ratios; with BENCH_BASELINE the this build / baseline
// ratios of every pair; then the targets, judged on both metrics, with met / MISSED and the basis that
// decided.

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return undefined;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * A server whose CPU time over a timed run is at least this share of the wall time was CPU-bound (the
 * bottleneck). A target missed on req/s may be met on requests per server CPU-second only when its subject
 * was CPU-bound in every round.
 */
export const CPU_BOUND = 0.95;

const int = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const fmtRps = (n) => int.format(n);
const fmtRatio = (r) => `${r.toFixed(2)}x`;
const fmtMb = (kb) => (kb === undefined ? 'n/a' : (kb / 1024).toFixed(1));
const fmtShare = (x) => x.toFixed(2);

function table(header, rows, alignRight = true) {
  const line = (cells) => `| ${cells.join(' | ')} |`;
  const sep = header.map((_, i) => (i === 0 || !alignRight ? '---' : '---:'));
  return [line(header), line(sep), ...rows.map(line)].join('\n');
}

/**
 * Medians per (server, scenario) from a `cell(server, scenario)` accessor; undefined when not measured.
 * `median`: req/s; `perCpu`: requests per server CPU-second; `util`: server CPU-s / wall-s; `shares`: how
 * the pinned server CPU's time split ({ server, idle, rest, steal }, each key's median).
 */
export function summarize({ cell }) {
  const of = (key) => (server, scenario) => {
    const c = cell(server, scenario);
    return c?.state === 'ok' && c[key]?.length ? median(c[key]) : undefined;
  };
  const shares = (server, scenario) => {
    const c = cell(server, scenario);
    if (c?.state !== 'ok' || !c.shares?.length) return undefined;
    const keys = Object.keys(c.shares[0]);
    return Object.fromEntries(keys.map((k) => [k, median(c.shares.map((x) => x[k]))]));
  };
  return { median: of('rps'), perCpu: of('perCpu'), util: of('util'), shares };
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
 * Judges each ratio target on req/s and on requests per server CPU-second. A target is met when it is met on
 * req/s, or, when its subject ran at >= CPU_BOUND CPU utilisation in every timed round, on per CPU-second;
 * `basis` says which decided. Targets whose subject and peer both did not run the scenario are left out.
 * @returns {{ scenario: string, subject: string, peer: string, min: number, verdict: string,
 *   state: 'met'|'MISSED'|'not checked', basis?: 'req/s'|'per CPU-s', why?: string, rpsRatio?: number,
 *   cpuRatio?: number, subjectCpuBound?: boolean, subjectUtil?: number[] }[]}
 */
export function evaluateTargets({ cell, targets }) {
  const s = summarize({ cell });
  const runs = (server, scenario) => cell(server, scenario) !== undefined;
  const out = [];
  for (const t of targets) {
    const { scenario, subject, peer, min } = t;
    if (!runs(subject, scenario) && !runs(peer, scenario)) continue;
    const base = { scenario, subject, peer, min };
    const a = s.median(subject, scenario);
    const b = s.median(peer, scenario);
    const notChecked = (why) => out.push({ ...base, state: 'not checked', verdict: `not checked (${why})` });
    if (!runs(subject, scenario)) notChecked(`${subject} not selected`);
    else if (!runs(peer, scenario)) notChecked(`${peer} not selected`);
    else if (a === undefined)
      out.push({ ...base, state: 'MISSED', verdict: `MISSED (no ${subject} result)` });
    else if (b === undefined) notChecked(`no ${peer} result`);
    else {
      const rpsRatio = a / b;
      const pa = s.perCpu(subject, scenario);
      const pb = s.perCpu(peer, scenario);
      const cpuRatio = pa !== undefined && pb ? pa / pb : undefined;
      const c = cell(subject, scenario);
      // Every timed round must have a CPU reading, and each must show the subject CPU-bound.
      const subjectUtil = c.util;
      const subjectCpuBound =
        subjectUtil.length > 0 &&
        subjectUtil.length === c.rps.length &&
        subjectUtil.every((u) => u >= CPU_BOUND);
      const lo = fmtShare(Math.min(...subjectUtil));
      const hi = fmtShare(Math.max(...subjectUtil));
      const utilText = subjectUtil.length
        ? `${subject} CPU util ${lo === hi ? lo : `${lo}-${hi}`} over ${subjectUtil.length}/${c.rps.length} round(s)`
        : `no ${subject} CPU readings`;
      let state;
      let basis = 'req/s';
      let why;
      if (rpsRatio >= min) state = 'met';
      else if (cpuRatio === undefined) {
        state = 'MISSED';
        why = 'no per CPU-s ratio';
      } else if (cpuRatio < min) {
        state = 'MISSED';
        why = 'missed on both';
      } else if (subjectCpuBound) {
        state = 'met';
        basis = 'per CPU-s';
        why = `${utilText}, all >= ${CPU_BOUND}`;
      } else {
        state = 'MISSED';
        why = `per CPU-s not admissible: ${utilText}, not all >= ${CPU_BOUND}`;
      }
      if (basis === 'per CPU-s') {
        const peerUtil = s.util(peer, scenario);
        if (peerUtil !== undefined && peerUtil < CPU_BOUND) {
          why += `; ${peer} CPU util ${fmtShare(peerUtil)}, not CPU-bound itself`;
        }
      }
      out.push({
        ...base,
        state,
        basis,
        why,
        rpsRatio,
        cpuRatio,
        subjectCpuBound,
        subjectUtil,
        verdict: `${state} (${basis}${why ? `; ${why}` : ''})`,
      });
    }
  }
  return out;
}

/**
 * @param {object} run
 * @param {{ name: string, title: string, subject: string, serverNames: string[], scenarioNames: string[] }[]}
 *   run.groups   one set of tables each: rows are its scenarios, columns its servers (in order), ratios are
 *   subject / peer; name 'proxy' marks the servers that share their CPU with the upstream
 * @param {(server: string, scenario: string) => { state: string, detail?: string, rps: number[],
 *   perCpu: number[], util: number[], shares: object[], errors: string[] } | undefined} run.cell   state 'ok'
 *   when the server was checked and timed; undefined when the server does not run that scenario
 * @param {(server: string) => number | undefined} run.peakRssKb
 * @param {{ scenario: string, subject: string, peer: string, min: number }[]} run.targets
 * @param {{ server: string, maxMb: number }[]} run.rssTargets
 * @param {{ subject: string, baseline: string }[]} [run.baselinePairs]   servers and their BENCH_BASELINE
 *   twins, reported as subject / baseline ratios on every scenario both ran
 * @returns {string} markdown
 */
export function renderReport({ groups, cell, peakRssKb, targets, rssTargets, baselinePairs = [] }) {
  const s = summarize({ cell });
  const notes = [];
  const note = (text) => {
    let i = notes.indexOf(text);
    if (i < 0) i = notes.push(text) - 1;
    return `[${i + 1}]`;
  };
  /** The cell text for a non-measured state, or undefined when `key` has values to show. */
  const problemCell = (server, scenario, key) => {
    const c = cell(server, scenario);
    if (!c) return '-';
    if (SERVER_LEVEL.has(c.state)) return `${c.state} ${note(`${server}: ${c.state}: ${brief(c.detail)}`)}`;
    if (c.state !== 'ok') return `${c.state} ${note(`${server} / ${scenario}: ${brief(c.detail)}`)}`;
    if (!c.rps.length) return `no result ${note(`${server} / ${scenario}: ${brief(c.errors.join('\n'))}`)}`;
    if (!c[key].length) return 'n/a';
    return undefined;
  };
  const valueCell = (key) => (server, scenario) => {
    const problem = problemCell(server, scenario, key);
    if (problem) return problem;
    const c = cell(server, scenario);
    const values = c[key];
    const m = median(values);
    const spread =
      values.length > 1
        ? ` ±${Math.round(((Math.max(...values) - Math.min(...values)) / 2 / m) * 100)}%`
        : '';
    const flagged =
      key === 'rps' && c.errors?.length
        ? ` (!) ${note(`${server} / ${scenario}: ${c.errors.join('; ')}`)}`
        : '';
    return `${fmtRps(m)}${spread}${flagged}`;
  };
  /** Utilisation cell; below CPU_BOUND with a note on where the rest of the server's CPU went. */
  const utilCell = (shared) => (server, scenario) => {
    const problem = problemCell(server, scenario, 'util');
    if (problem) return problem;
    const util = s.util(server, scenario);
    if (util >= CPU_BOUND) return fmtShare(util);
    const sh = s.shares(server, scenario);
    let why;
    if (!sh) {
      why =
        `so either it was not the bottleneck (idle part of the time: wrk, the upstream or I/O set the pace) or ` +
        `other work took its CPU (unpinned, so this run cannot tell which); either way its req/s did not ` +
        `measure the server alone`;
    } else {
      const steal = sh.steal >= 0.01 ? `, of it hypervisor steal ${fmtShare(sh.steal)}` : '';
      const split =
        `its CPU was the server's ${fmtShare(sh.server)}, idle ${fmtShare(sh.idle)}, other processes and ` +
        `interrupts ${fmtShare(sh.rest)}${shared ? ` (the shared upstream among them)` : ''}${steal}`;
      why =
        sh.idle >= sh.rest
          ? `${split}: mostly idle, so the server was not (all the time) the bottleneck: wrk, the upstream or ` +
            `I/O set the pace, and its req/s measured that limit more than the server`
          : `${split}: mostly taken by other work, so the server was CPU-bound but short of CPU: its req/s is ` +
            `low by about that share, its per CPU-s is not`;
    }
    const text = `${server} / ${scenario}: server CPU utilisation ${fmtShare(util)} < ${CPU_BOUND}; ${why}.`;
    return `${fmtShare(util)} ${note(text)}`;
  };
  const ratioTable = (subject, peers, scenarioNames, stat, title) =>
    table(
      [title, ...peers],
      scenarioNames.map((scenario) => [
        scenario,
        ...peers.map((peer) => {
          const a = stat(subject, scenario);
          const b = stat(peer, scenario);
          return a !== undefined && b ? fmtRatio(a / b) : 'n/a';
        }),
      ]),
    );

  /** A flood group: per server, quiet and flooded latency and req/s, and flooded / quiet. */
  const floodTables = ({ flood, serverNames, scenarioNames }) => {
    const { quiet, flooded } = flood;
    const latency = (key) => (server, scenario) => {
      const problem = problemCell(server, scenario, 'latency');
      if (problem) return problem;
      return median(cell(server, scenario).latency.map((l) => l[key]))?.toFixed(2) ?? 'n/a';
    };
    const latencyOf = (server, scenario, key) => {
      const c = cell(server, scenario);
      return c?.state === 'ok' && c.latency.length ? median(c.latency.map((l) => l[key])) : undefined;
    };
    const rows = [];
    for (const scenario of [quiet, flooded].filter((sc) => scenarioNames.includes(sc))) {
      rows.push([`${scenario} req/s`, ...serverNames.map((sv) => valueCell('rps')(sv, scenario))]);
      rows.push([`${scenario} p50 (ms)`, ...serverNames.map((sv) => latency('p50')(sv, scenario))]);
      rows.push([`${scenario} p99 (ms)`, ...serverNames.map((sv) => latency('p99')(sv, scenario))]);
    }
    if (scenarioNames.includes(quiet) && scenarioNames.includes(flooded)) {
      const ratio = (a, b) => (a !== undefined && b ? fmtRatio(a / b) : 'n/a');
      rows.push([
        'flooded / quiet: req/s',
        ...serverNames.map((sv) => ratio(s.median(sv, flooded), s.median(sv, quiet))),
      ]);
      for (const key of ['p50', 'p99']) {
        rows.push([
          `flooded / quiet: ${key}`,
          ...serverNames.map((sv) => ratio(latencyOf(sv, flooded, key), latencyOf(sv, quiet, key))),
        ]);
      }
    }
    if (scenarioNames.includes(flooded)) {
      const floodMedian = (sv, fn) => {
        const c = cell(sv, flooded);
        return c?.state === 'ok' && c.flood.length ? median(c.flood.map(fn)) : undefined;
      };
      const perSec = (fn) => (sv) => {
        const v = floodMedian(sv, (f) => fn(f) / f.seconds);
        return v === undefined ? 'n/a' : fmtRps(v);
      };
      const closed = (f) => Object.values(f.closes).reduce((a, b) => a + b, 0);
      rows.push(['flood: messages sent/s', ...serverNames.map(perSec((f) => f.sent))]);
      rows.push(['flood: echoes received/s', ...serverNames.map(perSec((f) => f.echoes))]);
      rows.push([
        'flood: connections closed by the server/s (close codes)',
        ...serverNames.map((sv) => {
          const c = cell(sv, flooded);
          if (c?.state !== 'ok' || !c.flood.length) return 'n/a';
          const codes = {};
          for (const f of c.flood)
            for (const [k, n] of Object.entries(f.closes)) codes[k] = (codes[k] ?? 0) + n;
          const list = Object.keys(codes).length
            ? ` (${Object.entries(codes)
                .map(([k, n]) => `${k}: ${n}`)
                .join(', ')})`
            : '';
          return `${fmtRps(floodMedian(sv, (f) => closed(f) / f.seconds))}${list}`;
        }),
      ]);
    }
    rows.push(['peak RSS (MB)', ...serverNames.map((server) => fmtMb(peakRssKb(server)))]);
    const util = scenarioNames.map((scenario) => [
      `${scenario}`,
      ...serverNames.map((sv) => utilCell(false)(sv, scenario)),
    ]);
    return [
      table(['median of rounds', ...serverNames], rows),
      '',
      table(['server CPU utilisation (median)', ...serverNames], util),
    ];
  };

  const out = [];
  for (const { name, title, subject, serverNames, scenarioNames, flood } of groups) {
    if (!serverNames.length || !scenarioNames.length) continue;
    if (out.length) out.push('');
    out.push(`### ${title}`, '');
    if (flood) {
      out.push(...floodTables({ flood, serverNames, scenarioNames }));
      continue;
    }
    const grid = (fn) =>
      scenarioNames.map((scenario) => [scenario, ...serverNames.map((sv) => fn(sv, scenario))]);
    const peers = serverNames.filter((sv) => sv !== subject);
    const withRatios = serverNames.includes(subject) && peers.length > 0;

    const rpsRows = grid(valueCell('rps'));
    rpsRows.push(['peak RSS (MB)', ...serverNames.map((server) => fmtMb(peakRssKb(server)))]);
    out.push(table(['req/s (median)', ...serverNames], rpsRows));
    if (withRatios)
      out.push('', ratioTable(subject, peers, scenarioNames, s.median, `${subject} / peer, req/s`));

    out.push(
      '',
      table(['requests per server CPU-second (median)', ...serverNames], grid(valueCell('perCpu'))),
    );
    if (withRatios) {
      out.push('', ratioTable(subject, peers, scenarioNames, s.perCpu, `${subject} / peer, per CPU-s`));
    }
    out.push(
      '',
      table(['server CPU utilisation (median)', ...serverNames], grid(utilCell(name === 'proxy'))),
    );
  }

  /** Median over rounds of subject / baseline per CPU-s within the same round, with the min-max range. */
  const pairedRatio = (subject, baseline, scenario) => {
    const a = cell(subject, scenario);
    const b = cell(baseline, scenario);
    if (a?.state !== 'ok' || b?.state !== 'ok') return 'n/a';
    const ratios = a.runs
      .map((ra) => [ra, b.runs.find((rb) => rb.round === ra.round)])
      .filter(([ra, rb]) => ra.requestsPerCpuSec && rb?.requestsPerCpuSec)
      .map(([ra, rb]) => ra.requestsPerCpuSec / rb.requestsPerCpuSec);
    if (!ratios.length) return 'n/a';
    const range =
      ratios.length > 1 ? ` (${fmtRatio(Math.min(...ratios))}-${fmtRatio(Math.max(...ratios))})` : '';
    return `${fmtRatio(median(ratios))}${range}`;
  };
  // This build / the BENCH_BASELINE build, on every scenario both ran.
  const regression = baselinePairs.flatMap(({ subject, baseline }) =>
    groups
      .flatMap((g) => g.scenarioNames)
      .filter((scenario) => cell(subject, scenario) && cell(baseline, scenario))
      .map((scenario) => {
        const r = (stat) => {
          const a = stat(subject, scenario);
          const b = stat(baseline, scenario);
          return a !== undefined && b ? fmtRatio(a / b) : 'n/a';
        };
        return [
          `${subject} / ${baseline}`,
          scenario,
          r(s.median),
          r(s.perCpu),
          pairedRatio(subject, baseline, scenario),
        ];
      }),
  );
  if (regression.length) {
    out.push(
      '',
      '### No regression: this build / the baseline build (BENCH_BASELINE), same run',
      '',
      table(['pair', 'scenario', 'req/s', 'per CPU-s', 'per CPU-s, paired by round'], regression),
      '',
      'Paired by round: the median over rounds of the two per CPU-s figures of the same round (measured one ' +
        'right after the other), which cancels most of the drift between rounds that the ratio of medians ' +
        'keeps on a busy machine.',
    );
  }

  if (notes.length) {
    out.push('');
    notes.forEach((text, i) => {
      out.push(`[${i + 1}] ${text.replace(/\s*\n\s*/g, ' | ')}`);
    });
  }

  // Targets: only those whose subject and peer both run the scenario in this run.
  const lines = evaluateTargets({ cell, targets }).map((t) => {
    const label = `${t.scenario} ${t.subject} >= ${t.min.toFixed(2)}x ${t.peer}`;
    if (t.rpsRatio === undefined) return { label, verdict: t.verdict, state: t.state };
    const on = (r) => (r === undefined ? 'n/a' : `${fmtRatio(r)} ${r >= t.min ? 'met' : 'MISSED'}`);
    const metrics = `req/s ${on(t.rpsRatio).padEnd(12)}  per CPU-s ${on(t.cpuRatio).padEnd(12)}`;
    return { label, metrics, verdict: `=> ${t.verdict}`, state: t.state, basis: t.basis };
  });
  for (const t of rssTargets) {
    if (!groups.some((g) => g.serverNames.includes(t.server))) continue;
    const kb = peakRssKb(t.server);
    const state = kb === undefined ? 'MISSED' : kb / 1024 <= t.maxMb ? 'met' : 'MISSED';
    lines.push({
      label: `${t.server} peak RSS <= ${t.maxMb} MB`,
      metrics: kb === undefined ? undefined : `${fmtMb(kb)} MB`,
      verdict: kb === undefined ? 'MISSED (not measured)' : state,
      state,
    });
  }
  const width = Math.max(40, ...lines.map((l) => l.label.length + 1));
  const metricsWidth = Math.max(0, ...lines.map((l) => l.metrics?.length ?? 0));
  out.push(
    '',
    `Targets (ratios to peers in this run; met on req/s, or on per CPU-s when the subject ran at >= ${CPU_BOUND} ` +
      `CPU utilisation in every round):`,
  );
  for (const { label, metrics = '', verdict } of lines) {
    out.push(`  ${label.padEnd(width)} ${metrics.padEnd(metricsWidth)}  ${verdict}`.trimEnd());
  }
  const missed = lines.filter((l) => l.state === 'MISSED').length;
  const met = lines.filter((l) => l.state === 'met').length;
  const onCpu = lines.filter((l) => l.state === 'met' && l.basis === 'per CPU-s').length;
  const basis = onCpu ? `; ${onCpu} of them on per CPU-s only, missed on req/s` : '';
  out.push(
    '',
    missed ? `${missed} target(s) MISSED, ${met} met${basis}.` : `All checked targets met (${met}${basis}).`,
  );
  return out.join('\n');
}
