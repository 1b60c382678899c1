// Content coding, from the probes that offer identity, gzip and br (and the primary
// request, which offers all three): the saving, text left uncompressed, a coded response without
// `Vary: Accept-Encoding`, a coding the request did not offer, and one strong ETag on two codings.
import { parseEntityTag } from '../../http/etag.js';
import { listIncludesToken, splitList } from '../../http/lists.js';
import { evidenceOf, field } from '../exchange.js';
import type { Check, Exchange, Finding, ProbeName, RecordedResponse, Recording, Severity } from '../types.js';
import { mediaTypeOf, quoteValue, storableBy } from './caching.js';

/** Text larger than this that no offered coding compresses is a warning (Gatehouse compresses from 1 KiB). */
export const TEXT_MIN_COMPRESS_BYTES = 1024;

/** The probes compared here (the primary request offers every coding unless the user's --header says otherwise). */
const PROBES: readonly ProbeName[] = ['primary', 'coding-identity', 'coding-gzip', 'coding-br'];

/**
 * RFC 9110 §12.5.3: whether Accept-Encoding admits a coding. No field admits every coding; a listed
 * coding needs q > 0; `*` covers codings not listed; x-gzip is gzip (§8.4.1.3).
 */
export function acceptsCoding(acceptEncoding: string | undefined, coding: string): boolean {
  if (acceptEncoding === undefined) return true;
  const canon = (c: string) => (c === 'x-gzip' ? 'gzip' : c);
  const want = canon(coding);
  let starQ = -1;
  for (const member of splitList(acceptEncoding)) {
    const semi = member.indexOf(';');
    const name = canon((semi === -1 ? member : member.slice(0, semi)).trim().toLowerCase());
    const q = semi === -1 ? 1 : Number(/;\s*q=([0-9.]+)/i.exec(member)?.[1] ?? '1');
    if (name === want) return q > 0;
    if (name === '*' && starQ < 0) starQ = q;
  }
  if (starQ >= 0) return starQ > 0;
  return want === 'identity'; // identity is acceptable unless excluded
}

interface Variant {
  probe: ProbeName;
  x: Exchange;
  res: RecordedResponse;
  /** The Content-Encoding as received, lowercased; 'identity' when absent (RFC 9110 §8.4). */
  coding: string;
}

function make(id: string, severity: Severity, message: string, evidence: string, rfc: string): Finding {
  return { id: `coding.${id}`, area: 'coding', severity, message, evidence, rfc };
}

function codingOf(res: RecordedResponse): string {
  const codings = splitList(field(res.headers, 'content-encoding') ?? '').map((c) => c.toLowerCase());
  const real = codings.filter((c) => c !== 'identity');
  // The coding as named in messages; compared as received.
  return real.length === 0 ? 'identity' : real.join(', ');
}

/** The 200 answers of the coding probes (a 206, 304 or error says nothing about codings). */
function variantsOf(rec: Recording): Variant[] {
  const out: Variant[] = [];
  for (const probe of PROBES) {
    const x = rec.probes[probe];
    const res = x?.response;
    if (x === undefined || res === undefined || res.status !== 200) continue;
    out.push({ probe, x, res, coding: codingOf(res) });
  }
  return out;
}

/** text/*, JSON, JavaScript, SVG and XML: what compresses well (RFC 9110 §8.4.1 codings exist for it). */
export function isCompressibleText(mediaType: string): boolean {
  return (
    mediaType.startsWith('text/') ||
    mediaType.endsWith('+json') ||
    mediaType.endsWith('+xml') ||
    mediaType === 'application/json' ||
    mediaType === 'application/javascript' ||
    mediaType === 'application/x-javascript' ||
    mediaType === 'application/ecmascript' ||
    mediaType === 'application/xml' ||
    mediaType === 'application/wasm'
  );
}

export const checkCoding: Check = (rec) => {
  const variants = variantsOf(rec);
  if (variants.length === 0) return [];
  return [
    ...unrequested(variants),
    ...saving(variants),
    ...uncompressedText(variants),
    ...missingVary(variants),
    ...sameStrongEtag(variants),
  ];
};

function codingEvidence(v: Variant): string {
  return `${v.probe}: ${evidenceOf(v.res.headers, 'content-encoding')}`;
}

/** RFC 9110 §12.5.3: a coding the request did not list is one the client may not decode. */
function unrequested(variants: Variant[]): Finding[] {
  const bad = variants.filter((v) => {
    const asked = field(v.x.request.headers, 'accept-encoding');
    return v.coding.split(', ').some((c) => !acceptsCoding(asked, c));
  });
  if (bad.length === 0) return [];
  const v = bad[0]!;
  const asked = field(v.x.request.headers, 'accept-encoding') ?? '';
  const msg =
    `answered ${quoteValue(v.coding)} to a request with Accept-Encoding: ${quoteValue(asked)}: a client that cannot decode it` +
    ' gets garbage; send identity when no offered coding fits';
  const evidence = bad.map(
    (b) => `${codingEvidence(b)} (${evidenceOf(b.x.request.headers, 'accept-encoding')})`,
  );
  return [make('unrequested-coding', 'error', msg, evidence.join('; '), 'RFC 9110 §12.5.3')];
}

function identityOf(variants: Variant[]): Variant | undefined {
  return variants.find((v) => v.probe === 'coding-identity' && v.coding === 'identity');
}

function compressedOf(variants: Variant[]): Variant[] {
  return variants.filter(
    (v) => v.probe !== 'primary' && v.probe !== 'coding-identity' && v.coding !== 'identity',
  );
}

/** The lengths side by side: what compression saves on the wire. */
function saving(variants: Variant[]): Finding[] {
  const identity = identityOf(variants);
  const compressed = compressedOf(variants);
  if (identity === undefined || compressed.length === 0) return [];
  const base = identity.res.bodyBytes;
  const parts = compressed.map((v) => {
    const pct = base === 0 ? 0 : Math.round((1 - v.res.bodyBytes / base) * 100);
    const change = pct >= 0 ? `${pct}% smaller` : `${-pct}% larger`;
    return `${quoteValue(v.coding)} ${v.res.bodyBytes} B (${change})`;
  });
  const msg = `identity ${base} B; ${parts.join('; ')}`;
  const evidence = [identity, ...compressed].map((v) => `${v.probe}: ${v.res.bodyBytes} bytes`).join('; ');
  return [make('saving', 'info', msg, evidence, 'RFC 9110 §8.4.1')];
}

/** Text over 1 KiB that neither gzip nor br was applied to, although the request offered them. */
function uncompressedText(variants: Variant[]): Finding[] {
  const coded = variants.filter((v) => v.probe === 'coding-gzip' || v.probe === 'coding-br');
  if (coded.length === 0 || coded.some((v) => v.coding !== 'identity')) return [];
  const sample = identityOf(variants) ?? coded[0]!;
  const mediaType = mediaTypeOf(sample.res.headers);
  const sizeBytes = sample.res.bodyBytes;
  if (!isCompressibleText(mediaType) || sizeBytes <= TEXT_MIN_COMPRESS_BYTES) return [];
  const offered = coded.map((v) => (v.probe === 'coding-gzip' ? 'gzip' : 'br')).join(' or ');
  const msg =
    `${quoteValue(mediaType)} of ${sizeBytes} bytes is sent uncompressed to clients that accept ${offered};` +
    ' enable gzip and brotli for text types';
  const evidence = [evidenceOf(sample.res.headers, 'content-type'), ...coded.map(codingEvidence)].join('; ');
  return [make('text-uncompressed', 'warning', msg, evidence, 'RFC 9110 §8.4.1')];
}

/**
 * RFC 9110 §12.5.5: Vary SHOULD name the request fields the selection used. Without it a cache keys
 * every coding under one URL (RFC 9111 §4.1) and hands br to clients that cannot decode it: an error
 * when a shared cache may store the response; a warning when only the browser may (it asks the same
 * way every time).
 */
function missingVary(variants: Variant[]): Finding[] {
  const bad = variants.filter((v) => {
    if (v.coding === 'identity') return false;
    const vary = field(v.res.headers, 'vary');
    return !listIncludesToken(vary, 'accept-encoding') && !listIncludesToken(vary, '*');
  });
  if (bad.length === 0) return [];
  const shared = bad.find((v) => storableBy(v.x, v.res, true).ok);
  const v = shared ?? bad[0]!;
  const msg = shared
    ? `${quoteValue(v.coding)} response without Vary: Accept-Encoding that shared caches may store: they will send` +
      ` ${quoteValue(v.coding)} to clients that cannot decode it; add Vary: Accept-Encoding`
    : `${quoteValue(v.coding)} response without Vary: Accept-Encoding; add it (only the browser may store this one)`;
  const evidence = `${codingEvidence(v)}; ${evidenceOf(v.res.headers, 'vary')}`;
  return [make('missing-vary', shared ? 'error' : 'warning', msg, evidence, 'RFC 9110 §12.5.5')];
}

/** RFC 9110 §8.8.3: a strong validator changes with the representation, and the coding is part of it. */
function sameStrongEtag(variants: Variant[]): Finding[] {
  const byTag = new Map<string, Variant[]>();
  for (const v of variants) {
    const tag = parseEntityTag(field(v.res.headers, 'etag') ?? '');
    if (tag === null || tag.weak) continue;
    const list = byTag.get(tag.opaque) ?? [];
    list.push(v);
    byTag.set(tag.opaque, list);
  }
  const out: Finding[] = [];
  for (const [tag, list] of byTag) {
    const codings = [...new Set(list.map((v) => v.coding))];
    if (codings.length < 2) continue;
    const msg =
      `the strong ETag ${quoteValue(tag)} names ${codings.map((c) => quoteValue(c)).join(' and ')} bodies alike: a range or If-Match can then` +
      ' mix bytes of two codings; give each coding its own tag (or make it weak)';
    const evidence = list.map((v) => `${v.probe}: etag: ${tag}, content-encoding: ${v.coding}`).join('; ');
    out.push(make('same-etag', 'error', msg, evidence, 'RFC 9110 §8.8.3'));
  }
  return out;
}
