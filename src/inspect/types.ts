// The shapes `gatehouse check` works on: what was sent and received (a Recording), and what
// was found in it (Findings). Checks are pure functions over a Recording; only live.ts does I/O.

export type Severity = 'error' | 'warning' | 'info';

/** Report sections, in the order the readable report prints them. */
export type Area =
  | 'status'
  | 'redirects'
  | 'protocol'
  | 'caching'
  | 'validators'
  | 'coding'
  | 'cors'
  | 'jsonp'
  | 'security';

export interface Finding {
  /** Stable, `area.kebab-name`, e.g. `caching.html-long-lifetime`. Tests and users match on it. */
  id: string;
  area: Area;
  severity: Severity;
  /** One line, no trailing period. */
  message: string;
  /** The header line(s) or value the finding rests on, e.g. `cache-control: max-age=31536000`. */
  evidence: string;
  /** The section, e.g. `RFC 9111 §4.2.1`, `Fetch §3.2.5`. */
  rfc: string;
}

/** Something that went right (`gatehouse check --verbose`, the JSON report's `passed`). */
export interface Pass {
  /** Stable, `area.kebab-name`, e.g. `validators.inm-304`. */
  id: string;
  area: Area;
  message: string;
  evidence: string;
}

/** One request the check sent (the JSON report's `probes`). */
export interface ProbeRun {
  /** `hop-N` for the redirect chain (hop-1 is the URL given), the ProbeName, or `asset-<kind>`. */
  name: string;
  method: string;
  url: string;
  /** null when the request got no answer (`error` says why). */
  status: number | null;
  error?: string;
}

/** One field line as received; the name lower-cased. Repeated fields stay separate lines. */
export type FieldLine = readonly [name: string, value: string];

export interface RecordedRequest {
  method: string;
  /** Absolute URL. */
  url: string;
  headers: readonly FieldLine[];
}

export interface RecordedResponse {
  status: number;
  /** '1.0', '1.1' or '2'. */
  httpVersion: string;
  headers: readonly FieldLine[];
  /** Body bytes as received (still content-coded). */
  bodyBytes: number;
  /** Hex SHA-256 of the body bytes as received. */
  bodySha256: string;
  /** The first 4096 bytes of the body, decoded as UTF-8 (lossy), for reflection checks. */
  bodySample: string;
}

/**
 * The probes live.ts sends. Unless said otherwise each is a GET of the final URL (after redirects)
 * with `Accept: *\/*`, `Accept-Encoding: gzip, deflate, br` and the user's `--header`s.
 * - redirect: one hop of the redirect chain, from the URL given (Recording.redirects, not probes).
 * - primary: the first request to the final URL; `--method` applies here only.
 * - repeat: the same request again, about a second later (ETag stability).
 * - inm-match: `If-None-Match: <primary ETag>` (sent only when primary has an ETag).
 * - inm-wrong: `If-None-Match: "gatehouse-check-no-match"` (sent only when primary has an ETag).
 * - ims: `If-Modified-Since: <primary Last-Modified>` (sent only when primary has one).
 * - coding-identity / coding-gzip / coding-br: `Accept-Encoding: identity` / `gzip` / `br`.
 * - range: `Accept-Encoding: identity`, `Range: bytes=0-9`.
 * - if-range-match: as range, plus `If-Range: <coding-identity ETag>` (sent only when it has one).
 * - if-range-mismatch: as range, plus `If-Range: "gatehouse-check-stale"`.
 * - cors-simple: `Origin: <--origin>` (sent only with --origin).
 * - cors-random: `Origin: https://<random>.example` (sent only with --origin).
 * - cors-preflight: OPTIONS with `Origin: <--origin>`, `Access-Control-Request-Method: POST`,
 *   `Access-Control-Request-Headers: authorization,content-type` (sent only with --origin).
 * - jsonp-hostile: the JSONP callback parameter set to HOSTILE_CALLBACK (sent only for JSONP).
 */
export type ProbeName =
  | 'primary'
  | 'repeat'
  | 'inm-match'
  | 'inm-wrong'
  | 'ims'
  | 'coding-identity'
  | 'coding-gzip'
  | 'coding-br'
  | 'range'
  | 'if-range-match'
  | 'if-range-mismatch'
  | 'cors-simple'
  | 'cors-random'
  | 'cors-preflight'
  | 'jsonp-hostile';

export const HOSTILE_CALLBACK = 'alert(document.domain)//<script>';
export const WRONG_ETAG = '"gatehouse-check-no-match"';
export const STALE_IF_RANGE = '"gatehouse-check-stale"';

export interface Exchange {
  request: RecordedRequest;
  /** Absent when the request failed; `error` says why. */
  response?: RecordedResponse;
  error?: string;
  /** Wall clock when the request was sent and the response head arrived (ms since the epoch). */
  sentAtMs: number;
  receivedAtMs: number;
}

/** TLS facts of the final URL's connection (HTTPS only). */
export interface TlsRecord {
  /** e.g. 'TLSv1.3'. */
  protocol: string;
  cipher: string;
  /** The ALPN protocol agreed, or false. */
  alpn: string | false;
  certificate?: {
    subject: string;
    issuer: string;
    san: string[];
    validFrom: string;
    validTo: string;
    daysLeft: number;
    /** keyStrength: RSA >= 2048, EC >= 256 bits, no SHA-1 signature (absent in older recordings). */
    checks: { trusted: boolean; timeValid: boolean; hostnameMatches: boolean; keyStrength?: boolean };
    /** Why keyStrength failed, one line each (CA/Browser Forum Baseline Requirements §6.1.5). */
    weakKeys?: string[];
    /** The development CA's path when Gatehouse's dev CA issued this certificate (suggest --ca, not --insecure). */
    devCaPath?: string;
    /** Warnings from the certificate check (expiring soon, incomplete chain), one line each. */
    warnings: string[];
  };
}

export interface Recording {
  /** The URL given. */
  url: string;
  /** The URL after following redirects. */
  finalUrl: string;
  /** When the recording was made; checks use it instead of a clock. */
  nowMs: number;
  /** Each hop of the redirect chain in order; the last entry is the first non-redirect answer (or the error). */
  redirects: Exchange[];
  probes: Partial<Record<ProbeName, Exchange>>;
  tls?: TlsRecord;
  /** The SPA asset probes (absent in older recordings, or when the page is not HTML). */
  assets?: AssetProbe[];
  /** What the user asked for. */
  options: {
    origin?: string;
    /** The names of the user's `--header`s (values are never recorded here). */
    headerNames?: string[];
    /** The JSONP callback parameter name, from the URL or --jsonp. */
    jsonpParam?: string;
    method: string;
  };
}

export type Check = (rec: Recording) => Finding[];

/** Why an asset probe was sent: a made-up hashed name next to the page's assets, or a reference in the page. */
export type AssetProbeKind = 'made-up' | 'script' | 'stylesheet' | 'font';

/**
 * The SPA asset probes (sent only when the primary answer is 2xx HTML): GETs of a made-up hashed asset
 * URL (`<dir of the page's first asset, else /assets/>index-deadbeef.js`, which should be 404) and of the
 * first same-origin scripts, stylesheets and fonts the page's first 4096 bytes reference.
 */
export interface AssetProbe {
  kind: AssetProbeKind;
  exchange: Exchange;
}

export interface Report {
  url: string;
  finalUrl: string;
  /** The final URL's status (the primary request's), null when it got no answer. */
  status: number | null;
  findings: Finding[];
  summary: { errors: number; warnings: number; infos: number };
  /** What went right, in area order. */
  passed: Pass[];
  /** Every request sent, in order. */
  probes: ProbeRun[];
}
