// Config of JSONP paths and redirect rules. Rules compile here once, so a bad pattern is a config
// error naming its key (`redirects[2].from: ...`) instead of a failure while serving.
import { z } from 'zod';
import { globToRegExp } from '../http/glob.js';
import { compileRedirect, RedirectRuleError } from '../http/redirect.js';

/** A header value we write as given: visible ASCII, space and tab; never CR or LF. */
const headerValue = z.string().regex(/^[\t\x20-\x7e]+$/, 'must be visible ASCII (no line breaks)');

export const jsonpSchema = z
  .strictObject({
    paths: z
      .array(
        z
          .string()
          .regex(/^\//, 'must be a URL path glob starting with /')
          .superRefine((glob, ctx) => {
            try {
              globToRegExp(glob);
            } catch (err) {
              ctx.addIssue({ code: 'custom', message: `not a valid glob: ${(err as Error).message}` });
            }
          }),
      )
      .describe(
        'URL path globs where .json files (and routes) also answer as JSONP when the callback parameter is ' +
          'given, e.g. "/data/*.json". * within a segment, ** across segments. JSONP bypasses CORS and the ' +
          "browser sends the user's cookies: list only public, non-personal data.",
      ),
    callbackParam: z
      .string()
      .regex(/^[A-Za-z0-9_.~-]+$/, 'must be letters, digits, _ . ~ or -')
      .default('callback')
      .describe('Query parameter that names the callback (the first one counts when repeated).'),
    allowDottedCallbacks: z
      .boolean()
      .default(false)
      .describe(
        'Accept dotted callbacks such as ns.fn. Off by default: a dotted callback can reach ' +
          'opener.document... and drive another same-origin window (Same Origin Method Execution).',
      ),
  })
  .describe('JSONP, opt-in per path: GET/HEAD only, callback ^[A-Za-z_$][\\w$]*$ up to 64 characters.');

const redirectRuleSchema = z
  .strictObject({
    from: z
      .string()
      .min(1)
      .describe(
        'Path to match, as sent (percent-encoded, no query): "/old" exactly; "/blog/:slug" (one segment); ' +
          '"/docs/*" or "/docs/:rest*" (the rest, across segments); or an anchored regex "^/v(\\d+)/(.*)$" ' +
          'that must match the whole path.',
      ),
    to: z
      .string()
      .min(1)
      .describe(
        'Target: a path "/new/:slug" or an absolute "https://example.com/*". Substitutions :name, :splat ' +
          'and *, $1..$9 are percent-encoded (per segment, keeping /). Only a literal absolute URL changes host.',
      ),
    status: z
      .literal([301, 302, 307, 308])
      .default(308)
      .describe('308/301 permanent (cacheable by browsers), 307/302 temporary. 307/308 keep the method.'),
    keepQuery: z
      .boolean()
      .default(true)
      .describe("Append the request's query string (after any query in to)."),
    cacheControl: headerValue
      .optional()
      .describe('Cache-Control of the redirect; default: none (301/308 are then cached heuristically).'),
  })
  .superRefine((rule, ctx) => {
    if (typeof rule.from !== 'string' || typeof rule.to !== 'string') return;
    try {
      compileRedirect(rule);
    } catch (err) {
      if (!(err instanceof RedirectRuleError)) throw err;
      ctx.addIssue({ code: 'custom', path: [err.field], message: err.message });
    }
  })
  .describe('One redirect rule.');

export const redirectsSchema = z
  .array(redirectRuleSchema)
  .describe('Ordered redirect rules; the first rule whose from matches answers.');

export type JsonpConfig = z.output<typeof jsonpSchema>;
export type RedirectRuleConfig = z.output<typeof redirectRuleSchema>;
