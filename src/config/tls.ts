// Config of the TLS listener: certificate files, SNI names, ACME and the dev CA. Paths are relative
// to the config file (load.ts resolves them); checks that need the files happen when the server starts.
import { z } from 'zod';
import { devNameProblem } from '../certs/dev-names.js';
import {
  blockedForHttp2,
  DEFAULT_CIPHERS,
  isTls13Suite,
  knownCipher,
  SECRET_MAX_BYTES,
  SECRET_MIN_BYTES,
  SESSION_TICKET_DEFAULTS,
} from '../server/index.js';
import { redisOverrideSchema } from './redis.js';

const pemPath = z.string().min(1);

const certFilesSchema = z.strictObject({
  cert: pemPath.describe('PEM file: the certificate, then its intermediates.'),
  key: pemPath.describe('PEM file: the private key.'),
});

/** A DNS name (RFC 1035 letters, digits, hyphens), optionally `*.` in front. */
const hostName = z
  .string()
  .regex(
    /^(\*\.)?([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/,
    'must be a host name (a leading *. is allowed)',
  );

const acmeSchema = z
  .strictObject({
    email: z
      .string()
      .regex(/^[^\s@]+@[^\s@]+$/, 'must be an email address')
      .describe('Account contact.'),
    domains: z
      .array(hostName.refine((d) => !d.startsWith('*.'), 'HTTP-01 cannot prove a wildcard name'))
      .min(1)
      .describe('Names on the certificate; each must reach listen.httpPort for the HTTP-01 challenge.'),
    directory: z
      .url({ protocol: /^https?$/ })
      .default('https://acme-v02.api.letsencrypt.org/directory')
      .describe("ACME directory URL (RFC 8555 §7.1.1); default Let's Encrypt production."),
    storage: pemPath.describe('Folder for the account key, certificates and the ordering lock.'),
    directoryCa: pemPath.optional().describe("PEM file of a CA trusted for the directory's HTTPS (tests)."),
    renewAtFraction: z
      .number()
      .gt(0)
      .lt(1)
      .default(2 / 3)
      .describe('Renew once this fraction of the certificate lifetime has passed.'),
  })
  .describe('Automatic certificates over ACME (RFC 8555), HTTP-01 on listen.httpPort.');

/** RFC 8446 §4.6.1: a ticket lives at most seven days. */
const TICKET_LIFETIME_MAX_SECS = 7 * 24 * 3600;

const sessionTicketsSchema = z
  .strictObject({
    enabled: z
      .boolean()
      .default(SESSION_TICKET_DEFAULTS.enabled)
      .describe(
        "Stateless session tickets (RFC 8446 §4.6.1, RFC 5077); false: Node's in-process session cache only.",
      ),
    rotateSecs: z
      .number()
      .int()
      .min(60)
      .max(TICKET_LIFETIME_MAX_SECS)
      .default(SESSION_TICKET_DEFAULTS.rotateSecs)
      .describe(
        'Each ticket key is used for one window of this many seconds (windows start at the Unix epoch, so ' +
          'every instance agrees); also the ticket lifetime. A ticket does not resume after its window ends.',
      ),
    keyFile: pemPath
      .optional()
      .describe(
        `File of ${SECRET_MIN_BYTES} to ${SECRET_MAX_BYTES} secret bytes every instance shares (e.g. ` +
          '`openssl rand 80 > ticket.key`; nginx ssl_session_ticket_key files qualify), mode 0600 or ' +
          'stricter; the keys are derived from it. Read at start and at each rotation.',
      ),
    store: z
      .enum(['local', 'redis'])
      .default(SESSION_TICKET_DEFAULTS.store)
      .describe(
        'redis: the secret lives in the top-level redis (<keyPrefix>tls:ticket-secret, made by the first ' +
          'instance). local: keyFile, else a secret made in process (with --workers, one the primary ' +
          'shares with its workers).',
      ),
    redis: redisOverrideSchema.optional(),
  })
  .refine((t) => t.keyFile === undefined || t.store === 'local', {
    message: 'keyFile and store: "redis" exclude each other',
    path: ['store'],
  })
  .describe('TLS session resumption across workers and instances: where the ticket key secret comes from.');

export const tlsSchema = z
  .strictObject({
    cert: pemPath.optional().describe('PEM file: the certificate, then its intermediates.'),
    key: pemPath.optional().describe('PEM file: the private key.'),
    ca: pemPath.optional().describe('PEM file of extra CA certificates to send or trust.'),
    minVersion: z.enum(['TLSv1.2', 'TLSv1.3']).default('TLSv1.2').describe('Oldest TLS version accepted.'),
    ciphers: z
      .array(
        z
          .string()
          .refine(knownCipher, 'not a cipher suite name OpenSSL knows (e.g. ECDHE-RSA-AES128-GCM-SHA256)'),
      )
      .min(1)
      .default([...DEFAULT_CIPHERS])
      .describe(
        'Cipher suites by OpenSSL name (no OpenSSL expressions). Default: forward-secret AEAD suites (RFC 9325; ' +
          'ECDHE-ECDSA/RSA with AES-GCM or ChaCha20-Poly1305) and the TLS 1.3 ones. With http2 on, every TLS 1.2 ' +
          'suite must be ECDHE/DHE with an AEAD cipher (RFC 9113 §9.2.2). Listing no TLS_* suite keeps ' +
          "Node's TLS 1.3 defaults.",
      ),
    sni: z
      .record(hostName, certFilesSchema)
      .default({})
      .describe('Certificates by server name (SNI); "*.example.com" matches one label.'),
    acme: acmeSchema.optional(),
    dev: z
      .boolean()
      .default(false)
      .describe('Use the local development CA (gatehouse serve --https): a leaf for localhost.'),
    names: z
      .array(
        z.string().superRefine((name, ctx) => {
          const problem = devNameProblem(name);
          if (problem !== undefined) ctx.addIssue({ code: 'custom', message: `${problem}: ${name}` });
        }),
      )
      .max(100)
      .default([])
      .describe(
        'With dev: more names on the development certificate besides localhost, 127.0.0.1 and ::1 ' +
          '(serve --https --name N): DNS names, "*.name" (one label), IPv4 and IPv6 addresses. ' +
          'The certificate is reissued when the list changes.',
      ),
    http2: z.boolean().default(true).describe('Offer HTTP/2 by ALPN (h2); HTTP/1.1 is always offered.'),
    http3: z
      .boolean()
      .default(false)
      .describe(
        'Experimental: HTTP/3 over QUIC (RFC 9114) on the TLS port, UDP (serve --http3), advertised by ' +
          'Alt-Svc (RFC 7838). Bun (Bun.serve) only: Node has no QUIC in its official builds and Deno.serve no HTTP/3.',
      ),
    watch: z.boolean().default(true).describe('Reload when the certificate or key files change.'),
    sessionTickets: sessionTicketsSchema.prefault({}),
  })
  .superRefine((t, ctx) => {
    const sources = [t.cert !== undefined || t.key !== undefined, t.acme !== undefined, t.dev].filter(
      Boolean,
    );
    if (sources.length === 0)
      ctx.addIssue({ code: 'custom', message: 'needs cert and key, acme, or dev: true' });
    if (sources.length > 1)
      ctx.addIssue({ code: 'custom', message: 'cert/key, acme and dev exclude each other' });
    if ((t.cert === undefined) !== (t.key === undefined))
      ctx.addIssue({ code: 'custom', message: 'cert and key go together' });
    if (t.names.length > 0 && !t.dev)
      ctx.addIssue({
        code: 'custom',
        path: ['names'],
        message: 'only with dev: true (serve --https): they are names on the development certificate',
      });
    cipherIssues(t, ctx);
  })
  .describe('HTTPS on the main listener: HTTP/2 and HTTP/1.1 (ALPN), SIGHUP reloads certificates.');

/**
 * RFC 9113 §9.2.2: HTTP/2 is never negotiated over a blocklisted suite. ALPN is chosen without regard
 * to the suite, so a custom list with such a suite is refused while http2 is on (set http2: false
 * to serve it over HTTP/1.1 only).
 */
function cipherIssues(
  t: { ciphers: string[]; http2: boolean; minVersion: 'TLSv1.2' | 'TLSv1.3' },
  ctx: z.RefinementCtx,
): void {
  t.ciphers.forEach((name, i) => {
    if (t.http2 && knownCipher(name) && blockedForHttp2(name))
      ctx.addIssue({
        code: 'custom',
        path: ['ciphers', i],
        message: `${name} is on HTTP/2's blocklist (RFC 9113 Appendix A: not ECDHE/DHE with AES-GCM, ChaCha20-Poly1305 or CCM); remove it or set tls.http2: false`,
      });
  });
  if (t.minVersion === 'TLSv1.2' && t.ciphers.every(isTls13Suite))
    ctx.addIssue({
      code: 'custom',
      path: ['ciphers'],
      message:
        'lists no TLS 1.2 suite, so TLS 1.2 clients could not connect: add one or set minVersion: TLSv1.3',
    });
}

/** Config paths inside `tls` that are files or folders, for resolving against the config file. */
export function tlsPaths(t: z.input<typeof tlsSchema>, resolvePath: (p: string) => string): typeof t {
  const r = (p: string | undefined) => (p === undefined ? undefined : resolvePath(p));
  const sni: Record<string, { cert: string; key: string }> = {};
  for (const [name, f] of Object.entries(t.sni ?? {}))
    sni[name] = { cert: resolvePath(f.cert), key: resolvePath(f.key) };
  return {
    ...t,
    cert: r(t.cert),
    key: r(t.key),
    ca: r(t.ca),
    sni,
    acme: t.acme && { ...t.acme, storage: resolvePath(t.acme.storage), directoryCa: r(t.acme.directoryCa) },
    sessionTickets: t.sessionTickets && { ...t.sessionTickets, keyFile: r(t.sessionTickets.keyFile) },
  };
}
