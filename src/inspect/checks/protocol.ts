// Protocol and TLS: the HTTP version and ALPN of the final URL, the TLS version, and the certificate
// checks `gatehouse cert` makes (trusted, in date, names the host, key strength, expiring, complete chain).
import type { Finding, Recording, TlsRecord } from '../types.js';

const EXPIRING_DAYS = 21;
/** Warn only when less than this share of the lifetime is left too (a 12-hour certificate is renewed hourly). */
export const EXPIRING_SHARE = 1 / 3;
const HOUR_MS = 3_600_000;

/**
 * Expiring: under EXPIRING_DAYS left AND under EXPIRING_SHARE of the lifetime (notAfter - notBefore)
 * left, so a short-lived certificate (Caddy's 12-hour internal ones, 6-day ACME ones) warns only when
 * its renewal is late. Undefined when not expiring; else how long is left, in words.
 */
export function expiringIn(
  validFrom: string,
  validTo: string,
  daysLeft: number,
  nowMs: number,
): string | undefined {
  const fromMs = Date.parse(validFrom);
  const toMs = Date.parse(validTo);
  if (Number.isNaN(fromMs) || Number.isNaN(toMs) || toMs <= fromMs) {
    return daysLeft < EXPIRING_DAYS ? `${daysLeft} days` : undefined;
  }
  const leftMs = toMs - nowMs;
  if (leftMs >= EXPIRING_DAYS * 24 * HOUR_MS || leftMs >= (toMs - fromMs) * EXPIRING_SHARE) return undefined;
  if (leftMs >= 2 * 24 * HOUR_MS) return `${daysLeft} days`;
  const hours = Math.max(0, Math.floor(leftMs / HOUR_MS));
  return hours === 1 ? '1 hour' : `${hours} hours`;
}

const finding = (id: string, severity: Finding['severity'], message: string, evidence: string, rfc: string) =>
  ({ id: `protocol.${id}`, area: 'protocol', severity, message, evidence, rfc }) as const satisfies Finding;

/** Secure Contexts §3.1: loopback is potentially trustworthy, so plain http there is no finding. */
function isLoopback(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h.endsWith('.localhost') || /^127\.\d+\.\d+\.\d+$/.test(h) || h === '::1';
}

function httpVersion(rec: Recording): Finding[] {
  const r = rec.probes.primary?.response;
  if (r === undefined) return [];
  const https = rec.finalUrl.startsWith('https:');
  const alpn =
    rec.tls === undefined
      ? https
        ? 'TLS, handshake facts not recorded'
        : 'no TLS'
      : rec.tls.alpn === false
        ? 'no ALPN'
        : `ALPN ${rec.tls.alpn}`;
  const version = r.httpVersion === '2' ? 'HTTP/2' : `HTTP/${r.httpVersion}`;
  const hint =
    rec.tls !== undefined && r.httpVersion !== '2' ? '; offering h2 in ALPN would allow HTTP/2' : '';
  return [
    finding(
      'http-version',
      'info',
      `served over ${version} (${alpn})${hint}`,
      `${version}, ${alpn}`,
      r.httpVersion === '2' ? 'RFC 9113 §3.2' : 'RFC 9112 §2.3',
    ),
  ];
}

function tlsVersion(tls: TlsRecord): Finding[] {
  const evidence = `${tls.protocol}, ${tls.cipher}`;
  // RFC 8996 §2-3: TLS 1.0 and 1.1 (and SSL) MUST NOT be negotiated.
  if (/^(SSLv|TLSv1(\.1)?$)/.test(tls.protocol)) {
    return [
      finding(
        'tls-obsolete',
        'error',
        `${tls.protocol} is deprecated: enable TLS 1.2 and 1.3 and turn older versions off`,
        evidence,
        'RFC 8996 §2',
      ),
    ];
  }
  return [finding('tls-version', 'info', `negotiated ${tls.protocol}`, evidence, 'RFC 8446 §4.2.1')];
}

function certificate(tls: TlsRecord, nowMs: number): Finding[] {
  const c = tls.certificate;
  if (c === undefined) return [];
  const left = expiringIn(c.validFrom, c.validTo, c.daysLeft, nowMs);
  const out: Finding[] = [];
  const who = `subject ${c.subject}; issuer ${c.issuer}`;
  if (!c.checks.trusted) {
    out.push(
      finding(
        'certificate-untrusted',
        'error',
        c.devCaPath === undefined
          ? 'the certificate does not chain to a trusted CA: serve a chain from a public CA (with its intermediates)'
          : `the certificate is from Gatehouse's development CA: check with --ca ${c.devCaPath} (or run gatehouse trust); a public site needs a public CA`,
        who,
        'RFC 5280 §6.1',
      ),
    );
  }
  if (!c.checks.timeValid) {
    const expired = c.daysLeft < 0;
    out.push(
      finding(
        'certificate-expired',
        'error',
        expired
          ? `the certificate expired ${-c.daysLeft} days ago: renew it`
          : 'the certificate is not valid yet: check its notBefore date and the server clock',
        `notBefore ${c.validFrom}, notAfter ${c.validTo}`,
        'RFC 5280 §4.1.2.5',
      ),
    );
  } else if (left !== undefined) {
    out.push(
      finding(
        'certificate-expiring',
        'warning',
        `the certificate expires in ${left}, under a third of its lifetime: renew it (automate with ACME)`,
        `notBefore ${c.validFrom}, notAfter ${c.validTo}`,
        'RFC 5280 §4.1.2.5',
      ),
    );
  }
  if (!c.checks.hostnameMatches) {
    out.push(
      finding(
        'certificate-wrong-host',
        'error',
        'the certificate does not name this host: add it to the subjectAltName',
        `san: ${c.san.join(', ') || '(none)'}`,
        'RFC 9525 §6.3',
      ),
    );
  }
  if (c.checks.keyStrength === false) {
    out.push(
      finding(
        'certificate-weak-key',
        'error',
        'the certificate chain has a weak key or a SHA-1 signature: reissue with RSA 2048+ or P-256 and SHA-256',
        (c.weakKeys ?? []).join('; '),
        'CA/Browser Forum Baseline Requirements §6.1.5',
      ),
    );
  }
  const incomplete = c.warnings.find((w) => w.startsWith('incomplete chain'));
  if (incomplete !== undefined) {
    out.push(
      finding(
        'incomplete-chain',
        'warning',
        'the server does not send the intermediate certificate: serve the full chain (leaf first)',
        incomplete,
        'RFC 8446 §4.4.2',
      ),
    );
  }
  return out;
}

/** Plain http at the end of the redirect chain: nothing upgrades a visitor to https. */
function noHttpsRedirect(rec: Recording): Finding[] {
  if (rec.probes.primary?.response === undefined) return [];
  let url: URL;
  try {
    url = new URL(rec.finalUrl);
  } catch {
    return [];
  }
  if (url.protocol !== 'http:' || isLoopback(url.hostname)) return [];
  return [
    finding(
      'no-https-redirect',
      'warning',
      'served over plain http with no redirect to https: redirect (308) to https and send HSTS there',
      `final URL ${rec.finalUrl}`,
      'RFC 9110 §4.2.2',
    ),
  ];
}

export function checkProtocol(rec: Recording): Finding[] {
  return [
    ...httpVersion(rec),
    ...(rec.tls === undefined ? [] : [...tlsVersion(rec.tls), ...certificate(rec.tls, rec.nowMs)]),
    ...noHttpsRedirect(rec),
  ];
}
