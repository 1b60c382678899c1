// What `gatehouse cert` checks in a certificate: the reference name, the host match,
// a chain to a trust anchor, the validity window. Pure functions over parsed certificates and plain
// values; the clock is a parameter. The I/O (sockets, files) is in inspect.ts.
import type { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';

export const DAY_MS = 86_400_000;

/** The name a certificate is checked against (RFC 9525 §6.1: the reference identity). */
export type ReferenceIdentity =
  | { kind: 'dns'; name: string }
  | { kind: 'ip'; address: string }
  | { kind: 'invalid'; reason: string };

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * Normalizes a host name or IP literal: lower case, brackets off an IPv6 literal, one trailing dot
 * off (an absolute name is the same name, RFC 1034 §3.1). Anything not LDH labels is refused, so a
 * wildcard, NUL, space or empty label can never be matched by a certificate.
 */
export function referenceIdentity(raw: string): ReferenceIdentity {
  const bare = raw.startsWith('[') && raw.endsWith(']') ? raw.slice(1, -1) : raw;
  if (isIP(bare) !== 0) return { kind: 'ip', address: bare };
  if (bare !== raw) return { kind: 'invalid', reason: `not an IPv6 address: ${raw}` };
  const name = (raw.endsWith('.') ? raw.slice(0, -1) : raw).toLowerCase();
  if (name.length === 0 || name.length > 253) return { kind: 'invalid', reason: 'empty or too long' };
  // RFC 1123 §2.1 host names: letters, digits and hyphens; xn-- A-labels are plain LDH (RFC 5890).
  if (!name.split('.').every((l) => LABEL.test(l))) {
    return { kind: 'invalid', reason: `not a host name: ${JSON.stringify(raw)}` };
  }
  return { kind: 'dns', name };
}

/**
 * Does the certificate name this host? RFC 9525 §6.3 (as browsers do): only subjectAltName counts,
 * never the subject CN; an IP reference matches only an iPAddress SAN, a DNS reference only a dNSName
 * SAN; a wildcard stands for exactly one whole left-most label (§6.3: no partial, no multi-label).
 */
export function hostnameMatches(cert: X509Certificate, ref: ReferenceIdentity): boolean {
  if (ref.kind === 'invalid') return false;
  if (ref.kind === 'ip') return cert.checkIP(ref.address) !== undefined;
  return (
    cert.checkHost(ref.name, {
      subject: 'never',
      wildcards: true,
      partialWildcards: false,
      multiLabelWildcards: false,
    }) !== undefined
  );
}

/** Looser than issuedBy, to explain failures: issuer name = subject and the signature holds. */
function signedBy(child: X509Certificate, parent: X509Certificate): boolean {
  try {
    return child.issuer === parent.subject && child.verify(parent.publicKey);
  } catch {
    return false;
  }
}

/** A certificate with the basicConstraints facts Node's X509Certificate does not expose. */
export interface ChainCert {
  cert: X509Certificate;
  /** basicConstraints pathLenConstraint (RFC 5280 §4.2.1.9); undefined = none. */
  pathLength: number | undefined;
}

export type ChainResult =
  | { kind: 'trusted'; path: X509Certificate[] }
  | { kind: 'untrusted'; reason: string; issuerMissing: boolean };

const MAX_DEPTH = 8;

/** `child` is signed by `parent`: names and key ids agree, the parent may sign certificates (keyCertSign,
 * RFC 5280 §4.2.1.3; OpenSSL X509_check_issued) and the signature holds (§6.1.3 (a)). */
function issuedBy(child: X509Certificate, parent: X509Certificate): boolean {
  try {
    return child.checkIssued(parent) && child.verify(parent.publicKey);
  } catch {
    return false;
  }
}

/**
 * Finds a path leaf -> intermediates -> anchor (RFC 5280 §6.1), ignoring validity dates (checked on
 * their own). Every issuer on the path must be a CA within its pathLenConstraint. An anchor is trusted
 * as itself: the leaf may be one (a pinned self-signed certificate).
 */
export function buildChain(
  leaf: X509Certificate,
  intermediates: readonly ChainCert[],
  anchors: readonly ChainCert[],
): ChainResult {
  const anchorPrints = new Set(anchors.map((a) => a.cert.fingerprint256));
  if (anchorPrints.has(leaf.fingerprint256)) return { kind: 'trusted', path: [leaf] };
  const walk = (
    cert: X509Certificate,
    path: X509Certificate[],
    below: number,
  ): X509Certificate[] | undefined => {
    if (path.length > MAX_DEPTH) return undefined;
    // `below` counts the intermediates under the candidate issuer (§6.1.4 (l), (m)).
    const fits = (c: ChainCert) =>
      c.cert.ca && (c.pathLength === undefined || c.pathLength >= below) && issuedBy(cert, c.cert);
    const anchor = anchors.find(fits);
    if (anchor !== undefined) return [...path, anchor.cert];
    for (const c of intermediates) {
      if (path.some((p) => p.fingerprint256 === c.cert.fingerprint256) || !fits(c)) continue;
      if (anchorPrints.has(c.cert.fingerprint256)) return [...path, c.cert];
      const found = walk(c.cert, [...path, c.cert], below + 1);
      if (found !== undefined) return found;
    }
    return undefined;
  };
  const path = walk(leaf, [leaf], 0);
  if (path !== undefined) return { kind: 'trusted', path };
  return untrusted(leaf, intermediates, anchors);
}

const nameOf = (c: X509Certificate) => c.subject.replace(/\n/g, ', ');

/** Why no path was found, told from the served chain followed upwards without the CA rules. */
function untrusted(
  leaf: X509Certificate,
  intermediates: readonly ChainCert[],
  anchors: readonly ChainCert[],
): ChainResult {
  const loose: X509Certificate[] = [leaf];
  for (let top = leaf; loose.length <= MAX_DEPTH && !signedBy(top, top); ) {
    const next = intermediates.find((c) => !loose.includes(c.cert) && signedBy(top, c.cert));
    if (next === undefined) break;
    loose.push(next.cert);
    top = next.cert;
  }
  const top = loose[loose.length - 1] as X509Certificate;
  const notCa = loose.slice(1).find((c) => !c.ca);
  const anchorIssuer = anchors.find((a) => signedBy(top, a.cert));
  const issuerMissing = loose.length === 1 && !signedBy(leaf, leaf) && anchorIssuer === undefined;
  let reason: string;
  if (notCa !== undefined) reason = `${nameOf(notCa)} signs a certificate but is not a CA`;
  else if (anchorIssuer !== undefined)
    reason = `the path to ${nameOf(anchorIssuer.cert)} breaks its path length or CA rules`;
  else if (signedBy(top, top)) {
    reason =
      top === leaf
        ? 'self-signed, and not a trusted certificate'
        : `the chain ends at ${nameOf(top)}, a self-signed CA that is not trusted`;
  } else
    reason = `the issuer of ${nameOf(top)} (${top.issuer.replace(/\n/g, ', ')}) is neither served nor trusted`;
  return { kind: 'untrusted', reason, issuerMissing };
}

/** OpenSSL verification errors that are about dates only (the chain itself may be fine). */
export const TIME_ONLY_ERRORS: ReadonlySet<string> = new Set([
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERROR_IN_CERT_NOT_BEFORE_FIELD',
  'ERROR_IN_CERT_NOT_AFTER_FIELD',
]);

export type TimeCheck =
  | { kind: 'valid'; daysLeft: number }
  | { kind: 'expired'; daysLeft: number }
  | { kind: 'not-yet-valid'; daysLeft: number; startsInDays: number };

/** RFC 5280 §4.1.2.5: valid from notBefore through notAfter, both inclusive. daysLeft rounds down. */
export function timeCheck(validFromMs: number, validToMs: number, nowMs: number): TimeCheck {
  const daysLeft = Math.floor((validToMs - nowMs) / DAY_MS);
  if (nowMs < validFromMs) {
    return { kind: 'not-yet-valid', daysLeft, startsInDays: Math.ceil((validFromMs - nowMs) / DAY_MS) };
  }
  if (nowMs > validToMs) return { kind: 'expired', daysLeft };
  return { kind: 'valid', daysLeft };
}

/** What keyStrength reads of one certificate (inspect.ts fills it from the DER). */
export interface KeyFacts {
  /** Who, for the reason: the subject, one line. */
  name: string;
  /** Node's asymmetricKeyType: 'rsa', 'rsa-pss', 'dsa', 'ec', 'ed25519', ... */
  keyType: string;
  /** RSA/DSA modulus bits, or the EC curve's field size (prime256v1 -> 256); undefined = unknown. */
  keyBits: number | undefined;
  /** The hash of the signature on the certificate ('SHA-1', 'SHA-256'), or undefined when unknown. */
  signatureHash: string | undefined;
  /** Self-signed: a root served in the chain, whose own signature is not relied upon. */
  selfSigned: boolean;
}

/** RSA (and DSA) under this fails: CA/Browser Forum Baseline Requirements §6.1.5. */
export const MIN_RSA_BITS = 2048;
/** EC under this fails: §6.1.5 allows P-256, P-384 and P-521 only. */
export const MIN_EC_BITS = 256;
/** Signature hashes that fail: BR §7.1.3.2 allows SHA-256, SHA-384, SHA-512 only; SHA-1 is collided (SHAttered). */
const WEAK_HASHES: ReadonlySet<string> = new Set(['SHA-1', 'MD5', 'MD2']);

/** The bits of a named curve: prime256v1, secp384r1, brainpoolP256r1 -> 256, 384, 256. */
export function curveBits(namedCurve: string | undefined): number | undefined {
  const m = /(\d{3})/.exec(namedCurve ?? '');
  return m === null ? undefined : Number(m[1]);
}

/**
 * Why the served certificates' keys or signatures are too weak (empty: strong enough). Every served
 * certificate's key counts (a weak intermediate key forges leaves as well); so does every signature
 * but a self-signed root's in the chain, which nothing relies on (the leaf's always counts).
 */
export function keyStrength(certs: readonly KeyFacts[]): string[] {
  const reasons: string[] = [];
  for (const [i, c] of certs.entries()) {
    const who = i === 0 ? 'the certificate' : `chain certificate ${i} (${c.name})`;
    const rsaLike = c.keyType === 'rsa' || c.keyType === 'rsa-pss' || c.keyType === 'dsa';
    if (rsaLike && c.keyBits !== undefined && c.keyBits < MIN_RSA_BITS) {
      reasons.push(
        `${who} has a ${c.keyType.toUpperCase()} key of ${c.keyBits} bits, under ${MIN_RSA_BITS} (CA/Browser Forum Baseline Requirements §6.1.5)`,
      );
    }
    if (c.keyType === 'ec' && c.keyBits !== undefined && c.keyBits < MIN_EC_BITS) {
      reasons.push(
        `${who} has an EC key of ${c.keyBits} bits, under ${MIN_EC_BITS} (CA/Browser Forum Baseline Requirements §6.1.5: P-256, P-384, P-521)`,
      );
    }
    if (!(i > 0 && c.selfSigned) && c.signatureHash !== undefined && WEAK_HASHES.has(c.signatureHash)) {
      reasons.push(
        `${who} is signed with ${c.signatureHash}, which is broken for signatures (CA/Browser Forum Baseline Requirements §6.1.5, §7.1.3.2: SHA-256 or stronger)`,
      );
    }
  }
  return reasons;
}

export interface CheckInput {
  /** Node's verification said yes (live), or undefined when there was no handshake (a file). */
  nodeAuthorized: boolean | undefined;
  /** Node's authorizationError code when it said no. */
  nodeError: string | undefined;
  chain: ChainResult;
  time: TimeCheck;
  /** undefined: not checked (a file without --servername). */
  hostMatch: { name: string; matches: boolean } | undefined;
  /** keyStrength's reasons for the served certificates (absent or empty: strong enough). */
  weakKeys?: readonly string[];
  warnDays: number;
}

export interface CheckOutcome {
  checks: { trusted: boolean; timeValid: boolean; hostnameMatches: boolean | null; keyStrength: boolean };
  /** One line per failed check, naming it. */
  failures: string[];
  warnings: string[];
  ok: boolean;
}

/** The verdict: `trusted` is Node's own answer when there was a handshake, unless it only objected to dates. */
export function evaluateChecks(i: CheckInput): CheckOutcome {
  const failures: string[] = [];
  const warnings: string[] = [];
  const chainOk = i.chain.kind === 'trusted';
  let trusted: boolean;
  if (i.nodeAuthorized === undefined) trusted = chainOk;
  else if (i.nodeAuthorized) trusted = true;
  else trusted = chainOk && i.nodeError !== undefined && TIME_ONLY_ERRORS.has(i.nodeError);
  if (!trusted) {
    const why = i.chain.kind === 'untrusted' ? i.chain.reason : 'the TLS library refused the chain';
    failures.push(`trusted: ${why}${i.nodeError === undefined ? '' : ` (${i.nodeError})`}`);
  }
  // Node's store may hold more than ours (NODE_EXTRA_CA_CERTS): its yes settles completeness too.
  if (i.chain.kind === 'untrusted' && i.chain.issuerMissing && i.nodeAuthorized !== true) {
    warnings.push("incomplete chain: the leaf's issuer is not served (missing intermediate?)");
  }
  const t = i.time;
  if (t.kind === 'expired') failures.push(`timeValid: expired ${-t.daysLeft} days ago`);
  if (t.kind === 'not-yet-valid') failures.push(`timeValid: not valid for ${t.startsInDays} more days`);
  if (t.kind === 'valid' && t.daysLeft < i.warnDays) {
    warnings.push(`expires in ${t.daysLeft} days (within --warn-days ${i.warnDays})`);
  }
  const hostnameMatches = i.hostMatch === undefined ? null : i.hostMatch.matches;
  if (i.hostMatch !== undefined && !i.hostMatch.matches) {
    failures.push(`hostnameMatches: the certificate does not name ${i.hostMatch.name}`);
  }
  const weakKeys = i.weakKeys ?? [];
  for (const why of weakKeys) failures.push(`keyStrength: ${why}`);
  return {
    checks: { trusted, timeValid: t.kind === 'valid', hostnameMatches, keyStrength: weakKeys.length === 0 },
    failures,
    warnings,
    ok: failures.length === 0,
  };
}
