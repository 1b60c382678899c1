// The CORS step: answers preflights, and puts CORS headers on every other response in scope before the
// answering handlers run, so they survive on 200, 304, 404, 405 and 500 alike (handlers merge Vary and
// keep headers set earlier). The decisions are src/http/cors.ts; this file only applies them.
import {
  type CorsHeader,
  type CorsScope,
  compileCorsPolicy,
  corsApplies,
  decideCors,
  isPreflightShaped,
} from '../../http/cors.js';
import { globToRegExp } from '../../http/glob.js';
import { type RequestContext, resolvedPath, type Step } from '../core/context.js';
import type { ExchangeRequest, ResponseSink } from '../core/exchange.js';
import type { Feature } from '../core/feature.js';
import { addResponseHeader, addResponseVary } from '../core/response-headers.js';
import type { StepContext } from '../node/types.js';

/** The resolved `cors` config section (src/config/cors.ts fills in the defaults). */
export interface CorsOptions {
  /** `*`, exact origins, subdomain patterns `https://*.example.com`, or `null`. */
  origins: string[];
  /** Access-Control-Allow-Credentials: true, origin echoed (never `*`). */
  credentials: boolean;
  /** Access-Control-Allow-Methods; a preflight asking for another method is denied. */
  methods: string[];
  /** Access-Control-Allow-Headers; a preflight asking for another (unsafelisted) header is denied.
   *  Absent: not restricted (corsHeaderRule in src/http/cors.ts). */
  headers?: string[] | undefined;
  /** Echo Access-Control-Request-Headers. Absent: true without `headers`, false with it. */
  reflectHeaders?: boolean | undefined;
  /** Access-Control-Expose-Headers on non-preflight responses. */
  exposeHeaders: string[];
  /** Access-Control-Max-Age of preflight answers. */
  maxAgeSec: number;
  /** 200 (with Content-Length: 0) or 204. */
  preflightStatus: 200 | 204;
  /** Path globs where CORS applies; undefined: every path. */
  paths?: string[] | undefined;
}

/** The path CORS `paths` are matched against: decoded and dot-normalised as the handlers serve it
 *  (a trailing slash kept), or null when the target cannot be resolved. */
function corsPath(cx: RequestContext): string | null {
  const r = resolvedPath(cx);
  if (r?.kind !== 'ok') return null;
  return r.trailingSlash ? `${r.path}/` : r.path;
}

/** Does CORS apply to a request target? Built once from the `cors` section (undefined: never). */
export function compileCorsApplies(opts: CorsOptions | undefined): (cx: RequestContext) => boolean {
  if (opts === undefined) return () => false;
  const scope: CorsScope = { paths: opts.paths?.map(globToRegExp) };
  if (scope.paths === undefined) return () => true;
  return (cx) => corsApplies(scope, corsPath(cx));
}

/**
 * Is this request a CORS preflight that the CORS step answers (Fetch §3.2.2 shape, on a path CORS
 * applies to)? Auth lets exactly these pass; any other OPTIONS is an ordinary request to it.
 */
export function compileCorsPreflight(
  opts: CorsOptions | undefined,
): (req: ExchangeRequest, cx: RequestContext) => boolean {
  const applies = compileCorsApplies(opts);
  return (req, cx) =>
    isPreflightShaped(
      req.method!,
      req.headers.origin as string | undefined,
      req.headers['access-control-request-method'] as string | undefined,
    ) && applies(cx);
}

function setAll(res: ResponseSink, headers: readonly CorsHeader[]): void {
  for (let i = 0; i < headers.length; i++) {
    const h = headers[i]!;
    res.setHeader(h[0], h[1]);
  }
}

export function createCors(opts: CorsOptions | undefined, _ctx: StepContext): Step | undefined {
  if (opts === undefined) return undefined;
  const policy = compileCorsPolicy(opts);
  const applies = compileCorsApplies(opts);

  return (req: ExchangeRequest, res: ResponseSink, cx: RequestContext): boolean => {
    if (!applies(cx)) return false;
    const h = req.headers;
    const method = req.method!;
    const options = method === 'OPTIONS';
    const d = decideCors(policy, {
      method,
      origin: h.origin as string | undefined,
      acrm: options ? (h['access-control-request-method'] as string | undefined) : undefined,
      acrh: options ? (h['access-control-request-headers'] as string | undefined) : undefined,
    });
    switch (d.kind) {
      case 'none':
      case 'simple':
        // Added to the coming head, not via setHeader (keeps Node's fast header path).
        for (let i = 0; i < d.headers.length; i++) addResponseHeader(res, d.headers[i]![0], d.headers[i]![1]);
        if (d.vary !== undefined) addResponseVary(res, d.vary);
        return false;
      case 'denied':
        if (d.vary !== undefined) addResponseVary(res, d.vary);
        return false;
      case 'preflight':
      case 'preflight-denied':
        // Fetch §3.2.3: an ok status and no body. RFC 9110 §8.6: no Content-Length on a 204.
        if (d.kind === 'preflight') setAll(res, d.headers);
        // Pending, like the other answers: merged at writeHead with any Vary set earlier, a header
        // rule's included (RFC 9110 §12.5.5), which an immediate setHeader would shadow.
        if (d.vary !== undefined) addResponseVary(res, d.vary);
        if (d.status === 200) res.setHeader('Content-Length', '0');
        res.statusCode = d.status;
        res.end();
        return true;
    }
  };
}

/** CORS as a feature (core/feature.ts): a gate step, off without a `cors` section. */
export function create(options: CorsOptions | undefined, kernel: StepContext): Feature | undefined {
  const gate = createCors(options, kernel);
  return gate && { gate };
}
