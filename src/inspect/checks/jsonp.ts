// JSONP, when a callback parameter is known (rec.options.jsonpParam): the
// primary answer must be a script with nosniff, and a hostile callback must not come back as code.
// Pure: no clock, no I/O.
import { firstQueryParam } from '../../http/jsonp.js';
import { evidenceOf, field } from '../exchange.js';
import type { Exchange, Finding, RecordedResponse, Recording, Severity } from '../types.js';

/** The JavaScript MIME type essences (HTML §"JavaScript MIME type"); text/javascript is the one to send. */
const JAVASCRIPT_TYPES: ReadonlySet<string> = new Set([
  'application/ecmascript',
  'application/javascript',
  'application/x-ecmascript',
  'application/x-javascript',
  'text/ecmascript',
  'text/javascript',
  'text/javascript1.0',
  'text/javascript1.1',
  'text/javascript1.2',
  'text/javascript1.3',
  'text/javascript1.4',
  'text/javascript1.5',
  'text/jscript',
  'text/livescript',
  'text/x-ecmascript',
  'text/x-javascript',
]);

/**
 * What a reflected HOSTILE_CALLBACK (`alert(document.domain)//<script>`) leaves behind when it is
 * dangerous: the call (code runs in the embedding page) or the tag (HTML injection when sniffed).
 * A server that strips the bad characters leaves neither.
 */
const REFLECTION_MARKERS = ['alert(document.domain)', '<script>'] as const;

function finding(id: string, severity: Severity, message: string, evidence: string, rfc: string): Finding {
  return { id: `jsonp.${id}`, area: 'jsonp', severity, message, evidence, rfc };
}

/** The media type essence: type/subtype, lowercased, without parameters. */
function essence(r: RecordedResponse): string | undefined {
  const v = field(r.headers, 'content-type');
  if (v === undefined) return undefined;
  return v.split(';')[0]!.trim().toLowerCase();
}

/** Fetch §3.5 "determine nosniff": the first value of X-Content-Type-Options is `nosniff`. */
function hasNosniff(r: RecordedResponse): boolean {
  const v = field(r.headers, 'x-content-type-options');
  return v !== undefined && v.split(',')[0]!.trim().toLowerCase() === 'nosniff';
}

function isJson(type: string | undefined): boolean {
  return type === 'application/json' || (type?.endsWith('+json') ?? false);
}

function carriesCallback(x: Exchange, param: string): boolean {
  let query: string;
  try {
    query = new URL(x.request.url).search.slice(1);
  } catch {
    return false;
  }
  return firstQueryParam(query, param).kind === 'present';
}

const ok = (r: RecordedResponse): boolean => r.status >= 200 && r.status <= 299;

/** The JSONP answer itself: a script type and nosniff (DESIGN.md "JSONP", Fetch §3.5). */
function primaryFindings(x: Exchange, param: string): Finding[] {
  const r = x.response;
  if (r === undefined || !ok(r) || !carriesCallback(x, param)) return [];
  const out: Finding[] = [];
  const type = essence(r);
  if (type === undefined || !JAVASCRIPT_TYPES.has(type)) {
    out.push(
      finding(
        'content-type',
        'error',
        `the JSONP answer is ${type ?? 'untyped'}, not a script type: with nosniff browsers refuse to run it, without it they guess; send text/javascript; charset=utf-8`,
        evidenceOf(r.headers, 'content-type'),
        'Fetch §3.5',
      ),
    );
  }
  if (!hasNosniff(r)) {
    out.push(
      finding(
        'nosniff-missing',
        'error',
        'the JSONP answer lacks X-Content-Type-Options: nosniff, so browsers may sniff it as another type (HTML, Flash-era content); send nosniff',
        evidenceOf(r.headers, 'x-content-type-options'),
        'Fetch §3.5',
      ),
    );
  }
  return out;
}

/** The hostile callback probe: a 400 (or a sanitised name) is right; the call coming back is not. */
function hostileFindings(x: Exchange | undefined): Finding[] {
  const r = x?.response;
  if (r === undefined || !ok(r)) return [];
  // JSON with nosniff is never run as a script nor rendered: a reflection inside it is inert.
  if (isJson(essence(r)) && hasNosniff(r)) return [];
  const marker = REFLECTION_MARKERS.find((m) => r.bodySample.includes(m));
  if (marker === undefined) return [];
  const at = r.bodySample.indexOf(marker);
  return [
    finding(
      'callback-reflected',
      'error',
      `a hostile callback came back unescaped (${r.status}): any page can run its own code under this origin's name; accept only identifiers and answer 400 otherwise`,
      `body: ${JSON.stringify(r.bodySample.slice(Math.max(0, at - 20), at + 60))}`,
      'HTML §4.12.1',
    ),
  ];
}

export function checkJsonp(rec: Recording): Finding[] {
  const param = rec.options.jsonpParam;
  if (param === undefined) return [];
  const primary = rec.probes.primary;
  return [
    ...(primary === undefined ? [] : primaryFindings(primary, param)),
    ...hostileFindings(rec.probes['jsonp-hostile']),
  ];
}
