// The `cors` section. Semantic checks (origin entries, `*` with credentials) come from src/http/cors.ts,
// so the config and compileCorsPolicy refuse the same things; issues name the key (cors.origins[1]).
import { z } from 'zod';
import { CORS_DEFAULTS, corsOptionIssues } from '../http/cors.js';

export const corsSchema = z
  .strictObject({
    origins: z
      .array(z.string().min(1))
      .min(1)
      .describe(
        'Allowed origins: "*" (any origin, not with credentials), exact origins ("https://app.example.com", ' +
          'normalised: lowercase, default port dropped), subdomain patterns ("https://*.example.com": ' +
          'subdomains only, not the apex), or "null" (opaque origins such as sandboxed frames; any page can ' +
          'produce one, so list it only for public data).',
      ),
    credentials: z
      .boolean()
      .default(CORS_DEFAULTS.credentials)
      .describe(
        'Allow cookies and HTTP auth: sends Access-Control-Allow-Credentials: true and echoes the origin ' +
          '(never "*", which is refused together with credentials).',
      ),
    methods: z
      .array(z.string().min(1))
      .default(() => [...CORS_DEFAULTS.methods])
      .describe(
        'Methods a preflight may ask for (Access-Control-Allow-Methods); case-sensitive. "*": any, without credentials.',
      ),
    headers: z
      .array(z.string().min(1))
      .optional()
      .describe(
        'Restricts the request headers a preflight may ask for to this list (Access-Control-Allow-Headers), ' +
          'case-insensitive; CORS-safelisted headers need no listing. "*": any except Authorization, without ' +
          'credentials; with a list, Authorization is allowed only when named. Default: not restricted ' +
          '(see reflectHeaders).',
      ),
    reflectHeaders: z
      .boolean()
      .optional()
      .describe(
        'Answer a preflight with the header names it asked for (Access-Control-Allow-Headers echoes ' +
          'Access-Control-Request-Headers when it is a list of tokens; Vary: Access-Control-Request-Headers). ' +
          'Default: true without headers, so any header passes, Authorization included (as the cors npm ' +
          'middleware); false with headers, whose list wins either way (true then echoes the allowed ' +
          'names asked for). false without headers: only CORS-safelisted headers pass.',
      ),
    exposeHeaders: z
      .array(z.string().min(1))
      .default(() => [...CORS_DEFAULTS.exposeHeaders])
      .describe(
        'Response headers scripts may read (Access-Control-Expose-Headers). "*": all, without credentials.',
      ),
    maxAgeSec: z
      .number()
      .int()
      .min(0)
      .default(CORS_DEFAULTS.maxAgeSec)
      .describe('How long browsers may cache a preflight answer (Access-Control-Max-Age). Browsers cap it.'),
    preflightStatus: z
      .union([z.literal(200), z.literal(204)])
      .default(CORS_DEFAULTS.preflightStatus)
      .describe('Status of preflight answers: 200 with Content-Length: 0, or 204.'),
    paths: z
      .array(z.string().min(1))
      .optional()
      .describe(
        'URL path globs where CORS applies (* within a segment, ** across segments). Default: every path.',
      ),
  })
  .superRefine((value, ctx) => {
    for (const issue of corsOptionIssues(value)) {
      ctx.addIssue({ code: 'custom', path: [...issue.path], message: issue.message, input: value });
    }
  })
  .describe('Cross-origin resource sharing (the Fetch standard CORS protocol).');

export type CorsConfig = z.output<typeof corsSchema>;
