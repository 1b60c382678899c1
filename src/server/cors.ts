// The CORS step: answers preflights, and puts CORS headers on every other response in scope before the
// answering handlers run, so they survive on 200, 304, 404, 405 and 500 alike (handlers merge Vary and
// keep headers set earlier). The decisions are src/http/cors.ts; this file only applies them.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type CorsHeader, compileCorsPolicy, decideCors } from '../http/cors.js';
import { globToRegExp } from '../http/glob.js';
import type { Step, StepContext } from './context.js';
import { addResponseHeader, addResponseVary } from './response-headers.js';
import { resolveRequestPath, targetPath } from './static/path.js';
import { appendVary } from './vary.js';

/** The resolved `cors` config section (src/config/cors.ts fills in the defaults). */
export interface CorsOptions {
  /** `*`, exact origins, subdomain patterns `https://*.example.com`, or `null`. */
  origins: string[];
  /** Access-Control-Allow-Credentials: true, origin echoed (never `*`). */
  credentials: boolean;
  /** Access-Control-Allow-Methods; a preflight asking for another method is denied. */
  methods: string[];
  /** Access-Control-Allow-Headers; a preflight asking for another (unsafelisted) header is denied. */
  headers: string[];
  /** Echo Access-Control-Request-Headers instead of `headers` (Authorization still needs naming). */
  reflectHeaders: boolean;
  /** Access-Control-Expose-Headers on non-preflight responses. */
  exposeHeaders: string[];
  /** Access-Control-Max-Age of preflight answers. */
  maxAgeSec: number;
  /** 200 (with Content-Length: 0) or 204. */
  preflightStatus: 200 | 204;
  /** Path globs where CORS applies; undefined: every path. */
  paths?: string[] | undefined;
}

/** A path predicate from globs, matched against the decoded, dot-normalised path the handlers serve. */
function compileScope(globs: readonly string[] | undefined): ((url: string) => boolean) | undefined {
  if (globs === undefined) return undefined;
  const res = globs.map(globToRegExp);
  return (url) => {
    const raw = targetPath(url);
    if (raw === null) return false;
    const r = resolveRequestPath(raw, true);
    if (r.kind !== 'ok') return false;
    const path = r.trailingSlash ? `${r.path}/` : r.path;
    return res.some((re) => re.test(path));
  };
}

function setAll(res: ServerResponse, headers: readonly CorsHeader[]): void {
  for (let i = 0; i < headers.length; i++) {
    const h = headers[i]!;
    res.setHeader(h[0], h[1]);
  }
}

export function createCors(opts: CorsOptions | undefined, _ctx: StepContext): Step | undefined {
  if (opts === undefined) return undefined;
  const policy = compileCorsPolicy(opts);
  const inScope = compileScope(opts.paths);

  return (req: IncomingMessage, res: ServerResponse): boolean => {
    if (inScope !== undefined && !inScope(req.url!)) return false;
    const h = req.headers;
    const method = req.method!;
    const options = method === 'OPTIONS';
    const d = decideCors(policy, {
      method,
      origin: h.origin,
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
        if (d.vary !== undefined) appendVary(res, d.vary);
        if (d.status === 200) res.setHeader('Content-Length', '0');
        res.statusCode = d.status;
        res.end();
        return true;
    }
  };
}
