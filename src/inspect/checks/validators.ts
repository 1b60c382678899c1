// Validators and conditional requests, from the live probes: primary, repeat,
// inm-match, inm-wrong, ims, range, if-range-match, if-range-mismatch. Pure: no clock, no I/O.
import { isStorable } from '../../cache/index.js';
import {
  type EntityTag,
  listIncludesToken,
  parseCacheControl,
  parseEntityTag,
  parseHttpDate,
  splitList,
} from '../../http/index.js';
import { parseContentRange } from '../../http/range.js';
import { evidenceOf, field, responseOf } from '../exchange.js';
import {
  type FieldLine,
  type Finding,
  type RecordedResponse,
  type Recording,
  type Severity,
  STALE_IF_RANGE,
  WRONG_ETAG,
} from '../types.js';

/** The range probe asks for `bytes=0-9`. */
const RANGE_LAST = 9;

/** RFC 9110 §15.4.5: what a 304 must carry when the 200 would. Date only has to be there (time passes). */
const NOT_MODIFIED_FIELDS = ['etag', 'cache-control', 'expires', 'vary', 'content-location', 'date'] as const;
type NotModifiedField = (typeof NOT_MODIFIED_FIELDS)[number];

function finding(id: string, severity: Severity, message: string, evidence: string, rfc: string): Finding {
  return { id: `validators.${id}`, area: 'validators', severity, message, evidence, rfc };
}

function headerMap(headers: readonly FieldLine[]): Record<string, string> {
  // No prototype: a field named __proto__ from the network is just a field.
  const out: Record<string, string> = Object.create(null);
  for (const [n] of headers) out[n] ??= field(headers, n)!;
  return out;
}

function etagOf(r: RecordedResponse | undefined): { raw: string; tag: EntityTag | null } | undefined {
  const raw = r === undefined ? undefined : field(r.headers, 'etag');
  return raw === undefined ? undefined : { raw, tag: parseEntityTag(raw) };
}

function sameEtag(a: string, b: string): boolean {
  const x = parseEntityTag(a);
  const y = parseEntityTag(b);
  if (x === null || y === null) return a.trim() === b.trim();
  return x.weak === y.weak && x.opaque === y.opaque;
}

/** Cache-Control as a sorted set of `name=value` members, so order and case do not matter. */
function ccKey(v: string): string {
  const cc = parseCacheControl(v);
  return [...cc.directives]
    .map(([n, val]) => (val === true ? n : `${n}=${val}`))
    .sort()
    .join(',');
}

function varyKey(v: string): string {
  return splitList(v)
    .map((x) => x.toLowerCase())
    .sort()
    .join(',');
}

/** Expires equal, or the same distance from Date (an Expires computed as Date + max-age). */
function sameExpires(a: RecordedResponse, b: RecordedResponse): boolean {
  const ea = field(a.headers, 'expires')!;
  const eb = field(b.headers, 'expires')!;
  if (ea === eb) return true;
  const [xa, xb] = [parseHttpDate(ea), parseHttpDate(eb)];
  const [da, db] = [parseHttpDate(field(a.headers, 'date')), parseHttpDate(field(b.headers, 'date'))];
  if (xa === null || xb === null || da === null || db === null) return false;
  return Math.abs(xa - da - (xb - db)) <= 1000; // Date has one-second resolution
}

function sameField(name: NotModifiedField, full: RecordedResponse, nm: RecordedResponse): boolean {
  const a = field(full.headers, name)!;
  const b = field(nm.headers, name)!;
  switch (name) {
    case 'etag':
      return sameEtag(a, b);
    case 'cache-control':
      return ccKey(a) === ccKey(b);
    case 'vary':
      return varyKey(a) === varyKey(b);
    case 'expires':
      return sameExpires(full, nm);
    case 'date':
      return true; // time passes between the two
    default:
      return a === b;
  }
}

/** A 304 measured against the 200 it stands for (RFC 9110 §15.4.5). */
function notModifiedFindings(full: RecordedResponse, nm: RecordedResponse, probe: string): Finding[] {
  const out: Finding[] = [];
  for (const name of NOT_MODIFIED_FIELDS) {
    if (field(full.headers, name) === undefined) continue;
    const evidence = `200 ${evidenceOf(full.headers, name)}; 304 ${evidenceOf(nm.headers, name)}`;
    if (field(nm.headers, name) === undefined) {
      out.push(
        finding(
          '304-drops-field',
          'error',
          `the 304 to ${probe} lacks the ${name} field the 200 carries, which a 304 must repeat: send it on 304 too`,
          evidence,
          'RFC 9110 §15.4.5',
        ),
      );
    } else if (!sameField(name, full, nm)) {
      const etag = name === 'etag';
      out.push(
        finding(
          etag ? '304-etag-changed' : '304-field-changed',
          etag ? 'error' : 'warning',
          etag
            ? `the 304 to ${probe} carries another ETag than the 200 it confirms, so caches cannot tell which copy it validates`
            : `the 304 to ${probe} carries another ${name} than the 200, and caches adopt it (RFC 9111 §4.3.4): send the same value on both`,
          evidence,
          'RFC 9110 §15.4.5',
        ),
      );
    }
  }
  if (nm.bodyBytes > 0) {
    out.push(
      finding(
        '304-body',
        'error',
        `the 304 to ${probe} has a ${nm.bodyBytes}-byte body; a 304 ends with its header section, so the bytes corrupt the connection`,
        `304 with ${nm.bodyBytes} body bytes`,
        'RFC 9110 §15.4.5',
      ),
    );
  }
  return out;
}

/** Validators on the 200 itself: present, well-formed, stable (RFC 9110 §8.8). */
function presenceFindings(rec: Recording, primary: RecordedResponse): Finding[] {
  const out: Finding[] = [];
  const etag = etagOf(primary);
  if (etag !== undefined && etag.tag === null) {
    out.push(
      finding(
        'etag-invalid',
        'error',
        'the ETag is not an entity-tag (a quoted string, optionally W/-prefixed), so conditional requests cannot match it',
        evidenceOf(primary.headers, 'etag'),
        'RFC 9110 §8.8.3',
      ),
    );
  }
  const lastModified = field(primary.headers, 'last-modified');
  const storable = isStorable({
    method: rec.probes.primary?.request.method ?? 'GET',
    requestHeaders: {},
    status: primary.status,
    responseHeaders: headerMap(primary.headers),
    shared: false,
  });
  if (primary.status === 200 && etag === undefined && lastModified === undefined && storable.ok) {
    out.push(
      finding(
        'none',
        'warning',
        'a cacheable 200 without ETag or Last-Modified: caches must download it again in full when it goes stale; send an ETag',
        `${evidenceOf(primary.headers, 'cache-control')}; no etag or last-modified field`,
        'RFC 9110 §8.8',
      ),
    );
  }
  const repeat = responseOf(rec.probes.repeat);
  const again = etagOf(repeat);
  if (
    repeat !== undefined &&
    primary.status === 200 &&
    repeat.status === 200 &&
    etag?.tag?.weak === false &&
    again?.tag?.weak === false &&
    etag.tag.opaque !== again.tag.opaque &&
    primary.bodySha256 === repeat.bodySha256
  ) {
    out.push(
      finding(
        'etag-unstable',
        'warning',
        'the strong ETag changed between two requests while the body stayed the same (per-replica or per-request tags): caches never get a 304; derive the tag from the content',
        `etag: ${etag.raw} then etag: ${again.raw}`,
        'RFC 9110 §8.8.3',
      ),
    );
  }
  return out;
}

/** RFC 9110 §13.1.5: If-Range needs a strong validator, so a weak ETag on a resource with ranges. */
function weakRangeFindings(rec: Recording, primary: RecordedResponse): Finding[] {
  const identity = responseOf(rec.probes['coding-identity']);
  const base = identity?.status === 200 && field(identity.headers, 'etag') !== undefined ? identity : primary;
  const etag = etagOf(base);
  if (etag?.tag?.weak !== true) return [];
  const acceptsRanges = listIncludesToken(field(base.headers, 'accept-ranges'), 'bytes');
  const gave206 = responseOf(rec.probes.range)?.status === 206;
  if (!acceptsRanges && !gave206) return [];
  return [
    finding(
      'weak-etag-ranges',
      'warning',
      'a weak ETag on a resource that serves ranges: If-Range needs a strong validator, so interrupted downloads restart from zero; send a strong ETag',
      `${evidenceOf(base.headers, 'etag')}; ${gave206 ? 'range request answered 206' : evidenceOf(base.headers, 'accept-ranges')}`,
      'RFC 9110 §13.1.5',
    ),
  ];
}

/** The conditional GETs: If-None-Match with the ETag and a wrong one, If-Modified-Since. */
function conditionalFindings(rec: Recording, primary: RecordedResponse): Finding[] {
  const out: Finding[] = [];
  const match = responseOf(rec.probes['inm-match']);
  if (match?.status === 200 && primary.status === 200) {
    out.push(
      finding(
        'inm-ignored',
        'warning',
        'If-None-Match with the current ETag got a full 200, not 304: revalidation costs the whole body; evaluate If-None-Match',
        `if-none-match: ${field(primary.headers, 'etag') ?? ''} -> 200`,
        'RFC 9110 §13.1.2',
      ),
    );
  }
  if (match?.status === 304 && primary.status === 200) {
    out.push(...notModifiedFindings(primary, match, 'If-None-Match'));
  }
  const ims = responseOf(rec.probes.ims);
  const lastModified = field(primary.headers, 'last-modified');
  if (ims?.status === 200 && primary.status === 200 && lastModified !== undefined) {
    out.push(
      finding(
        'ims-ignored',
        'warning',
        'If-Modified-Since with the Last-Modified date got a full 200, not 304: clients that only keep the date revalidate at full cost',
        `if-modified-since: ${lastModified} -> 200`,
        'RFC 9110 §13.1.3',
      ),
    );
  }
  if (ims?.status === 304 && primary.status === 200) {
    out.push(...notModifiedFindings(primary, ims, 'If-Modified-Since'));
  }
  const wrong = responseOf(rec.probes['inm-wrong']);
  if (wrong?.status === 304) {
    out.push(
      finding(
        'inm-wrong-304',
        'error',
        'If-None-Match with a tag the resource never had got 304: the server confirms copies it did not send, so clients keep stale content; compare the tags',
        `if-none-match: ${WRONG_ETAG} -> 304; ${evidenceOf(primary.headers, 'etag')}`,
        'RFC 9110 §13.1.2',
      ),
    );
  }
  return out;
}

/** The identity length of the representation, when a probe without content coding shows it. */
function identityLength(rec: Recording): number | undefined {
  for (const name of ['coding-identity', 'primary'] as const) {
    const x = rec.probes[name];
    const r = responseOf(x);
    // A HEAD primary (--method HEAD) has no body to measure.
    if (r === undefined || r.status !== 200 || x!.request.method !== 'GET') continue;
    const coding = field(r.headers, 'content-encoding');
    if (coding === undefined || coding.trim().toLowerCase() === 'identity') return r.bodyBytes;
  }
  return undefined;
}

/** `Range: bytes=0-9` (RFC 9110 §14.2, §14.4, §15.3.7). */
function rangeFindings(rec: Recording, sizeBytes: number | undefined): Finding[] {
  const r = responseOf(rec.probes.range);
  if (r === undefined) return [];
  if (r.status === 200) {
    return [
      finding(
        'range-ignored',
        'info',
        'Range: bytes=0-9 got the whole 200: the resource does not serve byte ranges (resuming and seeking download everything)',
        `range: bytes=0-9 -> 200; ${evidenceOf(r.headers, 'accept-ranges')}`,
        'RFC 9110 §14.2',
      ),
    ];
  }
  if (r.status !== 206) return [];
  const value = field(r.headers, 'content-range');
  const cr = value === undefined ? null : parseContentRange(value);
  // The identity length from another probe, else the one the 206 states.
  const size = sizeBytes ?? (cr?.kind === 'range' ? cr.completeLength : undefined);
  const end = size === undefined ? RANGE_LAST : Math.min(RANGE_LAST, size - 1);
  const wrong =
    cr === null ||
    cr.kind !== 'range' ||
    cr.start !== 0 ||
    cr.end !== end ||
    (sizeBytes !== undefined && cr.completeLength !== undefined && cr.completeLength !== sizeBytes);
  const out: Finding[] = [];
  if (wrong) {
    out.push(
      finding(
        'content-range-invalid',
        'error',
        `the 206 to Range: bytes=0-9 needs Content-Range: bytes 0-${end}/${size ?? 'N'}; clients splice the bytes at the wrong place`,
        evidenceOf(r.headers, 'content-range'),
        'RFC 9110 §14.4',
      ),
    );
  }
  const want = cr?.kind === 'range' ? cr.end - cr.start + 1 : end + 1;
  if (r.bodyBytes !== want) {
    out.push(
      finding(
        'range-body-length',
        'error',
        `the 206 to Range: bytes=0-9 has ${r.bodyBytes} body bytes where its range says ${want}`,
        `${evidenceOf(r.headers, 'content-range')}; ${r.bodyBytes} body bytes`,
        'RFC 9110 §15.3.7',
      ),
    );
  }
  return out;
}

/** If-Range (RFC 9110 §13.1.5): a matching strong tag gives the range, a stale one the whole 200. */
function ifRangeFindings(rec: Recording, sizeBytes: number | undefined): Finding[] {
  const out: Finding[] = [];
  const match = rec.probes['if-range-match'];
  const sent = match === undefined ? undefined : field(match.request.headers, 'if-range');
  const sentTag = sent === undefined ? null : parseEntityTag(sent);
  const rangesWork = responseOf(rec.probes.range)?.status === 206;
  if (match?.response?.status === 200 && sentTag?.weak === false && rangesWork) {
    out.push(
      finding(
        'if-range-match-ignored',
        'warning',
        'If-Range with the current strong ETag got the whole 200 although plain ranges work: resumed downloads start again from zero',
        `if-range: ${sent} -> 200`,
        'RFC 9110 §13.1.5',
      ),
    );
  }
  const stale = responseOf(rec.probes['if-range-mismatch']);
  // A 200 that is a range after all: it carries a Content-Range, or only the 10 bytes asked for.
  // (Not any length difference: a dynamic page may change size between two probes.)
  const partial200 =
    stale?.status === 200 &&
    (field(stale.headers, 'content-range') !== undefined ||
      (sizeBytes !== undefined && sizeBytes > RANGE_LAST + 1 && stale.bodyBytes <= RANGE_LAST + 1));
  if (stale?.status === 206 || partial200) {
    out.push(
      finding(
        'if-range-mismatch-partial',
        'error',
        'If-Range with a stale ETag did not get the whole representation: a client resuming a download would splice two versions; answer 200 with the full body',
        `if-range: ${STALE_IF_RANGE} -> ${stale!.status}, ${stale!.bodyBytes} bytes; ${evidenceOf(stale!.headers, 'content-range')}`,
        'RFC 9110 §13.1.5',
      ),
    );
  }
  return out;
}

export function checkValidators(rec: Recording): Finding[] {
  const primary = responseOf(rec.probes.primary);
  if (primary === undefined) return [];
  const sizeBytes = identityLength(rec);
  return [
    ...presenceFindings(rec, primary),
    ...weakRangeFindings(rec, primary),
    ...conditionalFindings(rec, primary),
    ...rangeFindings(rec, sizeBytes),
    ...ifRangeFindings(rec, sizeBytes),
  ];
}
