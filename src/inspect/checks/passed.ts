// What went right, for `gatehouse check --verbose` and the JSON report's `passed`: each probe whose answer
// was what the RFC asks for, stated as a fact with its evidence. Pure, over the Recording; the findings
// (what went wrong) stay with the checks.
import { deltaSeconds, parseCacheControl } from '../../http/cache-control.js';
import { isHashedName } from '../../http/hashed-name.js';
import { evidenceOf, field } from '../exchange.js';
import type { Area, Exchange, Pass, ProbeName, ProbeRun, Recording } from '../types.js';
import { HASHED_MIN_LIFETIME_SEC, mediaTypeOf, quoteValue } from './caching.js';

function pass(area: Area, id: string, message: string, evidence: string): Pass {
  return { id: `${area}.${id}`, area, message, evidence };
}

function pathOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.pathname}${u.search}`;
  } catch {
    return '';
  }
}

const statusOf = (x: Exchange | undefined): number | undefined => x?.response?.status;

/** A probe that got `status`, as one pass line: `<request field> -> <status>`. */
function probeAnswered(
  rec: Recording,
  probe: ProbeName,
  status: number,
  area: Area,
  id: string,
  message: string,
  sent: string,
): Pass[] {
  const x = rec.probes[probe];
  if (statusOf(x) !== status) return [];
  const line = sent === '' ? '' : `${evidenceOf(x!.request.headers, sent)} -> `;
  return [pass(area, id, message, `${line}${status}`)];
}

function validators(rec: Recording): Pass[] {
  const primary = rec.probes.primary?.response;
  const repeat = rec.probes.repeat?.response;
  const etag = primary === undefined ? undefined : field(primary.headers, 'etag');
  const out: Pass[] = [
    // RFC 9110 §13.1.2, §13.1.3, §13.1.5: the conditional requests.
    ...probeAnswered(
      rec,
      'inm-match',
      304,
      'validators',
      'inm-304',
      'If-None-Match with the ETag: 304 Not Modified',
      'if-none-match',
    ),
    ...probeAnswered(
      rec,
      'inm-wrong',
      200,
      'validators',
      'inm-other-200',
      'If-None-Match with another ETag: the full 200',
      'if-none-match',
    ),
    ...probeAnswered(
      rec,
      'ims',
      304,
      'validators',
      'ims-304',
      'If-Modified-Since with Last-Modified: 304 Not Modified',
      'if-modified-since',
    ),
    // RFC 9110 §14.2, §13.1.5: ranges and If-Range.
    ...probeAnswered(
      rec,
      'range',
      206,
      'validators',
      'range-206',
      'Range: bytes=0-9 -> 206 Partial Content',
      'range',
    ),
    ...probeAnswered(
      rec,
      'if-range-match',
      206,
      'validators',
      'if-range-206',
      'If-Range with the ETag: 206, the part',
      'if-range',
    ),
    ...probeAnswered(
      rec,
      'if-range-mismatch',
      200,
      'validators',
      'if-range-stale-200',
      'If-Range with a stale ETag: the whole 200',
      'if-range',
    ),
  ];
  if (etag !== undefined && repeat !== undefined && field(repeat.headers, 'etag') === etag) {
    out.unshift(
      pass('validators', 'etag-stable', 'the ETag is the same on a repeat request', `etag: ${etag}`),
    );
  }
  return out;
}

function coding(rec: Recording): Pass[] {
  const out: Pass[] = [];
  for (const [probe, coding] of [
    ['coding-br', 'br'],
    ['coding-gzip', 'gzip'],
  ] as const) {
    const r = rec.probes[probe]?.response;
    if (r === undefined || r.status !== 200) continue;
    // RFC 9110 §8.4: the coding asked for, and Vary: Accept-Encoding for caches (§12.5.5).
    if (field(r.headers, 'content-encoding')?.toLowerCase() !== coding) continue;
    const vary = field(r.headers, 'vary')?.toLowerCase() ?? '';
    const varies = vary === '*' || /(^|,)\s*accept-encoding\s*(,|$)/.test(vary);
    const message = `Accept-Encoding: ${coding} -> ${coding}-coded${varies ? ', with Vary: Accept-Encoding' : ''}`;
    out.push(
      pass(
        'coding',
        coding,
        message,
        `${evidenceOf(r.headers, 'content-encoding')}; ${evidenceOf(r.headers, 'vary')}`,
      ),
    );
  }
  return out;
}

function assets(rec: Recording): Pass[] {
  const out: Pass[] = [];
  for (const a of rec.assets ?? []) {
    const r = a.exchange.response;
    if (r === undefined) continue;
    const path = quoteValue(pathOf(a.exchange.request.url));
    const type = mediaTypeOf(r.headers);
    if (a.kind === 'made-up') {
      if (r.status === 404) {
        const msg = `a made-up hashed asset URL (${path}) answered 404, not the page`;
        out.push(pass('status', 'missing-asset-404', msg, `GET ${path} -> 404`));
      }
      continue;
    }
    if (r.status !== 200 || type === 'text/html') continue;
    out.push(
      pass(
        'status',
        'asset-200',
        `the page's ${a.kind} ${path}: 200 ${type}`,
        `GET ${path} -> 200; content-type: ${type}`,
      ),
    );
    const cc = field(r.headers, 'cache-control') ?? '';
    const maxAge = deltaSeconds(parseCacheControl(cc), 'max-age');
    if (isHashedName(new URL(a.exchange.request.url).pathname) && (maxAge ?? 0) >= HASHED_MIN_LIFETIME_SEC) {
      const msg = `the page's ${a.kind} ${path} has a content hash and is fresh for a year`;
      out.push(pass('caching', 'hashed-asset-year', msg, `GET ${path} -> 200; cache-control: ${cc}`));
    }
  }
  return out;
}

function protocol(rec: Recording): Pass[] {
  const c = rec.tls?.certificate;
  if (rec.tls === undefined || c === undefined) return [];
  const ok = c.checks.trusted && c.checks.timeValid && c.checks.hostnameMatches;
  const out = [
    pass('protocol', 'tls', `${rec.tls.protocol}, ${rec.tls.cipher}`, `alpn: ${rec.tls.alpn || 'none'}`),
  ];
  if (ok) {
    const msg = `the certificate is trusted, in date (${c.daysLeft} days left) and names the host`;
    out.push(pass('protocol', 'certificate', msg, `issuer: ${quoteValue(c.issuer)}`));
  }
  return out;
}

/** The passes of a recording, in the report's area order (the caller sorts). */
export function passedChecks(rec: Recording): Pass[] {
  const primary = rec.probes.primary?.response;
  const out: Pass[] = [];
  if (primary !== undefined && primary.status >= 200 && primary.status < 300) {
    out.push(pass('status', 'ok', `the URL answers ${primary.status}`, `status ${primary.status}`));
  }
  return [...out, ...assets(rec), ...protocol(rec), ...validators(rec), ...coding(rec)];
}

/** Every request the check sent, in order: the redirect chain, the probes, the asset probes. */
export function probeRuns(rec: Recording): ProbeRun[] {
  const run = (name: string, x: Exchange): ProbeRun => ({
    name,
    method: x.request.method,
    url: x.request.url,
    status: x.response?.status ?? null,
    ...(x.error === undefined ? {} : { error: x.error }),
  });
  return [
    ...rec.redirects.map((x, i) => run(`hop-${i + 1}`, x)),
    ...(Object.entries(rec.probes) as [ProbeName, Exchange][]).map(([name, x]) => run(name, x)),
    ...(rec.assets ?? []).map((a) => run(`asset-${a.kind}`, a.exchange)),
  ];
}
