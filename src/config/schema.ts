// The one config schema: file, CLI flags and library callers all produce this shape.
// Field docs (`.describe`) flow into schema.json for editor completion.
import { z } from 'zod';
import { EARLY_HINTS_MAX } from '../http/early-hints.js';
import { DEFAULT_MAX_URL_BYTES, HTTP2_DEFAULTS } from '../server/index.js';
import { authSchema, headersSchema, rateLimitSchema, trustProxySchema } from './access.js';
import { corsSchema } from './cors.js';
import { jsonpSchema, redirectsSchema } from './jsonp.js';
import { healthSchema, metricsSchema, workersSchema } from './ops.js';
import { proxySchema } from './proxy.js';
import { redisSchema } from './redis.js';
import { tlsSchema } from './tls.js';
import { websocketSchema } from './websocket.js';

const MiB = 1024 * 1024;

export const DEFAULT_PORT = 8080;
export const DEFAULT_HOST = '127.0.0.1';

const listenSchema = z
  .strictObject({
    host: z
      .string()
      .min(1)
      .default(DEFAULT_HOST)
      .describe('Address to bind. Use 0.0.0.0 or :: in containers.'),
    port: z.number().int().min(0).max(65535).default(DEFAULT_PORT).describe('TCP port; 0 picks a free one.'),
    redirectToHttps: z
      .strictObject({
        port: z
          .number()
          .int()
          .min(1)
          .max(65535)
          .optional()
          .describe('HTTPS port in the Location (default 443).'),
        hosts: z.array(z.string()).optional().describe('Only these Host names are redirected (others: 400).'),
      })
      .optional()
      .describe('This listener answers every request with 308 to the https:// URL (RFC 9110 §15.4.9).'),
    httpPort: z
      .number()
      .int()
      .min(0)
      .max(65535)
      .optional()
      .describe(
        'With tls: a plain-HTTP listener on this port (same host) that answers ACME HTTP-01 challenges ' +
          'and redirects everything else to HTTPS with 308 (redirectToHttps.hosts applies).',
      ),
  })
  .describe('Where the server listens.');

const staticSchema = z
  .strictObject({
    spa: z
      .boolean()
      .default(false)
      .describe(
        'Serve the SPA fallback page for unknown navigations (GET/HEAD, Accept: text/html, no extension).',
      ),
    spaFallback: z
      .string()
      .startsWith('/')
      .default('/index.html')
      .describe('Page served by the SPA fallback.'),
    spaRoutes: z
      .array(z.string().startsWith('/'))
      .default([])
      .describe(
        'With spa: path globs (/users/**) whose navigations always get the fallback page, even when ' +
          'the last segment has a dot (/users/john.doe); a file that exists is still served, and paths ' +
          'under assetsDir never fall back.',
      ),
    assetsDir: z
      .string()
      .default('assets')
      .describe('Folder of build assets; paths under it never get the SPA fallback.'),
    etag: z
      .enum(['strong', 'weak'])
      .default('strong')
      .describe('strong: content hash, identical on every replica; weak: W/"size-mtime".'),
    lastModified: z.boolean().default(true).describe('Send Last-Modified from the file mtime.'),
    index: z.array(z.string().min(1)).default(['index.html']).describe('Index files tried for a directory.'),
    extensions: z
      .array(z.string().regex(/^[A-Za-z0-9]{1,16}$/, 'an extension without its dot, e.g. html'))
      .default([])
      .describe(
        "Extensions tried, in order, when no file or folder is at the path (serve-static's extensions, " +
          "serve's cleanUrls): with ['html'], /about answers about.html. /about.html still answers too " +
          '(no redirect; docs/static.md).',
      ),
    directoryListing: z
      .boolean()
      .default(false)
      .describe(
        'List a folder that has no index file (HTML, names escaped, no dotfiles, ETag and Last-Modified); ' +
          'off: 404.',
      ),
    dotfiles: z
      .enum(['ignore', 'allow'])
      .default('ignore')
      .describe('ignore: dotfiles answer 404 (except under /.well-known/).'),
    followSymlinks: z
      .boolean()
      .default(false)
      .describe('Serve symlinks whose target lies outside the root (refused by default).'),
    precompressed: z.boolean().default(true).describe('Serve .br/.gz siblings chosen by Accept-Encoding.'),
    compress: z
      .boolean()
      .default(true)
      .describe(
        'Compress text files without siblings in the background, once per kept file version (first at a ' +
          'fast level, then the highest), and keep the result in memory; identity is sent meanwhile.',
      ),
    compressMinBytes: z.number().int().min(0).default(1024).describe('Smallest body worth compressing.'),
    compressConcurrency: z
      .number()
      .int()
      .min(1)
      .max(16)
      .default(1)
      .describe(
        'Compressions at once, each on its own worker thread, never on the thread pool that file reads ' +
          'share; what waits beyond a bound is sent uncompressed (docs/static.md, "Compression on the fly").',
      ),
    notFoundPage: z
      .string()
      .default('404.html')
      .describe('Page under the root served with status 404, if present.'),
    memoryCacheBytes: z
      .number()
      .int()
      .min(0)
      .default(64 * MiB)
      .describe(
        'Byte bound of the file view: file contents, compressed variants, and each entry (file, 404, ' +
          'redirect) counted with its measured heap and path, so many distinct paths stay within it too. ' +
          'A path is kept from its second request on (docs/static.md).',
      ),
    maxCachedFileBytes: z
      .number()
      .int()
      .min(0)
      .default(1 * MiB)
      .describe('Files up to this size are kept in memory; larger ones are streamed from disk.'),
    hashInlineMaxBytes: z
      .number()
      .int()
      .min(0)
      .default(4 * MiB)
      .describe(
        'With etag strong: a streamed file up to this size is hashed before its first response; a larger ' +
          'one with no hash yet (see hashManifest) is answered at once with W/"size-mtime" while its hash ' +
          'is computed in the background, then gets the strong ETag (docs/static.md, "Validators of large files").',
      ),
    hashManifest: z
      .enum(['read', 'write', 'off'])
      .default('read')
      .describe(
        'Per-folder .gatehouse-hashes.json (written by gatehouse hash and gatehouse precompress) giving ' +
          'large files their strong ETag from the first response. read: use them; write: also record hashes ' +
          'the server computes (skipped with one warning where the folder is read-only); off: ignore them.',
      ),
    trailingSlash: z
      .enum(['add', 'remove', 'ignore'])
      .default('ignore')
      .describe('Canonical URLs: 301 to the form with (add) or without (remove) a trailing slash.'),
    indexRedirect: z.boolean().default(false).describe('301 /index.html to / and /dir/index.html to /dir/.'),
    revalidateMs: z
      .number()
      .int()
      .min(0)
      .max(1000)
      .default(500)
      .describe('How long a cached file view is trusted before it is checked against the disk again.'),
    versionParam: z
      .string()
      .regex(/^[A-Za-z0-9._~-]{1,64}$/, 'expected 1 to 64 unreserved characters (RFC 3986 §2.3)')
      .default('v')
      .describe(
        'Query parameter of verified cache busting: ?v= with at least 8 leading characters of the ' +
          "file's base64url sha256 (see assetUrl, gatehouse hash) gets the hashed-name policy.",
      ),
    earlyHints: z
      .union([
        z.boolean().transform((enabled) => ({ enabled, max: EARLY_HINTS_MAX })),
        z.strictObject({
          enabled: z.boolean().default(true).describe('Send 103 Early Hints before HTML pages.'),
          max: z
            .number()
            .int()
            .min(0)
            .max(64)
            .default(EARLY_HINTS_MAX)
            .describe('Most Link hints in one 103 (the first assets in document order).'),
        }),
      ])
      .default({ enabled: true, max: EARLY_HINTS_MAX })
      .describe(
        '103 Early Hints (RFC 8297) before a 200 HTML page: rel=preload/modulepreload for the hashed or ' +
          '?v=-verified CSS, JS, fonts and images the page references, to HTTP/2 and to HTTP/1.1 browser ' +
          'navigations. true/false, or { enabled, max }.',
      ),
    htmlSecurityHeaders: z
      .boolean()
      .default(true)
      .describe(
        'On HTML files: X-Frame-Options: SAMEORIGIN (RFC 7034: no framing by other sites, clickjacking) ' +
          "and Referrer-Policy: strict-origin-when-cross-origin (the browsers' default, made explicit). " +
          'Header rules still override them; false sends neither (a page meant to be framed by other sites).',
      ),
  })
  .describe('The static file handler.');

const cacheRuleSchema = z
  .strictObject({
    glob: z
      .union([z.string(), z.array(z.string())])
      .optional()
      .describe('URL path glob(s): * within a segment, ** across segments, {a,b} alternatives.'),
    regex: z.string().optional().describe('Regular expression tested against the URL path.'),
    contentType: z
      .union([z.string(), z.array(z.string())])
      .optional()
      .describe('Media type(s), e.g. text/html or image/* .'),
    hashed: z
      .boolean()
      .optional()
      .describe('Match files whose name carries a content hash (8+ hex/base64url chars).'),
    cacheControl: z.string().min(1).describe('Cache-Control value sent for matching responses.'),
    expires: z
      .boolean()
      .optional()
      .describe('Send Expires beside max-age for HTTP/1.0 clients (default: true when max-age > 0).'),
    override: z
      .boolean()
      .optional()
      .describe("On proxied routes: replace the upstream's own Cache-Control (default: only fill it in)."),
  })
  .describe('One cache rule; the first rule that matches wins. Your rules come before the defaults.');

const http2LimitsSchema = z
  .strictObject({
    maxConcurrentStreams: z
      .number()
      .int()
      .min(1)
      .default(HTTP2_DEFAULTS.maxConcurrentStreams)
      .describe(
        'Streams a client may have open at once on one connection (SETTINGS_MAX_CONCURRENT_STREAMS).',
      ),
    maxResetsPerWindow: z
      .number()
      .int()
      .min(1)
      .default(HTTP2_DEFAULTS.maxResetsPerWindow)
      .describe(
        'Streams one client address may reset (RST_STREAM) within resetWindowMs, over all its connections, ' +
          'refused header blocks included. Past it: GOAWAY ENHANCE_YOUR_CALM and a ban (rapid reset, CVE-2023-44487).',
      ),
    resetWindowMs: z
      .number()
      .int()
      .min(1)
      .default(HTTP2_DEFAULTS.resetWindowMs)
      .describe('The window maxResetsPerWindow counts in.'),
    resetBanMs: z
      .number()
      .int()
      .min(0)
      .default(HTTP2_DEFAULTS.resetBanMs)
      .describe('How long an address past maxResetsPerWindow has its new connections refused at accept.'),
    maxRefusedHeaderBlocks: z
      .number()
      .int()
      .min(0)
      .default(HTTP2_DEFAULTS.maxRefusedHeaderBlocks)
      .describe(
        'Header blocks refused on one connection (over maxHeaderBytes or too many fields, as an HPACK bomb) ' +
          'before it gets GOAWAY ENHANCE_YOUR_CALM (within 100 ms).',
      ),
  })
  .describe('HTTP/2 on the TLS listener: concurrent streams, the rapid-reset budget, refused header blocks.');

const limitsSchema = z
  .strictObject({
    maxUrlBytes: z
      .number()
      .int()
      .min(16)
      .default(DEFAULT_MAX_URL_BYTES)
      .describe('Longer request targets get 414.'),
    maxHeaderBytes: z.number().int().min(1024).default(16384).describe('Larger header blocks get 431.'),
    headersTimeoutMs: z
      .number()
      .int()
      .min(1)
      .default(10_000)
      .describe(
        'A request head not complete this long after its first byte gets 408 (checked every 25 ms: ' +
          'within ~25 ms of the value).',
      ),
    requestTimeoutMs: z
      .number()
      .int()
      .min(0)
      .default(30_000)
      .describe(
        'A request (head and body) not received whole this long after its first byte gets 408 ' +
          '(checked every 25 ms: within ~25 ms of the value); 0: off.',
      ),
    keepAliveTimeoutMs: z
      .number()
      .int()
      .min(0)
      .default(5_000)
      .describe(
        'Sent as Keep-Alive: timeout; an idle keep-alive connection is closed 1 s after it (Node keeps ' +
          'that margin so a client reusing the connection at the last moment does not meet a closed one).',
      ),
    shutdownTimeoutMs: z
      .number()
      .int()
      .min(0)
      .default(10_000)
      .describe(
        'How long SIGTERM waits for in-flight requests before closing sockets (within a few ms). Also the ' +
          'bound of the whole shutdown: what closes after the drain (WebSocket endpoints, cache stores, ' +
          'Redis) gets until this long after the signal, at least 1 s, then is dropped, whatever Redis does.',
      ),
    maxBodyBytes: z
      .number()
      .int()
      .min(0)
      .default(1024 * 1024)
      .describe('Request bodies over this get 413 on endpoints that read bodies.'),
    maxConnections: z.number().int().min(0).default(0).describe('Open connections at most; 0: no limit.'),
    memoryBytes: z
      .number()
      .int()
      .min(64 * MiB)
      .optional()
      .describe(
        'What one serving process may hold in memory (RSS): its bounds, its heap and the runtime. Default: ' +
          'the bounds (static.memoryCacheBytes, each proxy cache) plus 256 MiB of heap and 72 MiB of ' +
          "runtime; a container's lower limit wins. The V8 heap limit follows from it; near it the caches shed " +
          'their least recently used entries and readiness reports it (docs/deploy.md, "Memory").',
      ),
    maxPipelinedRequests: z
      .number()
      .int()
      .min(0)
      .default(16)
      .describe(
        'Pipelined requests handled and not yet answered per connection; the rest wait without a ' +
          'handler and the socket is not read beyond them. 0: no bound.',
      ),
    strictPipelining: z
      .boolean()
      .default(false)
      .describe(
        'Read every connection one request head at a time from its first byte, so the parser never ' +
          'runs ahead of maxPipelinedRequests (costs about a third more CPU on small responses). ' +
          'false: the read that shows a client pipelining is parsed whole, its requests beyond the ' +
          'bound wait unhandled.',
      ),
    sendTimeoutMs: z
      .number()
      .int()
      .min(1)
      .default(60_000)
      .describe(
        'A client that accepts no response bytes for this long is dropped (nginx send_timeout; within a few ms).',
      ),
    rateLimit: rateLimitSchema.optional(),
    http2: http2LimitsSchema.prefault({}),
  })
  .describe('Request limits.');

const logSchema = z
  .strictObject({
    format: z
      .enum(['json', 'pretty', 'off'])
      .default('pretty')
      .describe('Access log: json lines (pino), one readable line per request, or off.'),
    level: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal']).default('info'),
  })
  .describe('Logging.');

export const configSchema = z
  .strictObject({
    $schema: z.string().optional().describe('Path or URL of schema.json, for editors.'),
    root: z.string().min(1).default('.').describe('Folder to serve, relative to the config file.'),
    listen: listenSchema.prefault({}),
    static: staticSchema.prefault({}),
    cachePolicy: z
      .array(cacheRuleSchema)
      .default([])
      .describe('Ordered cache rules, tried before the defaults.'),
    limits: limitsSchema.prefault({}),
    log: logSchema.prefault({}),
    cors: corsSchema.optional(),
    jsonp: jsonpSchema.optional(),
    redirects: redirectsSchema.default([]),
    proxy: proxySchema
      .default([])
      .describe('Path prefixes forwarded to upstream servers, longest prefix first.'),
    websocket: websocketSchema.default([]),
    auth: authSchema.default([]),
    headers: headersSchema.default([]),
    trustProxy: trustProxySchema.default([]),
    tls: tlsSchema.optional(),
    redis: redisSchema.optional(),
    workers: workersSchema.default(1),
    health: healthSchema.optional(),
    metrics: metricsSchema.optional(),
  })
  .describe('Gatehouse configuration (gatehouse.config.json).');

/** What a config file or a library caller writes (everything optional). */
export type GatehouseConfigInput = z.input<typeof configSchema>;
/** The resolved config, defaults filled in. */
export type GatehouseConfig = z.output<typeof configSchema>;
export type CacheRuleConfig = z.output<typeof cacheRuleSchema>;
export type StaticConfig = z.output<typeof staticSchema>;
export type LimitsConfig = z.output<typeof limitsSchema>;
