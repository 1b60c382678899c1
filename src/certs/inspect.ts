// What `gatehouse cert` reads: a live TLS endpoint (the chain as served, protocol, cipher, Node's own
// verification) or a PEM file, summarized and checked with the pure logic of checks.ts.
import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import tls from 'node:tls';
import * as x509 from '@peculiar/x509';
import {
  buildChain,
  type ChainCert,
  type CheckOutcome,
  curveBits,
  evaluateChecks,
  hostnameMatches,
  type KeyFacts,
  keyStrength,
  type ReferenceIdentity,
  referenceIdentity,
  timeCheck,
} from './checks.js';

/** The printable facts of one certificate. */
export interface CertSummary {
  subject: string;
  san: string[];
  issuer: string;
  validFrom: string;
  validTo: string;
  /** 'EC P-256', 'RSA 2048', 'Ed25519', ... */
  keyType: string;
  signatureAlgorithm: string;
  serialNumber: string;
  fingerprint256: string;
  ca: boolean;
}

export interface InspectReport extends CertSummary, CheckOutcome {
  target: string;
  source: 'live' | 'file';
  daysLeft: number;
  chain: CertSummary[];
  /** TLS version (live only), e.g. TLSv1.3. */
  protocol: string | null;
  /** The ALPN protocol agreed (live only), e.g. h2. */
  alpn: string | null;
  /** The cipher suite's standard name (live only). */
  cipher: string | null;
}

export type InspectResult = { kind: 'report'; report: InspectReport } | { kind: 'error'; reason: string };

export interface CheckOptions {
  /** PEM of the CA certificates to trust in place of the system store. */
  caPem?: string | undefined;
  /** Host name or IP to match; for files the match is only checked when given. */
  servername?: string | undefined;
  warnDays: number;
  nowMs: number;
}

const CURVES: Record<string, string> = { prime256v1: 'P-256', secp384r1: 'P-384', secp521r1: 'P-521' };

function keyType(cert: X509Certificate): string {
  const k = cert.publicKey;
  const d = k.asymmetricKeyDetails;
  if (k.asymmetricKeyType === 'ec') return `EC ${CURVES[d?.namedCurve ?? ''] ?? d?.namedCurve ?? '?'}`;
  if (k.asymmetricKeyType === 'rsa' || k.asymmetricKeyType === 'rsa-pss') {
    return `${k.asymmetricKeyType.toUpperCase()} ${d?.modulusLength ?? '?'}`;
  }
  return k.asymmetricKeyType === 'ed25519' ? 'Ed25519' : String(k.asymmetricKeyType);
}

/** The facts keyStrength judges (checks.ts). */
function keyFacts(cert: X509Certificate): KeyFacts {
  const k = cert.publicKey;
  const d = k.asymmetricKeyDetails;
  let signatureHash: string | undefined;
  try {
    const alg = new x509.X509Certificate(cert.raw).signatureAlgorithm as Algorithm & { hash?: Algorithm };
    signatureHash = alg.hash?.name;
  } catch {
    signatureHash = undefined; // an algorithm the parser does not know: not judged
  }
  return {
    name: cert.subject.replace(/\n/g, ', '),
    keyType: String(k.asymmetricKeyType),
    keyBits: k.asymmetricKeyType === 'ec' ? curveBits(d?.namedCurve) : d?.modulusLength,
    signatureHash,
    selfSigned: cert.issuer === cert.subject && safeVerify(cert, cert),
  };
}

function safeVerify(child: X509Certificate, parent: X509Certificate): boolean {
  try {
    return child.verify(parent.publicKey);
  } catch {
    return false;
  }
}

function signatureAlgorithm(p: x509.X509Certificate): string {
  try {
    const alg = p.signatureAlgorithm as Algorithm & { hash?: Algorithm };
    const hash = alg.hash?.name;
    const name = alg.name === 'RSASSA-PKCS1-v1_5' ? 'RSA' : alg.name;
    return hash === undefined ? name : `${name} with ${hash}`;
  } catch {
    return 'unknown';
  }
}

function sanList(p: x509.X509Certificate): string[] {
  const ext = p.getExtension(x509.SubjectAlternativeNameExtension);
  if (ext === null) return [];
  return ext.names.toJSON().map((n) => `${n.type === 'ip' ? 'IP' : n.type.toUpperCase()}:${n.value}`);
}

/** The summary of one certificate (subject and issuer as RFC 4514 strings). */
export function describeCertificate(cert: X509Certificate): CertSummary {
  const p = new x509.X509Certificate(cert.raw);
  return {
    subject: p.subject,
    san: sanList(p),
    issuer: p.issuer,
    validFrom: new Date(cert.validFrom).toISOString(),
    validTo: new Date(cert.validTo).toISOString(),
    keyType: keyType(cert),
    signatureAlgorithm: signatureAlgorithm(p),
    serialNumber: cert.serialNumber,
    fingerprint256: cert.fingerprint256,
    ca: cert.ca,
  };
}

/** Adds the pathLenConstraint that Node's X509Certificate does not expose. */
export function toChainCert(cert: X509Certificate): ChainCert {
  const bc = new x509.X509Certificate(cert.raw).getExtension(x509.BasicConstraintsExtension);
  return { cert, pathLength: bc?.pathLength };
}

/** Every certificate in a PEM text, in order; throws naming the first that does not parse. */
export function parsePemCertificates(pem: string, what: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw new Error(`${what}: no PEM certificate in it`);
  return blocks.map((b, i) => {
    try {
      return new X509Certificate(b);
    } catch {
      throw new Error(`${what}: certificate ${i + 1} does not parse`);
    }
  });
}

let systemAnchorsCache: ChainCert[] | undefined;

/** Node's bundled root store (the one tls.connect trusts by default). */
function systemAnchors(): ChainCert[] {
  systemAnchorsCache ??= tls.rootCertificates.flatMap((pem) => {
    try {
      return [toChainCert(new X509Certificate(pem))];
    } catch {
      return [];
    }
  });
  return systemAnchorsCache;
}

function anchorsFor(o: CheckOptions): ChainCert[] {
  return o.caPem === undefined ? systemAnchors() : parsePemCertificates(o.caPem, '--ca').map(toChainCert);
}

function refName(ref: ReferenceIdentity, raw: string): string {
  return ref.kind === 'ip' ? ref.address : ref.kind === 'dns' ? ref.name : JSON.stringify(raw);
}

function report(
  target: string,
  source: 'live' | 'file',
  served: X509Certificate[],
  o: CheckOptions,
  live:
    | {
        authorized: boolean;
        error: string | undefined;
        protocol: string | null;
        alpn: string | null;
        cipher: string | null;
      }
    | undefined,
  ref: { raw: string; id: ReferenceIdentity } | undefined,
): InspectReport {
  const [leaf, ...rest] = served as [X509Certificate, ...X509Certificate[]];
  const time = timeCheck(Date.parse(leaf.validFrom), Date.parse(leaf.validTo), o.nowMs);
  const hostMatch =
    ref === undefined
      ? undefined
      : { name: refName(ref.id, ref.raw), matches: hostnameMatches(leaf, ref.id) };
  const outcome = evaluateChecks({
    nodeAuthorized: live?.authorized,
    nodeError: live?.error,
    chain: buildChain(leaf, rest.map(toChainCert), anchorsFor(o)),
    time,
    hostMatch,
    weakKeys: keyStrength(served.map(keyFacts)),
    warnDays: o.warnDays,
  });
  return {
    target,
    source,
    ...describeCertificate(leaf),
    daysLeft: time.daysLeft,
    chain: served.map(describeCertificate),
    protocol: live?.protocol ?? null,
    alpn: live?.alpn ?? null,
    cipher: live?.cipher ?? null,
    ...outcome,
  };
}

/** Checks a PEM file: the first certificate is the leaf, the others its chain. */
export async function inspectFile(path: string, o: CheckOptions): Promise<InspectResult> {
  let served: X509Certificate[];
  try {
    served = parsePemCertificates(await readFile(path, 'utf8'), path);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    return { kind: 'error', reason: e.code !== undefined ? `${path}: cannot read (${e.code})` : e.message };
  }
  const ref =
    o.servername === undefined ? undefined : { raw: o.servername, id: referenceIdentity(o.servername) };
  return { kind: 'report', report: report(path, 'file', served, o, undefined, ref) };
}

export interface LiveTarget {
  host: string;
  port: number;
  timeoutMs: number;
  /** Resolves a host name (gatehouse check passes its address guard); default dns.lookup. */
  lookup?: import('node:net').LookupFunction;
}

/** The chain as served: the peer certificate, then issuerCertificate links until one is its own issuer. */
function servedChain(socket: tls.TLSSocket): X509Certificate[] {
  const out: X509Certificate[] = [];
  const seen = new Set<string>();
  let c: tls.DetailedPeerCertificate | undefined = socket.getPeerCertificate(true);
  while (c?.raw !== undefined && !seen.has(c.fingerprint256)) {
    seen.add(c.fingerprint256);
    out.push(new X509Certificate(c.raw));
    c = c.issuerCertificate;
  }
  return out;
}

const CONNECT_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset during the handshake',
  ENOTFOUND: 'DNS: no such host',
  EAI_AGAIN: 'DNS: lookup failed (temporary)',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
};

/** Connects, lets Node verify (without refusing), and reports. The host check is our own. */
export function inspectLive(t: LiveTarget, o: CheckOptions): Promise<InspectResult> {
  const label = `${t.host.includes(':') ? `[${t.host}]` : t.host}:${t.port}`;
  const raw = o.servername ?? t.host;
  const nameRef = referenceIdentity(raw);
  // RFC 6066 §3: SNI carries host names only, never an IP literal.
  const sni = nameRef.kind === 'dns' ? nameRef.name : undefined;
  return new Promise((resolve) => {
    const socket = tls.connect({
      host: t.host,
      port: t.port,
      ...(t.lookup === undefined ? {} : { lookup: t.lookup }),
      ...(sni !== undefined ? { servername: sni } : {}),
      ...(o.caPem !== undefined ? { ca: o.caPem } : {}),
      ALPNProtocols: ['h2', 'http/1.1'],
      rejectUnauthorized: false,
      checkServerIdentity: () => undefined,
    });
    const fail = (reason: string) => {
      socket.destroy();
      resolve({ kind: 'error', reason: `${label}: ${reason}` });
    };
    socket.setTimeout(t.timeoutMs, () => fail(`timed out after ${t.timeoutMs} ms`));
    socket.once('error', (err: NodeJS.ErrnoException) => {
      const known = err.code === undefined ? undefined : CONNECT_ERRORS[err.code];
      fail(known ?? `TLS handshake failed: ${err.code ?? err.message}`);
    });
    socket.once('secureConnect', () => {
      const served = servedChain(socket);
      if (served.length === 0) return fail('the server sent no certificate');
      const err = socket.authorizationError;
      const cipher = socket.getCipher();
      const live = {
        authorized: socket.authorized,
        // A string code such as UNABLE_TO_VERIFY_LEAF_SIGNATURE (typed as Error by @types/node).
        error: err === null || err === undefined ? undefined : String(err),
        protocol: socket.getProtocol(),
        alpn: typeof socket.alpnProtocol === 'string' ? socket.alpnProtocol : null,
        cipher: cipher.standardName ?? cipher.name,
      };
      socket.destroy();
      resolve({ kind: 'report', report: report(label, 'live', served, o, live, { raw, id: nameRef }) });
    });
  });
}
