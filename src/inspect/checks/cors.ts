// CORS, from the probes cors-simple, cors-random and cors-preflight (sent only
// with --origin). The browser's side is the Fetch standard: the CORS check (§4.10) and the
// CORS-preflight fetch (§4.8) are replayed here on the recorded answers. Pure: no clock, no I/O.
import { listIncludesToken, splitList } from '../../http/index.js';
import { evidenceOf, field } from '../exchange.js';
import type { Exchange, Finding, RecordedResponse, Recording, Severity } from '../types.js';

/** Fetch §4.8: the preflight cache entry lives Access-Control-Max-Age seconds, 5 when absent. */
export const DEFAULT_MAX_AGE_SEC = 5;
/** Browsers cap Access-Control-Max-Age: Chromium at 7200 s, Firefox at 86400 s. */
export const CHROMIUM_MAX_AGE_CAP_SEC = 7200;
export const FIREFOX_MAX_AGE_CAP_SEC = 86_400;
/** Fetch §2.2.1: methods a preflight never needs to allow. */
const SAFELISTED_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST']);

function finding(id: string, severity: Severity, message: string, evidence: string, rfc: string): Finding {
  return { id: `cors.${id}`, area: 'cors', severity, message, evidence, rfc };
}

function acao(r: RecordedResponse): string | undefined {
  return field(r.headers, 'access-control-allow-origin')?.trim();
}

/** Fetch §4.10 step 7: only the exact value `true` counts. */
function allowsCredentials(r: RecordedResponse): boolean {
  return field(r.headers, 'access-control-allow-credentials')?.trim() === 'true';
}

function corsEvidence(r: RecordedResponse): string {
  const acac = field(r.headers, 'access-control-allow-credentials');
  const parts = [evidenceOf(r.headers, 'access-control-allow-origin')];
  if (acac !== undefined) parts.push(`access-control-allow-credentials: ${acac}`);
  return parts.join('; ');
}

/**
 * The CORS check (Fetch §4.10) for a request from `origin`: null when the browser lets the page read
 * the response, else why not.
 */
export function corsCheckFailure(r: RecordedResponse, origin: string, credentials: boolean): string | null {
  const allow = acao(r);
  if (allow === undefined) return 'there is no Access-Control-Allow-Origin';
  if (!credentials && allow === '*') return null;
  if (allow === '*')
    return 'Access-Control-Allow-Origin is * and credentialed requests need the origin named';
  if (allow !== origin) return `Access-Control-Allow-Origin is ${allow}, not ${origin}`;
  if (!credentials) return null;
  return allowsCredentials(r) ? null : 'Access-Control-Allow-Credentials is not true';
}

/**
 * The CORS-preflight fetch (Fetch §4.8) for `method` with the CORS-unsafe header `names`: null when it
 * passes, else why not.
 */
export function preflightFailure(
  r: RecordedResponse,
  origin: string,
  credentials: boolean,
  method: string,
  names: readonly string[],
): string | null {
  if (r.status < 200 || r.status > 299) return `the preflight answered ${r.status}, not 2xx`;
  const cors = corsCheckFailure(r, origin, credentials);
  if (cors !== null) return cors;
  const methods = splitList(field(r.headers, 'access-control-allow-methods') ?? '');
  const anyMethod = !credentials && methods.includes('*');
  // Methods compare case-sensitively (Fetch §4.8, "methods does not contain request's method").
  if (!SAFELISTED_METHODS.has(method) && !anyMethod && !methods.includes(method)) {
    return `Access-Control-Allow-Methods does not list ${method}`;
  }
  const allowed = splitList(field(r.headers, 'access-control-allow-headers') ?? '').map((n) =>
    n.toLowerCase(),
  );
  const anyHeader = !credentials && allowed.includes('*');
  // Fetch §3.2.3: `*` never covers Authorization (a CORS non-wildcard request-header name).
  const missing = names.filter((n) => !allowed.includes(n) && !(anyHeader && n !== 'authorization'));
  if (missing.length > 0) return `Access-Control-Allow-Headers does not list ${missing.join(', ')}`;
  return null;
}

function requestHeader(x: Exchange | undefined, name: string): string | undefined {
  return x === undefined ? undefined : field(x.request.headers, name);
}

/** `*` together with credentials, on any probe (Fetch §3.2.5). */
function wildcardFindings(responses: readonly [string, RecordedResponse][]): Finding[] {
  const hit = responses.find(([, r]) => acao(r) === '*' && allowsCredentials(r));
  if (hit === undefined) return [];
  return [
    finding(
      'wildcard-credentials',
      'error',
      `Access-Control-Allow-Origin: * with Access-Control-Allow-Credentials: true (${hit[0]}): browsers refuse credentialed reads with *, so echo allowed origins instead`,
      corsEvidence(hit[1]),
      'Fetch §3.2.5',
    ),
  ];
}

/** The random origin echoed back: the allow-list accepts anyone. */
function reflectionFindings(random: Exchange | undefined): Finding[] {
  const r = random?.response;
  const origin = requestHeader(random, 'origin');
  if (r === undefined || origin === undefined || acao(r) !== origin) return [];
  const credentials = allowsCredentials(r);
  return [
    finding(
      credentials ? 'reflects-any-origin-credentials' : 'reflects-any-origin',
      credentials ? 'error' : 'warning',
      credentials
        ? `any origin (here ${origin}) is echoed with credentials allowed: every website can read this URL with its visitors' cookies; check the origin against an allow-list`
        : `any origin (here ${origin}) is echoed in Access-Control-Allow-Origin: if that is intended, send * instead; otherwise check the origin against an allow-list`,
      corsEvidence(r),
      'Fetch §3.2.5',
    ),
  ];
}

/** An origin-specific answer must say it varies with Origin (RFC 9110 §12.5.5). */
function varyFindings(responses: readonly [string, RecordedResponse][]): Finding[] {
  for (const [probe, r] of responses) {
    const allow = acao(r);
    if (allow === undefined || allow === '*') continue;
    const vary = field(r.headers, 'vary');
    if (listIncludesToken(vary, 'origin') || listIncludesToken(vary, '*')) continue;
    return [
      finding(
        'missing-vary-origin',
        'error',
        `Access-Control-Allow-Origin names an origin (${probe}) but Vary lacks Origin: a shared cache serves one origin's answer to another; add Vary: Origin`,
        `${evidenceOf(r.headers, 'access-control-allow-origin')}; ${evidenceOf(r.headers, 'vary')}`,
        'RFC 9110 §12.5.5',
      ),
    ];
  }
  return [];
}

/** The preflight for a JSON POST with Authorization (Fetch §4.8). */
function preflightFindings(x: Exchange, origin: string, invited: string | undefined): Finding[] {
  const r = x.response!;
  if (r.status < 200 || r.status > 299) {
    // Only harm when something asks for a non-simple request; a plain page never needs a preflight.
    const severity: Severity = invited === undefined ? 'info' : 'error';
    const why = invited === undefined ? '' : ` (${invited})`;
    return [
      finding(
        'preflight-failed',
        severity,
        `the preflight (OPTIONS) answered ${r.status}, so browsers never send the cross-origin POST${why}: if such calls are meant to work, answer the preflight with 204 or 200`,
        `OPTIONS -> ${r.status}; ${corsEvidence(r)}`,
        'Fetch §4.8',
      ),
    ];
  }
  const out: Finding[] = [];
  const credentials = allowsCredentials(r);
  const granted = corsCheckFailure(r, origin, credentials) === null;
  const method = requestHeader(x, 'access-control-request-method') ?? 'POST';
  const names = splitList(requestHeader(x, 'access-control-request-headers') ?? '').map((n) =>
    n.toLowerCase(),
  );
  const failure = preflightFailure(r, origin, credentials, method, names);
  if (granted && failure !== null) {
    out.push(
      finding(
        'preflight-disallows',
        'warning',
        `the preflight allows ${origin} but not this request: ${failure}`,
        `${evidenceOf(r.headers, 'access-control-allow-methods')}; ${evidenceOf(r.headers, 'access-control-allow-headers')}`,
        'Fetch §4.8',
      ),
    );
  }
  if (!granted) return out;
  const raw = field(r.headers, 'access-control-max-age');
  const maxAgeSec = raw !== undefined && /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : undefined;
  out.push(
    finding(
      'max-age',
      'info',
      maxAgeSec === undefined
        ? `no valid Access-Control-Max-Age: browsers repeat the preflight after ${DEFAULT_MAX_AGE_SEC} s`
        : `browsers may reuse this preflight for ${maxAgeSec} s`,
      evidenceOf(r.headers, 'access-control-max-age'),
      'Fetch §3.2.3',
    ),
  );
  if (maxAgeSec !== undefined && maxAgeSec > CHROMIUM_MAX_AGE_CAP_SEC) {
    const firefox = Math.min(maxAgeSec, FIREFOX_MAX_AGE_CAP_SEC);
    out.push(
      finding(
        'max-age-capped',
        'info',
        `Access-Control-Max-Age ${maxAgeSec} s is more than browsers keep: Chromium caps it at ${CHROMIUM_MAX_AGE_CAP_SEC} s, Firefox uses ${firefox} s`,
        evidenceOf(r.headers, 'access-control-max-age'),
        'Fetch §4.8',
      ),
    );
  }
  return out;
}

/**
 * The browser's answer in both credentials modes (`credentials: 'omit'`/`'same-origin'` vs
 * `'include'`): `allowed with or without credentials`, `blocked: why`, or one of each.
 */
export function verdict(fail: (credentials: boolean) => string | null): string {
  const without = fail(false);
  const withCreds = fail(true);
  if (without === null && withCreds === null) return 'allowed with or without credentials';
  if (without !== null && withCreds !== null) {
    return without === withCreds
      ? `blocked: ${without}`
      : `blocked without credentials (${without}) and with them (${withCreds})`;
  }
  return without === null
    ? `allowed without credentials, blocked with them (${withCreds})`
    : `allowed with credentials, blocked without them (${without})`;
}

/** What the browser would do with the simple GET and the JSON POST with Authorization. */
function browserFindings(rec: Recording, origin: string): Finding[] {
  const out: Finding[] = [];
  const simple = rec.probes['cors-simple']?.response;
  if (simple !== undefined) {
    out.push(
      finding(
        'browser-simple',
        'info',
        `a fetch() GET from ${origin} reading this response: ${verdict((c) => corsCheckFailure(simple, origin, c))}`,
        corsEvidence(simple),
        'Fetch §4.10',
      ),
    );
  }
  const pre = rec.probes['cors-preflight'];
  const r = pre?.response;
  if (pre !== undefined && r !== undefined) {
    const method = requestHeader(pre, 'access-control-request-method') ?? 'POST';
    const names = splitList(requestHeader(pre, 'access-control-request-headers') ?? '').map((n) =>
      n.toLowerCase(),
    );
    out.push(
      finding(
        'browser-preflight',
        'info',
        `a fetch() ${method} from ${origin} with ${names.join(', ') || 'no extra headers'}, as far as the preflight decides: ${verdict((c) => preflightFailure(r, origin, c, method, names))}`,
        `OPTIONS -> ${r.status}; ${corsEvidence(r)}; ${evidenceOf(r.headers, 'access-control-allow-headers')}`,
        'Fetch §4.8',
      ),
    );
  }
  return out;
}

/**
 * Why non-simple requests (Fetch §4.8) are expected here, or undefined: the user asked for a method other
 * than GET or sent --header, or a CORS answer lists Access-Control-Allow-Methods or -Headers.
 */
export function invitesPreflight(
  rec: Recording,
  responses: readonly (readonly [string, RecordedResponse])[],
): string | undefined {
  if (rec.options.method !== 'GET') return `--method ${rec.options.method} was asked for`;
  if ((rec.options.headerNames?.length ?? 0) > 0) return '--header was given';
  for (const [, r] of responses) {
    for (const name of ['access-control-allow-methods', 'access-control-allow-headers']) {
      if (field(r.headers, name) !== undefined) return `the site sends ${name}`;
    }
  }
  return undefined;
}

export function checkCors(rec: Recording): Finding[] {
  const origin = rec.options.origin;
  if (origin === undefined) return [];
  const responses: [string, RecordedResponse][] = [];
  for (const name of ['cors-simple', 'cors-random', 'cors-preflight'] as const) {
    const r = rec.probes[name]?.response;
    if (r !== undefined) responses.push([name, r]);
  }
  const out = [...wildcardFindings(responses), ...reflectionFindings(rec.probes['cors-random'])];
  out.push(...varyFindings(responses.filter(([name]) => name !== 'cors-preflight')));
  const preflight = rec.probes['cors-preflight'];
  if (preflight?.response !== undefined) {
    out.push(...preflightFindings(preflight, origin, invitesPreflight(rec, responses)));
  }
  out.push(...browserFindings(rec, origin));
  return out;
}
