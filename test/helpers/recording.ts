// Builds Recordings for the inspector's table tests: only what a case names, the rest defaulted.
import type {
  Exchange,
  FieldLine,
  ProbeName,
  RecordedResponse,
  Recording,
  TlsRecord,
} from '../../src/inspect/types.js';

export const NOW_MS = Date.UTC(2026, 10, 25, 12, 0, 0);
export const URL_UNDER_TEST = 'https://site.example/app/';

/** Headers as an object (an array value gives repeated lines) or as field lines. */
export type Fields = Record<string, string | string[]> | readonly FieldLine[];

export interface ResponseSpec {
  status?: number;
  headers?: Fields;
  body?: string;
  bodyBytes?: number;
  bodySha256?: string;
  httpVersion?: string;
}

export interface ExchangeSpec extends ResponseSpec {
  method?: string;
  url?: string;
  requestHeaders?: Fields;
  /** The request failed with this reason (no response). */
  error?: string;
  receivedAtMs?: number;
}

export function lines(fields: Fields | undefined): FieldLine[] {
  if (fields === undefined) return [];
  if (Array.isArray(fields)) return fields.map(([n, v]) => [n.toLowerCase(), v] as const);
  const out: FieldLine[] = [];
  for (const [n, v] of Object.entries(fields)) {
    for (const one of Array.isArray(v) ? v : [v]) out.push([n.toLowerCase(), one]);
  }
  return out;
}

export function response(spec: ResponseSpec = {}): RecordedResponse {
  const body = spec.body ?? '';
  return {
    status: spec.status ?? 200,
    httpVersion: spec.httpVersion ?? '1.1',
    headers: lines(spec.headers),
    bodyBytes: spec.bodyBytes ?? Buffer.byteLength(body),
    bodySha256: spec.bodySha256 ?? `sha-of-${body}`,
    bodySample: body.slice(0, 4096),
  };
}

export function exchange(spec: ExchangeSpec = {}): Exchange {
  const receivedAtMs = spec.receivedAtMs ?? NOW_MS;
  return {
    request: {
      method: spec.method ?? 'GET',
      url: spec.url ?? URL_UNDER_TEST,
      headers: lines(spec.requestHeaders),
    },
    ...(spec.error === undefined ? { response: response(spec) } : { error: spec.error }),
    sentAtMs: receivedAtMs - 5,
    receivedAtMs,
  };
}

export interface RecordingSpec {
  url?: string;
  finalUrl?: string;
  nowMs?: number;
  redirects?: ExchangeSpec[];
  probes?: Partial<Record<ProbeName, ExchangeSpec>>;
  tls?: TlsRecord;
  origin?: string;
  jsonpParam?: string;
  method?: string;
}

/** A Recording with the probes given; `primary` defaults to a bare 200. */
export function recording(spec: RecordingSpec = {}): Recording {
  const url = spec.url ?? URL_UNDER_TEST;
  const finalUrl = spec.finalUrl ?? url;
  const probes: Partial<Record<ProbeName, Exchange>> = {};
  const given = { primary: {}, ...spec.probes };
  for (const [name, x] of Object.entries(given) as [ProbeName, ExchangeSpec][]) {
    probes[name] = exchange({ url: finalUrl, ...x });
  }
  return {
    url,
    finalUrl,
    nowMs: spec.nowMs ?? NOW_MS,
    redirects: (spec.redirects ?? [{}]).map((x) => exchange({ url, ...x })),
    probes,
    ...(spec.tls === undefined ? {} : { tls: spec.tls }),
    options: {
      method: spec.method ?? 'GET',
      ...(spec.origin === undefined ? {} : { origin: spec.origin }),
      ...(spec.jsonpParam === undefined ? {} : { jsonpParam: spec.jsonpParam }),
    },
  };
}
