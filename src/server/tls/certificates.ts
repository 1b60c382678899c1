// The certificates a TLS listener serves: the default pair and the SNI names (RFC 6066 §3), read from
// PEM files or handed in (ACME, the dev CA). A reload builds every context first and swaps them in
// one step, so a bad new pair never replaces a good one: connections in flight keep the context they
// were made with, new ones get the new one.
import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createSecureContext, type SecureContext } from 'node:tls';
import { cipherString, TLS_SECURE_OPTIONS } from './ciphers.js';
import type { CertFiles, TlsOptions } from './options.js';

/** A chain and key in memory (PEM). */
export interface PemPair {
  readonly cert: string;
  readonly key: string;
}

/** Why a pair was refused: the file (or source) and the reason, one line. */
export class CertificateError extends Error {
  constructor(
    readonly source: string,
    reason: string,
  ) {
    super(`${source}: ${reason}`);
    this.name = 'CertificateError';
  }
}

/** The contexts in use: swapped whole on reload. */
interface Contexts {
  readonly fallback: SecureContext | undefined;
  /** The default pair itself: node's server takes its default as options (setSecureContext). */
  readonly fallbackPair: PemPair | undefined;
  /** minVersion, the suites and the extra CA the contexts were built with. */
  readonly options: ContextOptions;
  /** Exact names, lower case. */
  readonly exact: ReadonlyMap<string, SecureContext>;
  /** `*.example.com` stored as `example.com`: matches exactly one more label (RFC 6125 §6.4.3). */
  readonly wildcard: ReadonlyMap<string, SecureContext>;
  /** The SNI pairs as read, for servers that take PEM text (Bun.serve). */
  readonly sniPairs: readonly NamedPair[];
}

/** A pair served for one SNI name (`*.` names included). */
export interface NamedPair extends PemPair {
  readonly serverName: string;
}

export interface CertificateStore {
  /** The context for a ClientHello's server name (undefined: the default one). */
  forName(servername: string): SecureContext | undefined;
  /** The default pair (what a client without SNI, e.g. one dialing an IP address, gets). */
  readonly defaultPair: PemPair | undefined;
  /** The per-name pairs, checked as the contexts are. */
  readonly sniPairs: readonly NamedPair[];
  /** TLS options for the server's default context (node:tls setSecureContext). */
  readonly contextOptions: ContextOptions;
  /** Re-reads the files; on any bad pair nothing changes and the error names the file. */
  reload(): Promise<void>;
  /** Replaces the default pair with one held in memory (ACME, the dev CA). */
  setDefault(pair: PemPair, source: string): void;
  /** The files a watcher should follow. */
  readonly files: readonly string[];
}

/** What every context (the default one and each SNI one) is built with, so a certificate chosen by
 *  SNI is served on the same terms. */
export type ContextOptions = Pick<TlsOptions, 'minVersion'> & {
  /** OpenSSL's colon-separated list (ciphers.ts cipherString). */
  ciphers: string;
  /** SSL_OP_* flags (ciphers.ts TLS_SECURE_OPTIONS: no renegotiation). */
  secureOptions: number;
  ca?: string | undefined;
};

/**
 * Builds a context from a pair, refusing what would fail at handshake time: no certificate, a key
 * that does not belong to it (OpenSSL checks this), a certificate outside its validity window is
 * allowed (logged by the caller), since serving an expired one beats serving none.
 */
export function contextFor(pair: PemPair, source: string, o: ContextOptions): SecureContext {
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(pair.cert);
  } catch (err) {
    throw new CertificateError(source, `not a PEM certificate (${(err as Error).message})`);
  }
  try {
    return createSecureContext({ cert: pair.cert, key: pair.key, ...o });
  } catch (err) {
    const code = (err as { code?: string }).code ?? '';
    const why = code.includes('KEY_VALUES_MISMATCH')
      ? `the key does not belong to the certificate (${leaf.subject.replace(/\n/g, ', ')})`
      : (err as Error).message;
    throw new CertificateError(source, why);
  }
}

async function readPair(f: CertFiles): Promise<PemPair> {
  const read = (p: string) =>
    readFile(p, 'utf8').catch((err: NodeJS.ErrnoException) => {
      throw new CertificateError(p, `cannot read (${err.code ?? err.message})`);
    });
  const [cert, key] = await Promise.all([read(f.cert), read(f.key)]);
  return { cert, key };
}

/** The store for `tls`, empty until the first reload() (the listener awaits it before listening). */
export function createCertificateStore(tls: TlsOptions): CertificateStore {
  const o: ContextOptions = {
    minVersion: tls.minVersion,
    ciphers: cipherString(tls.ciphers),
    secureOptions: TLS_SECURE_OPTIONS,
  };
  const defaultFiles =
    tls.cert !== undefined && tls.key !== undefined ? { cert: tls.cert, key: tls.key } : undefined;
  let memoryDefault: PemPair | undefined;

  const build = async (): Promise<Contexts> => {
    const caFile = tls.ca;
    const ca =
      caFile === undefined
        ? undefined
        : await readFile(caFile, 'utf8').catch((err: NodeJS.ErrnoException) => {
            throw new CertificateError(caFile, `cannot read (${err.code ?? err.message})`);
          });
    const opts: ContextOptions = { ...o, ca };
    const exact = new Map<string, SecureContext>();
    const wildcard = new Map<string, SecureContext>();
    const sniPairs: NamedPair[] = [];
    for (const [name, files] of Object.entries(tls.sni)) {
      const pair = await readPair(files);
      const ctx = contextFor(pair, files.cert, opts);
      sniPairs.push({ serverName: name, ...pair });
      const lower = name.toLowerCase();
      if (lower.startsWith('*.')) wildcard.set(lower.slice(2), ctx);
      else exact.set(lower, ctx);
    }
    const fallbackPair = defaultFiles === undefined ? memoryDefault : await readPair(defaultFiles);
    const fallback =
      fallbackPair === undefined
        ? undefined
        : contextFor(fallbackPair, defaultFiles?.cert ?? 'default', opts);
    return { fallback, fallbackPair, exact, wildcard, sniPairs, options: opts };
  };

  let contexts: Contexts = {
    fallback: undefined,
    fallbackPair: undefined,
    exact: new Map(),
    wildcard: new Map(),
    sniPairs: [],
    options: o,
  };
  const files = [
    ...(defaultFiles ? [defaultFiles.cert, defaultFiles.key] : []),
    ...Object.values(tls.sni).flatMap((f) => [f.cert, f.key]),
  ];
  return {
    get defaultPair() {
      return contexts.fallbackPair;
    },
    get sniPairs() {
      return contexts.sniPairs;
    },
    get contextOptions() {
      return contexts.options;
    },
    forName(servername) {
      const name = servername.toLowerCase().replace(/\.$/, '');
      const hit = contexts.exact.get(name);
      if (hit !== undefined) return hit;
      const dot = name.indexOf('.');
      return dot > 0 ? contexts.wildcard.get(name.slice(dot + 1)) : undefined;
    },
    async reload() {
      contexts = await build();
    },
    setDefault(pair, source) {
      const fallback = contextFor(pair, source, contexts.options);
      memoryDefault = pair;
      contexts = { ...contexts, fallback, fallbackPair: pair };
    },
    files,
  };
}
