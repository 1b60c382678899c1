// The cipher suites and TLS options every context of the listener is built with. The default follows
// RFC 9325 §4.1-4.2 (Mozilla "intermediate" without DHE): forward secret (ECDHE) and AEAD only (AES-GCM,
// ChaCha20-Poly1305), for ECDSA and RSA certificates alike, plus the TLS 1.3 suites. Node's own default
// ends with HIGH, which offers TLS_RSA_* (no forward secrecy) and CBC suites.
import { constants } from 'node:crypto';
import { getCiphers } from 'node:tls';

/** OpenSSL names, TLS 1.3 first; each is fine for HTTP/2 (RFC 9113 §9.2.2). */
export const DEFAULT_CIPHERS: readonly string[] = [
  'TLS_AES_128_GCM_SHA256',
  'TLS_AES_256_GCM_SHA384',
  'TLS_CHACHA20_POLY1305_SHA256',
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
];

/**
 * A client-initiated renegotiation (TLS 1.2) costs the server a full handshake each time the client
 * asks (THC-SSL-DoS); refused outright, OpenSSL answers no_renegotiation. Node would allow three per
 * ten minutes on HTTP/1.1; HTTP/2 forbids it anyway (RFC 9113 §9.2.1).
 */
export const TLS_SECURE_OPTIONS = constants.SSL_OP_NO_RENEGOTIATION;

/** A TLS 1.3 suite (OpenSSL names them TLS_*); the rest are TLS 1.2 (and older) ones. */
export function isTls13Suite(name: string): boolean {
  return name.toUpperCase().startsWith('TLS_');
}

/**
 * RFC 9113 §9.2.2 and Appendix A: HTTP/2 over TLS 1.2 needs an ephemeral key exchange (ECDHE, DHE)
 * and an AEAD cipher; everything else is on the blocklist. Every TLS 1.3 suite qualifies.
 */
export function blockedForHttp2(name: string): boolean {
  const n = name.toUpperCase();
  if (isTls13Suite(n)) return false;
  const ephemeral = n.startsWith('ECDHE-') || n.startsWith('DHE-');
  const aead = n.includes('-GCM-') || n.includes('CHACHA20-POLY1305') || /-CCM(8)?$/.test(n);
  return !(ephemeral && aead);
}

let known: ReadonlySet<string> | undefined;

/** A suite name the running OpenSSL knows (names only: no OpenSSL expressions such as HIGH:!aNULL). */
export function knownCipher(name: string): boolean {
  known ??= new Set(getCiphers());
  return known.has(name.toLowerCase());
}

/** The `ciphers` option of node:tls: OpenSSL spells suite names in upper case. */
export function cipherString(names: readonly string[]): string {
  return names.map((n) => n.toUpperCase()).join(':');
}
