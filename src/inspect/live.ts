// The live part of `gatehouse check`: real requests (node:http, node:https, node:http2 when ALPN
// agrees on h2), the redirect chain followed by hand, then the probes of ProbeName, all recorded.
// Nothing here judges; the checks read the Recording.
import { createHash, randomBytes, X509Certificate } from 'node:crypto';
import dns from 'node:dns';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import tls from 'node:tls';
import { existingDevCaPath } from '../certs/dev-ca.js';
import { inspectLive, parsePemCertificates } from '../certs/inspect.js';
import { type AddressState, admitAddress, classifyAddress, noteAddress } from './address-policy.js';
import { assetTargets } from './assets.js';
import { field } from './exchange.js';
import {
  type AssetProbe,
  type Exchange,
  type FieldLine,
  HOSTILE_CALLBACK,
  type ProbeName,
  type RecordedResponse,
  type Recording,
  STALE_IF_RANGE,
  type TlsRecord,
  WRONG_ETAG,
} from './types.js';

export interface CheckOptions {
  /** `--origin`: sends the CORS probes with this Origin. */
  origin?: string;
  /** `--method`: the primary request's method (default GET). */
  method?: string;
  /** `--header 'Name: value'`: sent with every request to the origin of the URL given (never to another origin). */
  headers?: Readonly<Record<string, string>> | readonly (readonly [string, string])[];
  /** Per request: connect, head and body (default 10000). */
  timeoutMs?: number;
  /** Skip certificate verification (the certificate is still checked and reported). */
  insecure?: boolean;
  /** The JSONP callback parameter, when the URL does not carry callback, cb or jsonp. */
  jsonp?: string;
  /** Extra trusted CA certificates (PEM), beside the system store. */
  ca?: string;
  /** The pause before the repeat probe (default 1000, so a Date-derived ETag shows); tests shorten it. */
  repeatDelayMs?: number;
  /**
   * `--allow-private`: let redirects lead from a public address to a loopback, private or link-local
   * one (or from one of those to another kind). Off by default: see address-policy.ts.
   */
  allowPrivate?: boolean;
  /** Resolves host names (default dns.lookup); every address it gives is checked before connecting. */
  lookup?: LookupFunction;
  /** Where Gatehouse's development CA is looked for (default: certs/dev-ca.ts devDataDir()); tests set it. */
  dataDir?: string;
}

export const DEFAULT_TIMEOUT_MS = 10_000;
export const MAX_REDIRECTS = 10;
export const MAX_BODY_BYTES = 8 * 1024 * 1024;
export const SAMPLE_BYTES = 4096;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const JSONP_PARAMS = ['callback', 'cb', 'jsonp'];
const BASE_HEADERS: readonly FieldLine[] = [
  ['accept', '*/*'],
  ['accept-encoding', 'gzip, deflate, br'],
  ['user-agent', 'gatehouse-check'],
];

/** The check could not start: the URL or an option is not one it can use. */
export class CheckUsageError extends Error {
  readonly code = 'GATEHOUSE_CHECK_USAGE';
}

/** Hop-by-hop and HTTP/2-forbidden names a user may not set (RFC 9110 §7.6.1, RFC 9113 §8.2.2). */
const FORBIDDEN_USER_HEADERS = new Set([
  'host',
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'content-length',
]);

/** Validates `--header`s: field names are tokens, values have no CR/LF/NUL (RFC 9110 §5.1, §5.5). */
export function userHeaders(h: CheckOptions['headers']): FieldLine[] {
  const pairs = h === undefined ? [] : Array.isArray(h) ? h : Object.entries(h);
  const out: FieldLine[] = [];
  for (const [name, value] of pairs as [string, string][]) {
    const lower = name.trim().toLowerCase();
    if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(lower)) throw new CheckUsageError(`--header: bad name ${name}`);
    if (FORBIDDEN_USER_HEADERS.has(lower)) throw new CheckUsageError(`--header: ${lower} cannot be set`);
    if (/[\r\n\0]/.test(value)) throw new CheckUsageError(`--header: ${lower}: control character in value`);
    out.push([lower, value.trim()]);
  }
  return out;
}

/** Defaults, then the user's, then the probe's own: a later name replaces every earlier line of it. */
function mergeHeaders(...layers: readonly (readonly FieldLine[])[]): FieldLine[] {
  let out: FieldLine[] = [];
  for (const layer of layers) {
    const names = new Set(layer.map(([n]) => n));
    out = [...out.filter(([n]) => !names.has(n)), ...layer];
  }
  return out;
}

/** http: and https: only, no fragment (never sent, RFC 9110 §4.2.4). */
export function parseTargetUrl(raw: string): URL {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new CheckUsageError(`not a URL: ${raw}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new CheckUsageError(`only http:// and https:// URLs: ${raw}`);
  }
  if (u.username !== '' || u.password !== '') {
    throw new CheckUsageError('credentials in the URL: give them with --header instead');
  }
  u.hash = '';
  return u;
}

interface SendSpec {
  method: string;
  url: URL;
  headers: readonly FieldLine[];
}

const REFUSED_ADDRESS = 'GATEHOUSE_CHECK_REFUSED_ADDRESS';

/**
 * Admits each address a check connects to (address-policy.ts). Host names go through `lookup`, the
 * hook the socket connects with, so the address judged is the address connected to: a name that
 * resolves to a public address for one lookup and a private one for the next (DNS rebinding) is
 * judged each time. IP literals, which Node connects to without a lookup, are judged by `literal`.
 */
class AddressGuard {
  private readonly state: AddressState = { start: undefined, publicSeen: false };

  constructor(
    private readonly allowPrivate: boolean,
    private readonly resolve: LookupFunction,
  ) {}

  /** undefined when admitted (and noted), else why not. */
  literal(address: string): string | undefined {
    const cls = classifyAddress(address);
    const a = admitAddress(this.state, cls, this.allowPrivate);
    if (a.kind === 'refuse') {
      return `refused to connect to ${address}: ${a.reason} (a guard against server-side request forgery; --allow-private lifts it)`;
    }
    noteAddress(this.state, cls);
    return undefined;
  }

  readonly lookup: LookupFunction = (hostname, options, callback) => {
    this.resolve(hostname, { ...options, all: true }, (err, found, family) => {
      if (err !== null) return callback(err, '', undefined);
      const all = Array.isArray(found) ? found : [{ address: found, family: family ?? 4 }];
      const admitted: dns.LookupAddress[] = [];
      let refusal: string | undefined;
      for (const a of all) {
        const why = this.literal(a.address);
        if (why === undefined) admitted.push(a);
        else refusal ??= `${hostname}: ${why}`;
      }
      const first = admitted[0];
      if (first === undefined) {
        const e: NodeJS.ErrnoException = new Error(refusal ?? `${hostname}: no address`);
        e.code = REFUSED_ADDRESS;
        return callback(e, '', undefined);
      }
      if (options.all === true) callback(null, admitted);
      else callback(null, first.address, first.family);
    });
  };
}

/** The connections of one check: one HTTP/2 session or one keep-alive agent per origin. */
class Connections {
  private readonly h2 = new Map<string, http2.ClientHttp2Session>();
  private readonly alpn = new Map<string, 'h2' | 'http/1.1'>();
  private readonly httpAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  private readonly httpsAgent: https.Agent;

  constructor(
    private readonly o: { timeoutMs: number; insecure: boolean; ca: string | undefined },
    readonly guard: AddressGuard,
  ) {
    this.httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 1, ...this.tlsOptions() });
  }

  private tlsOptions(): tls.ConnectionOptions {
    // --ca adds to the system store rather than replacing it (a staging CA beside public sites).
    const ca = this.o.ca === undefined ? undefined : [...tls.rootCertificates, this.o.ca];
    return { rejectUnauthorized: !this.o.insecure, ...(ca === undefined ? {} : { ca }) };
  }

  close(): void {
    for (const s of this.h2.values()) s.destroy();
    this.h2.clear();
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }

  /** Sends one request and reads its whole body; never throws (a failure is the Exchange's `error`). */
  async send(spec: SendSpec): Promise<Exchange> {
    const sentAtMs = Date.now();
    const request = { method: spec.method, url: spec.url.href, headers: spec.headers };
    const deadline = new AbortController();
    const timer = setTimeout(
      () => deadline.abort(new Error(`timed out after ${this.o.timeoutMs} ms`)),
      this.o.timeoutMs,
    );
    try {
      const host = hostOf(spec.url);
      const refused = isIP(host) === 0 ? undefined : this.guard.literal(host);
      if (refused !== undefined) return { request, error: refused, sentAtMs, receivedAtMs: Date.now() };
      const got =
        spec.url.protocol === 'https:' && (await this.protocolOf(spec.url, deadline.signal)) === 'h2'
          ? await this.sendH2(spec, deadline.signal)
          : await this.sendH1(spec, deadline.signal);
      return {
        request,
        response: got.response,
        ...(got.error === undefined ? {} : { error: got.error }),
        sentAtMs,
        receivedAtMs: got.receivedAtMs,
      };
    } catch (err) {
      return { request, error: describeError(err), sentAtMs, receivedAtMs: Date.now() };
    } finally {
      clearTimeout(timer);
    }
  }

  /** ALPN (RFC 7301) on a first TLS connection per origin; an h2 answer keeps that connection as the session. */
  private async protocolOf(url: URL, signal: AbortSignal): Promise<'h2' | 'http/1.1'> {
    const known = this.alpn.get(url.origin);
    if (known !== undefined && (known === 'http/1.1' || this.h2.has(url.origin))) return known;
    const host = hostOf(url);
    const socket = await new Promise<tls.TLSSocket>((resolve, reject) => {
      const s = tls.connect({
        host,
        lookup: this.guard.lookup,
        port: Number(url.port || 443),
        // RFC 6066 §3: SNI carries host names only, never an IP literal.
        ...(isIP(host) === 0 ? { servername: host } : {}),
        ALPNProtocols: ['h2', 'http/1.1'],
        ...this.tlsOptions(),
      });
      const onAbort = () => s.destroy(signal.reason as Error);
      signal.addEventListener('abort', onAbort, { once: true });
      s.once('error', (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      });
      s.once('secureConnect', () => {
        signal.removeEventListener('abort', onAbort);
        resolve(s);
      });
    });
    if (socket.alpnProtocol !== 'h2') {
      socket.destroy();
      this.alpn.set(url.origin, 'http/1.1');
      return 'http/1.1';
    }
    const session = http2.connect(url.origin, { createConnection: () => socket });
    session.on('error', () => undefined); // each stream reports its own failure
    session.once('close', () => {
      if (this.h2.get(url.origin) === session) this.h2.delete(url.origin);
    });
    this.h2.set(url.origin, session);
    this.alpn.set(url.origin, 'h2');
    return 'h2';
  }

  private sendH1(spec: SendSpec, signal: AbortSignal): Promise<Received> {
    const isHttps = spec.url.protocol === 'https:';
    const headers: Record<string, string | string[]> = {};
    for (const [n, v] of spec.headers) {
      const prev = headers[n];
      headers[n] = prev === undefined ? v : [...(Array.isArray(prev) ? prev : [prev]), v];
    }
    const options: http.RequestOptions = {
      method: spec.method,
      host: spec.url.hostname.replace(/^\[|\]$/g, ''),
      port: spec.url.port || (isHttps ? 443 : 80),
      path: `${spec.url.pathname}${spec.url.search}`,
      headers,
      agent: isHttps ? this.httpsAgent : this.httpAgent,
      lookup: this.guard.lookup,
      signal,
    };
    return new Promise((resolve, reject) => {
      let answered = false;
      const req = (isHttps ? https : http).request(options, (res) => {
        answered = true;
        const receivedAtMs = Date.now();
        const lines: FieldLine[] = [];
        for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
          lines.push([(res.rawHeaders[i] as string).toLowerCase(), res.rawHeaders[i + 1] as string]);
        }
        readBody(res, signal, (body) =>
          resolve({
            response: { status: res.statusCode ?? 0, httpVersion: res.httpVersion, headers: lines, ...body },
            receivedAtMs,
            ...(body.error === undefined ? {} : { error: body.error }),
          }),
        );
      });
      // After the head, the body reader reports a failure (with what was read).
      req.on('error', (e) => {
        if (!answered) reject(e);
      });
      req.end();
    });
  }

  private sendH2(spec: SendSpec, signal: AbortSignal): Promise<Received> {
    const session = this.h2.get(spec.url.origin) as http2.ClientHttp2Session;
    const headers: http2.OutgoingHttpHeaders = {
      ':method': spec.method,
      ':path': `${spec.url.pathname}${spec.url.search}`,
    };
    for (const [n, v] of spec.headers) {
      const prev = headers[n];
      headers[n] = prev === undefined ? v : [...(Array.isArray(prev) ? prev : [String(prev)]), v];
    }
    return new Promise((resolve, reject) => {
      const stream = session.request(headers, { endStream: true, signal });
      let answered = false;
      stream.on('error', (e) => {
        if (!answered) reject(e);
      });
      stream.once('response', (h) => {
        answered = true;
        const receivedAtMs = Date.now();
        const lines: FieldLine[] = [];
        for (const [n, v] of Object.entries(h)) {
          if (n.startsWith(':') || v === undefined) continue;
          for (const one of Array.isArray(v) ? v : [String(v)]) lines.push([n, one]);
        }
        readBody(stream, signal, (body) =>
          resolve({
            response: { status: Number(h[':status']), httpVersion: '2', headers: lines, ...body },
            receivedAtMs,
            ...(body.error === undefined ? {} : { error: body.error }),
          }),
        );
      });
    });
  }
}

interface Received {
  response: RecordedResponse;
  receivedAtMs: number;
  error?: string;
}

type Body = Pick<RecordedResponse, 'bodyBytes' | 'bodySha256' | 'bodySample'> & { error?: string };

/** Reads up to MAX_BODY_BYTES, hashing as it goes; a larger body is cut there (bodyBytes says how much was read). */
function readBody(
  stream: NodeJS.ReadableStream & { destroy(): void },
  signal: AbortSignal,
  done: (b: Body) => void,
): void {
  const hash = createHash('sha256');
  const sample: Buffer[] = [];
  let sampleBytes = 0;
  let bodyBytes = 0;
  let finished = false;
  const finish = (error?: string) => {
    if (finished) return;
    finished = true;
    done({
      bodyBytes,
      bodySha256: hash.digest('hex'),
      bodySample: Buffer.concat(sample).toString('utf8'),
      ...(error === undefined ? {} : { error }),
    });
  };
  stream.on('data', (chunk: Buffer) => {
    const take = chunk.subarray(0, Math.max(0, MAX_BODY_BYTES - bodyBytes));
    hash.update(take);
    bodyBytes += take.length;
    if (sampleBytes < SAMPLE_BYTES) {
      const s = take.subarray(0, SAMPLE_BYTES - sampleBytes);
      sample.push(s);
      sampleBytes += s.length;
    }
    if (bodyBytes >= MAX_BODY_BYTES && !finished) {
      finish();
      stream.destroy();
    }
  });
  // A deadline or a reset mid-body keeps what was read, with the reason.
  const cut = (e?: unknown) =>
    finish(
      `body: ${signal.aborted ? describeError(signal.reason) : e === undefined ? 'connection closed before the end' : describeError(e)}`,
    );
  stream.once('end', () => finish());
  stream.once('error', cut);
  stream.once('close', () => cut());
}

const ERRORS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'DNS: no such host',
  EAI_AGAIN: 'DNS: lookup failed (temporary)',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'certificate not trusted (self-signed); --insecure checks it anyway',
  SELF_SIGNED_CERT_IN_CHAIN: 'certificate not trusted (self-signed CA); --insecure checks it anyway',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'certificate not trusted (unknown issuer); --insecure checks it anyway',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'certificate not trusted (unknown issuer); --insecure checks it anyway',
  CERT_HAS_EXPIRED: 'certificate expired; --insecure checks it anyway',
  ERR_TLS_CERT_ALTNAME_INVALID: 'certificate does not name the host; --insecure checks it anyway',
};

/** The host of a URL as a socket takes it: an IPv6 literal without its brackets. */
function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/** One plain line: a known code's meaning, else the code or message. */
function describeError(err: unknown): string {
  const e = err as NodeJS.ErrnoException & { reason?: unknown };
  if (e?.name === 'AbortError' && e.cause instanceof Error) return e.cause.message;
  if (e?.code === REFUSED_ADDRESS) return e.message;
  const known = e?.code === undefined ? undefined : ERRORS[e.code];
  if (known !== undefined) return known;
  const msg = e instanceof Error ? e.message : String(err);
  return e?.code !== undefined && !msg.includes(e.code) ? `${e.code}: ${msg}` : msg;
}

/** The Location target (RFC 9110 §10.2.2, resolved against the request URL), or why there is none. */
function nextHop(
  from: URL,
  x: Exchange,
): { kind: 'done' } | { kind: 'hop'; url: URL } | { kind: 'bad'; why: string } {
  const r = x.response;
  if (r === undefined || !REDIRECT_STATUSES.has(r.status)) return { kind: 'done' };
  const location = field(r.headers, 'location');
  if (location === undefined) return { kind: 'done' };
  let to: URL;
  try {
    to = new URL(location, from);
  } catch {
    return { kind: 'bad', why: `invalid Location: ${location}` };
  }
  if (to.protocol !== 'http:' && to.protocol !== 'https:') {
    return { kind: 'bad', why: `Location to an unsupported scheme: ${to.protocol}` };
  }
  to.hash = '';
  to.username = '';
  to.password = '';
  return { kind: 'hop', url: to };
}

/** An Exchange that was never sent: the chain stops here and says why. */
function stopped(url: string, why: string): Exchange {
  const nowMs = Date.now();
  return { request: { method: 'GET', url, headers: [] }, error: why, sentAtMs: nowMs, receivedAtMs: nowMs };
}

/** The parameter a JSONP probe sets: --jsonp, else the first of callback, cb, jsonp the URL carries. */
export function jsonpParamOf(url: URL, given: string | undefined): string | undefined {
  if (given !== undefined && given !== '') return given;
  return JSONP_PARAMS.find((p) => url.searchParams.has(p));
}

interface Plan {
  name: ProbeName;
  method?: string;
  headers?: FieldLine[];
  url?: URL;
}

/** The probes after primary and repeat, as ProbeName documents; each needs what it sends. */
function planProbes(
  finalUrl: URL,
  primary: RecordedResponse,
  o: CheckOptions,
  jsonp: string | undefined,
): Plan[] {
  const plans: Plan[] = [];
  const etag = field(primary.headers, 'etag');
  const lastModified = field(primary.headers, 'last-modified');
  if (etag !== undefined) {
    plans.push({ name: 'inm-match', headers: [['if-none-match', etag]] });
    plans.push({ name: 'inm-wrong', headers: [['if-none-match', WRONG_ETAG]] });
  }
  if (lastModified !== undefined) plans.push({ name: 'ims', headers: [['if-modified-since', lastModified]] });
  plans.push({ name: 'coding-identity', headers: [['accept-encoding', 'identity']] });
  plans.push({ name: 'coding-gzip', headers: [['accept-encoding', 'gzip']] });
  plans.push({ name: 'coding-br', headers: [['accept-encoding', 'br']] });
  plans.push({
    name: 'range',
    headers: [
      ['accept-encoding', 'identity'],
      ['range', 'bytes=0-9'],
    ],
  });
  if (o.origin !== undefined) {
    const random = `https://${randomBytes(6).toString('hex')}.example`;
    plans.push({ name: 'cors-simple', headers: [['origin', o.origin]] });
    plans.push({ name: 'cors-random', headers: [['origin', random]] });
    plans.push({
      name: 'cors-preflight',
      method: 'OPTIONS',
      headers: [
        ['origin', o.origin],
        ['access-control-request-method', 'POST'],
        ['access-control-request-headers', 'authorization,content-type'],
      ],
    });
  }
  if (jsonp !== undefined) {
    const url = new URL(finalUrl);
    url.searchParams.set(jsonp, HOSTILE_CALLBACK);
    plans.push({ name: 'jsonp-hostile', url });
  }
  return plans;
}

/** Certificate and handshake facts of the final URL, from the code `gatehouse cert` runs. */
async function tlsRecord(
  url: URL,
  o: CheckOptions,
  timeoutMs: number,
  lookup: LookupFunction,
): Promise<TlsRecord | undefined> {
  if (url.protocol !== 'https:') return undefined;
  const host = hostOf(url);
  const ca = o.ca === undefined ? undefined : `${tls.rootCertificates.join('\n')}\n${o.ca}`;
  const result = await inspectLive(
    { host, port: Number(url.port || 443), timeoutMs, lookup },
    { caPem: ca, warnDays: 21, nowMs: Date.now() },
  );
  if (result.kind === 'error') return undefined;
  const r = result.report;
  return {
    protocol: r.protocol ?? 'unknown',
    cipher: r.cipher ?? 'unknown',
    alpn: r.alpn ?? false,
    certificate: {
      subject: r.subject,
      issuer: r.issuer,
      san: r.san,
      validFrom: r.validFrom,
      validTo: r.validTo,
      daysLeft: r.daysLeft,
      checks: {
        trusted: r.checks.trusted,
        timeValid: r.checks.timeValid,
        hostnameMatches: r.checks.hostnameMatches !== false,
        keyStrength: r.checks.keyStrength,
      },
      weakKeys: r.failures.filter((f) => f.startsWith('keyStrength: ')).map((f) => f.slice(13)),
      warnings: r.warnings,
    },
  };
}

type HeadersFor = (u: URL, own?: readonly FieldLine[]) => FieldLine[];

/** Follows the chain from `start` (RFC 9110 §15.4): every hop recorded, a repeat or hop 11 stops it. */
async function followRedirects(
  conns: Connections,
  start: URL,
  headersFor: HeadersFor,
): Promise<{ redirects: Exchange[]; final: URL | undefined; last: URL }> {
  const redirects: Exchange[] = [];
  const seen = new Set<string>();
  let current = start;
  for (;;) {
    if (seen.has(current.href)) {
      redirects.push(stopped(current.href, `redirect loop: ${current.href} was already requested`));
      return { redirects, final: undefined, last: current };
    }
    if (redirects.length > MAX_REDIRECTS) {
      redirects.push(stopped(current.href, `more than ${MAX_REDIRECTS} redirects`));
      return { redirects, final: undefined, last: current };
    }
    seen.add(current.href);
    const x = await conns.send({ method: 'GET', url: current, headers: headersFor(current) });
    redirects.push(x);
    if (x.response === undefined) return { redirects, final: undefined, last: current };
    const next = nextHop(current, x);
    if (next.kind === 'done') return { redirects, final: current, last: current };
    if (next.kind === 'bad') {
      redirects.push(stopped(current.href, next.why));
      return { redirects, final: undefined, last: current };
    }
    current = next.url;
  }
}

/** Primary, the planned probes, If-Range (it needs coding-identity's ETag), then the repeat. */
async function sendProbes(
  conns: Connections,
  target: URL,
  options: CheckOptions & { method: string },
  jsonp: string | undefined,
  headersFor: HeadersFor,
): Promise<Recording['probes']> {
  const probes: Recording['probes'] = {};
  const get = (own: readonly FieldLine[] = []) =>
    conns.send({ method: 'GET', url: target, headers: headersFor(target, own) });
  probes.primary = await conns.send({ method: options.method, url: target, headers: headersFor(target) });
  const primary = probes.primary.response;
  if (primary === undefined) return probes;
  const pause = new Promise((r) => setTimeout(r, options.repeatDelayMs ?? 1000));
  for (const p of planProbes(target, primary, options, jsonp)) {
    const u = p.url ?? target;
    probes[p.name] = await conns.send({
      method: p.method ?? 'GET',
      url: u,
      headers: headersFor(u, p.headers),
    });
  }
  const range: FieldLine[] = [
    ['accept-encoding', 'identity'],
    ['range', 'bytes=0-9'],
  ];
  const ifRangeTag = field(probes['coding-identity']?.response?.headers ?? [], 'etag');
  if (ifRangeTag !== undefined) probes['if-range-match'] = await get([...range, ['if-range', ifRangeTag]]);
  probes['if-range-mismatch'] = await get([...range, ['if-range', STALE_IF_RANGE]]);
  await pause;
  probes.repeat = await get();
  return probes;
}

/** The SPA asset probes (assets.ts): plain GETs, one after another. */
async function sendAssetProbes(
  conns: Connections,
  target: URL,
  probes: Recording['probes'],
  headersFor: HeadersFor,
): Promise<AssetProbe[]> {
  const primary = probes.primary?.response;
  if (primary === undefined) return [];
  const out: AssetProbe[] = [];
  for (const t of assetTargets(target, primary, probes['coding-identity']?.response)) {
    out.push({
      kind: t.kind,
      exchange: await conns.send({ method: 'GET', url: t.url, headers: headersFor(t.url) }),
    });
  }
  return out;
}

const UNTRUSTED_HINT = '; --insecure checks it anyway';

/**
 * The development CA's path when it issued `url`'s certificate (verified against the CA's key, not
 * matched by name), else undefined. One extra handshake, only after a certificate was not trusted.
 */
async function devCaPathFor(
  url: URL,
  o: CheckOptions,
  timeoutMs: number,
  lookup: LookupFunction,
): Promise<string | undefined> {
  const path = await existingDevCaPath(o.dataDir).catch(() => undefined);
  if (path === undefined) return undefined;
  let ca: X509Certificate;
  try {
    ca = new X509Certificate(await readFile(path, 'utf8'));
  } catch {
    return undefined;
  }
  const host = hostOf(url);
  const raw = await new Promise<Buffer | undefined>((resolve) => {
    const s = tls.connect({
      host,
      port: Number(url.port || 443),
      lookup,
      ...(isIP(host) === 0 ? { servername: host } : {}),
      rejectUnauthorized: false,
      timeout: timeoutMs,
    });
    const done = (b: Buffer | undefined) => {
      s.destroy();
      resolve(b);
    };
    s.once('secureConnect', () => done(s.getPeerCertificate().raw));
    s.once('error', () => done(undefined));
    s.once('timeout', () => done(undefined));
  });
  if (raw === undefined) return undefined;
  try {
    const leaf = new X509Certificate(raw);
    return leaf.checkIssued(ca) && leaf.verify(ca.publicKey) ? path : undefined;
  } catch {
    return undefined;
  }
}

/** A dev-CA certificate: errors suggest `--ca <path>` instead of --insecure, and the TLS record names the path. */
async function noteDevCa(
  rec: Pick<Recording, 'redirects' | 'probes' | 'tls'>,
  o: CheckOptions,
  timeoutMs: number,
  lookup: LookupFunction,
): Promise<void> {
  const exchanges = [...rec.redirects, ...Object.values(rec.probes)];
  const notTrusted = (x: Exchange) =>
    x.error?.startsWith('certificate not trusted') === true && x.error.endsWith(UNTRUSTED_HINT);
  const failed = exchanges.find(notTrusted);
  const untrusted = rec.tls?.certificate?.checks.trusted === false;
  if (failed === undefined && !untrusted) return;
  const url = new URL(failed?.request.url ?? (rec.probes.primary as Exchange).request.url);
  if (url.protocol !== 'https:') return;
  const path = await devCaPathFor(url, o, timeoutMs, lookup);
  if (path === undefined) return;
  const hint = `; issued by Gatehouse's development CA: --ca ${path} trusts it`;
  for (const x of exchanges) {
    if (notTrusted(x)) {
      x.error = (x.error as string).slice(0, -UNTRUSTED_HINT.length) + hint;
    }
  }
  if (rec.tls?.certificate !== undefined) rec.tls.certificate.devCaPath = path;
}

/** `--origin`: scheme://host[:port] and nothing more (RFC 6454 §7). */
export function parseOrigin(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new CheckUsageError(`--origin: not an origin: ${raw}`);
  }
  if (u.origin === 'null' || raw.replace(/\/$/, '') !== u.origin) {
    throw new CheckUsageError(`--origin: expected scheme://host[:port], got ${raw}`);
  }
  return u.origin;
}

/** Validates the URL and options (no I/O): a CheckUsageError names the option at fault. */
export function checkOptions(url: string, options: CheckOptions) {
  const start = parseTargetUrl(url);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1) throw new CheckUsageError('--timeout: expected ms >= 1');
  const method = (options.method ?? 'GET').toUpperCase();
  // CONNECT asks for a tunnel, not a response to check (RFC 9110 §9.3.6).
  if (!/^[!#$%&'*+.^_`|~0-9A-Z-]+$/.test(method) || method === 'CONNECT') {
    throw new CheckUsageError(`--method: not a method to check: ${method}`);
  }
  const origin = options.origin === undefined ? undefined : parseOrigin(options.origin);
  const user = userHeaders(options.headers);
  const jsonp = jsonpParamOf(start, options.jsonp);
  if (jsonp !== undefined && !/^[\w.$-]{1,64}$/.test(jsonp)) {
    throw new CheckUsageError(`--jsonp: not a parameter name: ${jsonp}`);
  }
  if (options.ca !== undefined) {
    try {
      parsePemCertificates(options.ca, '--ca');
    } catch (err) {
      throw new CheckUsageError((err as Error).message);
    }
  }
  return { start, timeoutMs, method, origin, user, jsonp };
}

/**
 * Requests `url`, follows its redirects (at most MAX_REDIRECTS, a loop stops the chain) and sends the
 * probes to the final URL. A failed probe is recorded with its `error`; it never throws for the network.
 */
export async function record(url: string, options: CheckOptions = {}): Promise<Recording> {
  const { start, timeoutMs, method, origin, user, jsonp } = checkOptions(url, options);
  const guard = new AddressGuard(
    options.allowPrivate === true,
    options.lookup ?? (dns.lookup as LookupFunction),
  );
  const conns = new Connections({ timeoutMs, insecure: options.insecure === true, ca: options.ca }, guard);
  // The user's headers (credentials, often) go to the origin given only, as curl does without --location-trusted.
  const headersFor: HeadersFor = (u, own = []) =>
    mergeHeaders(BASE_HEADERS, u.origin === start.origin ? user : [], own);
  try {
    const { redirects, final, last } = await followRedirects(conns, start, headersFor);
    const probes =
      final === undefined
        ? {}
        : await sendProbes(conns, final, { ...options, origin, method }, jsonp, headersFor);
    const assets = final === undefined ? [] : await sendAssetProbes(conns, final, probes, headersFor);
    const tlsFacts =
      final !== undefined && probes.primary?.response !== undefined
        ? await tlsRecord(final, options, timeoutMs, guard.lookup)
        : undefined;
    const facts = { redirects, probes, ...(tlsFacts === undefined ? {} : { tls: tlsFacts }) };
    await noteDevCa(facts, options, timeoutMs, guard.lookup);
    return {
      url: start.href,
      finalUrl: (final ?? last).href,
      nowMs: Date.now(),
      redirects,
      probes,
      ...(tlsFacts === undefined ? {} : { tls: tlsFacts }),
      ...(assets.length === 0 ? {} : { assets }),
      options: {
        method,
        ...(user.length === 0 ? {} : { headerNames: user.map(([n]) => n) }),
        ...(origin === undefined ? {} : { origin }),
        ...(jsonp === undefined ? {} : { jsonpParam: jsonp }),
      },
    };
  } finally {
    conns.close();
  }
}
