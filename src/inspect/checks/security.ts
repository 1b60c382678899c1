// Security headers, on the primary response: nosniff, HSTS on HTTPS (and its
// max-age), Referrer-Policy and frame protection on HTML, and version numbers in Server/X-Powered-By.
import { splitList } from '../../http/lists.js';
import { evidenceOf, field, fieldLines } from '../exchange.js';
import type { Check, FieldLine, Finding, Severity } from '../types.js';
import { mediaTypeOf, quoteValue } from './caching.js';

/** An HSTS max-age below this (180 days) is short: hstspreload.org and the usual guides ask for more. */
export const HSTS_MIN_MAX_AGE_SEC = 15_552_000;

const REFERRER_POLICIES = new Set([
  'no-referrer',
  'no-referrer-when-downgrade',
  'same-origin',
  'origin',
  'strict-origin',
  'origin-when-cross-origin',
  'strict-origin-when-cross-origin',
  'unsafe-url',
]);

function make(id: string, severity: Severity, message: string, evidence: string, rfc: string): Finding {
  return { id: `security.${id}`, area: 'security', severity, message, evidence, rfc };
}

export type Hsts = { ok: true; maxAgeSec: number; includeSubDomains: boolean } | { ok: false; why: string };

/**
 * RFC 6797 §6.1: `directive *( ";" directive )`, names case-insensitive, values token or
 * quoted-string; every directive at most once and max-age required, else the UA ignores the field.
 */
export function parseHsts(value: string): Hsts {
  const seen = new Set<string>();
  let maxAgeSec: number | null = null;
  for (const raw of value.split(';')) {
    const d = raw.trim();
    if (d === '') continue;
    const eq = d.indexOf('=');
    const name = (eq === -1 ? d : d.slice(0, eq)).trim().toLowerCase();
    if (seen.has(name)) return { ok: false, why: `${name} appears twice` };
    seen.add(name);
    if (name !== 'max-age') continue;
    const arg =
      eq === -1
        ? ''
        : d
            .slice(eq + 1)
            .trim()
            .replace(/^"(.*)"$/, '$1');
    if (!/^\d+$/.test(arg)) return { ok: false, why: 'max-age is not a number of seconds' }; // §6.1.1
    maxAgeSec = Number(arg);
  }
  if (maxAgeSec === null) return { ok: false, why: 'max-age is missing' };
  return { ok: true, maxAgeSec, includeSubDomains: seen.has('includesubdomains') };
}

function isHttps(url: string): boolean {
  return url.toLowerCase().startsWith('https:');
}

export const checkSecurity: Check = (rec) => {
  const res = rec.probes.primary?.response;
  if (res === undefined) return [];
  const h = res.headers;
  const mediaType = mediaTypeOf(h);
  const html = mediaType === 'text/html' || mediaType === 'application/xhtml+xml';
  const out = [...nosniff(h), ...hsts(h, isHttps(rec.finalUrl))];
  // The primary body may be compressed; the identity probe's is readable.
  const sample = `${rec.probes['coding-identity']?.response?.bodySample ?? ''}\n${res.bodySample}`;
  if (html) out.push(...referrerPolicy(h, sample), ...frameProtection(h));
  out.push(...versionLeaks(h));
  return out;
};

/** Fetch: only the first member of X-Content-Type-Options counts, and it must be nosniff. */
function nosniff(h: readonly FieldLine[]): Finding[] {
  const v = field(h, 'x-content-type-options');
  if (v !== undefined && splitList(v)[0]?.toLowerCase() === 'nosniff') return [];
  const msg =
    v === undefined
      ? 'no X-Content-Type-Options: nosniff, so browsers may guess a script or style from the bytes; add it'
      : 'X-Content-Type-Options is not nosniff, so browsers ignore it; send X-Content-Type-Options: nosniff';
  return [
    make(
      'nosniff-missing',
      'warning',
      msg,
      evidenceOf(h, 'x-content-type-options'),
      'Fetch: X-Content-Type-Options',
    ),
  ];
}

function hsts(h: readonly FieldLine[], https: boolean): Finding[] {
  const first = fieldLines(h, 'strict-transport-security')[0]; // RFC 6797 §8.1: the first one counts
  const ev = evidenceOf(h, 'strict-transport-security');
  if (!https) {
    if (first === undefined) return [];
    const msg =
      'Strict-Transport-Security over plain HTTP is ignored by browsers; send it on the HTTPS answer';
    return [make('hsts-on-http', 'info', msg, ev, 'RFC 6797 §8.1')];
  }
  if (first === undefined) {
    const msg =
      'no Strict-Transport-Security on HTTPS: a first visit by http:// can be intercepted;' +
      ' add Strict-Transport-Security: max-age=31536000; includeSubDomains';
    return [make('hsts-missing', 'warning', msg, ev, 'RFC 6797 §7.1')];
  }
  const parsed = parseHsts(first);
  if (!parsed.ok) {
    const msg = `Strict-Transport-Security is invalid (${quoteValue(parsed.why, 80)}), so browsers ignore it; send max-age=31536000`;
    return [make('hsts-invalid', 'warning', msg, ev, 'RFC 6797 §6.1')];
  }
  if (parsed.maxAgeSec >= HSTS_MIN_MAX_AGE_SEC) return [];
  const msg =
    parsed.maxAgeSec === 0
      ? 'Strict-Transport-Security max-age=0 tells browsers to forget HSTS for this host; use max-age=31536000 unless that is the aim'
      : `Strict-Transport-Security max-age=${parsed.maxAgeSec} is under 180 days, so HSTS lapses between visits; use max-age=31536000`;
  return [make('hsts-short', 'warning', msg, ev, 'RFC 6797 §6.1.1')];
}

/** Referrer Policy §4.1 (the header) or §4.2 (`<meta name="referrer">` in the page). */
function referrerPolicy(h: readonly FieldLine[], bodySample: string): Finding[] {
  const v = field(h, 'referrer-policy');
  // Browsers take the last token they know and skip the others.
  if (v !== undefined && splitList(v).some((t) => REFERRER_POLICIES.has(t.toLowerCase()))) return [];
  if (/<meta\s[^>]*name\s*=\s*["']?referrer\b/i.test(bodySample)) return [];
  const msg =
    v === undefined
      ? 'HTML without Referrer-Policy: links leak this page URL to other sites under older browser defaults; add Referrer-Policy: strict-origin-when-cross-origin'
      : 'Referrer-Policy names no known policy, so browsers ignore it; use strict-origin-when-cross-origin';
  return [
    make('referrer-policy-missing', 'warning', msg, evidenceOf(h, 'referrer-policy'), 'Referrer Policy §4.1'),
  ];
}

/** RFC 7034 §2.1 (X-Frame-Options DENY / SAMEORIGIN) or CSP frame-ancestors (CSP3 §6.4.2). */
function frameProtection(h: readonly FieldLine[]): Finding[] {
  const xfo = fieldLines(h, 'x-frame-options')[0]?.trim().toLowerCase();
  if (xfo === 'deny' || xfo === 'sameorigin') return [];
  for (const line of fieldLines(h, 'content-security-policy')) {
    for (const policy of line.split(',')) {
      for (const directive of policy.split(';')) {
        if (directive.trim().toLowerCase().split(/\s+/)[0] === 'frame-ancestors') return [];
      }
    }
  }
  const msg =
    xfo === undefined
      ? 'HTML without X-Frame-Options or CSP frame-ancestors: any site can frame it (clickjacking); add X-Frame-Options: SAMEORIGIN'
      : 'X-Frame-Options is neither DENY nor SAMEORIGIN (ALLOW-FROM is obsolete), so browsers ignore it; use CSP frame-ancestors';
  const evidence = `${evidenceOf(h, 'x-frame-options')}; ${evidenceOf(h, 'content-security-policy')}`;
  return [make('frame-protection-missing', 'warning', msg, evidence, 'RFC 7034 §2.1')];
}

/** RFC 9110 §10.2.4: Server SHOULD NOT carry needlessly fine-grained detail. */
function versionLeaks(h: readonly FieldLine[]): Finding[] {
  const leaks = ['server', 'x-powered-by'].filter((n) => /\/\s*v?\d|\bv?\d+\.\d+/i.test(field(h, n) ?? ''));
  if (leaks.length === 0) return [];
  const msg =
    'the server names its software version, which tells attackers which known flaws to try; drop the version';
  return [
    make('version-leak', 'info', msg, leaks.map((n) => evidenceOf(h, n)).join('; '), 'RFC 9110 §10.2.4'),
  ];
}
