// Redirects: configured rules (ordered, first match wins) and canonical paths (trailing slash,
// index.html); HTTP -> HTTPS for a plain listener is https-redirect.ts. The decisions live in src/http/redirect.ts;
// here they meet the request and the response.

import {
  applyRedirect,
  type CanonicalOptions,
  canonicalPath,
  compileRedirect,
  encodeUnsafe,
  RedirectRuleError,
  type RedirectStatus,
} from '../../http/redirect.js';
import { queryOf } from '../../http/request-path.js';
import { pathOf, type Step } from '../core/context.js';
import type { ResponseSink } from '../core/exchange.js';
import type { Feature } from '../core/feature.js';
import { writeHeadMerged } from '../core/vary.js';
import type { FileLookup, ViewedResource } from '../files/view.js';
import type { StepContext } from '../node/types.js';

export interface RedirectRule {
  /** `/old`, `/blog/:slug`, `/docs/*`, `/files/:rest*`, or an anchored regex `^/v(\d+)/(.*)$`. */
  from: string;
  /** A path (`/new/:slug`) or a literal absolute URL (`https://example.com/*`); `:name`, `*`, `$1`. */
  to: string;
  /** Default 308. */
  status?: RedirectStatus | undefined;
  /** Append the request's query (default true). */
  keepQuery?: boolean | undefined;
  /** Cache-Control of the redirect; default none. */
  cacheControl?: string | undefined;
}

/**
 * Sends a redirect with an empty body. Caching: without `cacheControl` nothing is added, so 301 and
 * 308 may be cached heuristically (RFC 9111 §4.2.2; browsers keep them long) and 302/307 are not
 * stored without explicit freshness (they are not heuristically cacheable).
 */
export function sendRedirect(
  res: ResponseSink,
  status: number,
  location: string,
  cacheControl: string | undefined,
): void {
  const h: Record<string, string> = { Location: location, 'Content-Length': '0' };
  if (cacheControl !== undefined) h['Cache-Control'] = cacheControl;
  writeHeadMerged(res, status, h);
  res.end();
}

/** Configured redirects. Every method is redirected (307/308 keep it, 301/302 let browsers GET). */
export function createRedirects(rules: readonly RedirectRule[], _ctx: StepContext): Step | undefined {
  if (rules.length === 0) return undefined;
  const compiled = rules.map((r, i) => {
    try {
      return { rule: compileRedirect(r), cacheControl: r.cacheControl };
    } catch (err) {
      if (err instanceof RedirectRuleError) throw new Error(`redirects[${i}].${err.field}: ${err.message}`);
      throw err;
    }
  });
  return (req, res, cx) => {
    const url = req.url!;
    const rawPath = pathOf(cx);
    if (rawPath === null) return false;
    const query = queryOf(url);
    for (const c of compiled) {
      const location = applyRedirect(c.rule, rawPath, query);
      if (location === null) continue;
      // A rule that sends the request to itself would loop forever: it does not apply.
      if (location === (query ? `${rawPath}?${query}` : rawPath)) continue;
      sendRedirect(res, c.rule.status, location, c.cacheControl);
      return true;
    }
    return false;
  };
}

export interface CanonicalStepOptions extends CanonicalOptions {
  /** Redirect status (default 301, like the static handler's directory redirect). */
  status?: 301 | 308 | undefined;
}

/**
 * Canonical URLs for GET and HEAD: `/dir/index.html` -> `/dir/` (with `indexHtml`) and the
 * trailing slash rule, in one 301 (query kept, `Cache-Control: no-cache` like the static handler's
 * directory redirect, so a later config change is not stuck in browser caches).
 *
 * With `files` (the static handler's view of its root) the disk is consulted so the step never fights the
 * static handler: `add` leaves existing files without an extension alone (`/LICENSE`), and `remove`
 * keeps the slash of directories (the static handler redirects `/dir` to `/dir/`; serving a
 * directory without its slash needs a change there). Without `files`, `add` treats a last segment
 * with a `.` as a file and everything else as a directory.
 */
export function createCanonical(o: CanonicalStepOptions, files?: FileLookup): Step | undefined {
  if (o.trailingSlash === 'ignore' && !o.indexHtml) return undefined;
  const status = o.status ?? 301;

  const lookup = (rawPath: string): ViewedResource | Promise<ViewedResource> =>
    files!.peek(rawPath) ?? files!.get(rawPath);

  /** The final target, after checking the disk; null when the request is to stay where it is. */
  const confirm = (rawPath: string, target: string): string | null | Promise<string | null> => {
    if (files === undefined) return target;
    if (o.trailingSlash === 'add' && target === `${rawPath}/`) {
      const r = lookup(rawPath);
      const keep = (x: ViewedResource) => (x.kind === 'file' ? null : target);
      return r instanceof Promise ? r.then(keep) : keep(r);
    }
    if (o.trailingSlash === 'remove' && target !== '/') {
      const r = lookup(target);
      const fix = (x: ViewedResource) => {
        if (x.kind !== 'redirect') return target;
        const slashed = `${target}/`;
        return slashed === rawPath ? null : slashed;
      };
      return r instanceof Promise ? r.then(fix) : fix(r);
    }
    return target;
  };

  return (req, res, cx) => {
    const method = req.method;
    if (method !== 'GET' && method !== 'HEAD') return false;
    const url = req.url!;
    const rawPath = pathOf(cx);
    if (rawPath === null) return false;
    const target = canonicalPath(rawPath, o);
    if (target === null) return false;
    const go = (t: string | null): boolean => {
      if (t === null) return false;
      const query = queryOf(url);
      sendRedirect(res, status, query ? `${t}?${encodeUnsafe(query)}` : t, 'no-cache');
      return true;
    };
    const t = confirm(rawPath, target);
    return t instanceof Promise ? t.then(go) : go(t);
  };
}

/** What the redirects feature is made from. */
export interface RedirectsFeatureOptions {
  readonly rules: readonly RedirectRule[];
  readonly canonical: CanonicalStepOptions;
  /** The static files' view of the root, so canonical redirects never fight the static handler. */
  readonly files?: FileLookup | undefined;
}

/**
 * Redirects as a feature (core/feature.ts): the rules are a gate step (every method, before the
 * answering steps); canonical paths answer GET and HEAD among the answering steps, before routes.
 */
export function create(options: RedirectsFeatureOptions, kernel: StepContext): Feature | undefined {
  const gate = createRedirects(options.rules, kernel);
  const answer = createCanonical(options.canonical, options.files);
  return gate || answer ? { gate, answer } : undefined;
}
