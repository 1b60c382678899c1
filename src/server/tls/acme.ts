// Automatic certificates over ACME (RFC 8555) with acme-client: the account and certificate keys
// (ECDSA P-256) are made once and kept in `storage`; a stored certificate that is valid and names
// every domain is served at once; an order runs when there is none, the names changed, or
// `renewAtFraction` of the lifetime has passed. HTTP-01 (§8.3) is answered from `challenges` by the
// plain-HTTP listener. Failures are logged and retried with backoff; the server keeps serving.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Logger } from '../log.js';
import type { AcmeChallenges } from './acme-challenge.js';
import {
  type AcmeModule,
  type CertificatePair,
  DirectoryAgent,
  loadAcmeClient,
  message,
  orderCertificate,
} from './acme-order.js';
import { type AcmeStore, createAcmeStore, LOCK_STALE_MS, STORE_FILES } from './acme-store.js';
import type { AcmeOptions } from './options.js';
import { type BackoffOptions, DEFAULT_BACKOFF, planCertificate, retryDelayMs } from './renewal.js';

export type { AcmeChallengeAnswer, AcmeChallenges } from './acme-challenge.js';
export { answerAcmeChallenge } from './acme-challenge.js';
export type { CertificatePair } from './acme-order.js';
export { createAcmeChallengeStep } from './acme-step.js';

export interface AcmeManager {
  readonly challenges: AcmeChallenges;
  /** Loads a stored certificate (calls onCertificate at once when one is valid), then orders or renews in the background. Never rejects for ACME failures: they are logged and retried. */
  start(): Promise<void>;
  /** Stops timers and in-flight retries. */
  close(): void;
  /** For logs/health: the current certificate's notAfter, the next renewal time, the last error. */
  status(): { notAfterMs?: number; nextRenewalMs?: number; lastError?: string };
}

export interface AcmeManagerOptions extends AcmeOptions {
  logger: Logger;
  onCertificate: (pair: CertificatePair) => void;
  nowMs?: () => number;
  random?: () => number;
  /** Where HTTP-01 validation reaches us: only informative (for log lines). */
  httpPort?: number;
  /** Waits after failures (default 1 min doubling to 1 h, jittered); tests pass milliseconds. */
  retry?: BackoffOptions;
  /** The longest timer: the storage is looked at again at least this often (default 1 h), so a certificate another process ordered is picked up. */
  recheckMs?: number;
  /** acme-client's polling of challenge and order status (default 5 s .. 30 s). */
  poll?: { minMs: number; maxMs: number };
  /** Each HTTP request to the directory (default 30 s). */
  requestTimeoutMs?: number;
  /** A lock older than this is taken over (default 10 min). */
  lockStaleMs?: number;
}

/** What a stored pair is, read once per look at the storage. */
interface Loaded {
  pair: CertificatePair;
  fingerprint: string;
  notBeforeMs: number;
  notAfterMs: number;
  coversDomains: boolean;
}

/** The DNS names of a certificate's subjectAltName (RFC 5280 §4.2.1.6), lower-cased. */
function dnsNames(cert: X509Certificate): Set<string> {
  const names = new Set<string>();
  for (const part of (cert.subjectAltName ?? '').split(', '))
    if (part.startsWith('DNS:')) names.add(part.slice(4).toLowerCase());
  return names;
}

/** Parses a stored chain and key; throws with the reason when they are unusable. */
export function readPair(pair: CertificatePair, domains: readonly string[]): Loaded {
  const leaf = new X509Certificate(pair.cert);
  if (!leaf.checkPrivateKey(createPrivateKey(pair.key)))
    throw new Error('the certificate does not match its key');
  const names = dnsNames(leaf);
  return {
    pair,
    fingerprint: leaf.fingerprint256,
    notBeforeMs: Date.parse(leaf.validFrom),
    notAfterMs: Date.parse(leaf.validTo),
    coversDomains: domains.every((d) => names.has(d.toLowerCase())),
  };
}

/** A wait for a log line: `750 ms`, `42 s`, `15 min`. */
function wait(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return ms < 120_000 ? `${Math.round(ms / 1000)} s` : `${Math.round(ms / 60_000)} min`;
}

export function createAcmeManager(o: AcmeManagerOptions): AcmeManager {
  if (o.domains.length === 0) throw new Error('tls.acme.domains: at least one name is needed');
  if (!(o.renewAtFraction > 0 && o.renewAtFraction < 1))
    throw new Error('tls.acme.renewAtFraction: must be between 0 and 1');
  const domains = [...new Set(o.domains.map((d) => d.toLowerCase()))];
  const names = domains.join(', ');
  const nowMs = o.nowMs ?? Date.now;
  const random = o.random ?? Math.random;
  const retry = o.retry ?? DEFAULT_BACKOFF;
  const recheckMs = o.recheckMs ?? 3_600_000;
  const lockStaleMs = o.lockStaleMs ?? LOCK_STALE_MS;
  const store: AcmeStore = createAcmeStore(o.storage, { staleMs: lockStaleMs });
  const tokens = new Map<string, string>();
  const aborter = new AbortController();
  const where = { domains, directory: o.directory };

  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let current: Loaded | undefined;
  let nextRenewalMs: number | undefined;
  let lastError: string | undefined;
  let failures = 0;
  let running: Promise<void> | undefined;
  let acme: AcmeModule | undefined;
  let agent: DirectoryAgent | undefined;

  function schedule(delayMs: number, renewalAtMs: number): void {
    if (closed) return;
    clearTimeout(timer);
    nextRenewalMs = renewalAtMs;
    // setTimeout holds at most 2^31-1 ms; recheckMs also bounds how late another process's
    // certificate is noticed.
    timer = setTimeout(tick, Math.max(0, Math.min(delayMs, recheckMs, 2 ** 31 - 1)));
    timer.unref();
  }

  function use(loaded: Loaded): void {
    if (closed || loaded.fingerprint === current?.fingerprint) return;
    current = loaded;
    o.logger.info(
      { ...where, notAfterMs: loaded.notAfterMs },
      `acme: serving the certificate for ${names}, valid until ${new Date(loaded.notAfterMs).toISOString()}`,
    );
    try {
      o.onCertificate(loaded.pair);
    } catch (err) {
      o.logger.error({ ...where, err }, `acme: the certificate for ${names} was refused: ${message(err)}`);
    }
  }

  async function loadStored(): Promise<Loaded | undefined> {
    try {
      const [cert, key] = [
        await store.read(STORE_FILES.certificate),
        await store.read(STORE_FILES.certificateKey),
      ];
      if (cert === undefined || key === undefined) return undefined;
      return readPair({ cert, key }, domains);
    } catch (err) {
      o.logger.warn({ ...where, err }, `acme: stored certificate for ${names} is unusable: ${message(err)}`);
      return undefined;
    }
  }

  async function keyFile(name: string): Promise<string> {
    const have = await store.read(name);
    if (have !== undefined) return have;
    const made = (await (acme as AcmeModule).crypto.createPrivateEcdsaKey('P-256')).toString();
    await store.write(name, made);
    return made;
  }

  async function order(): Promise<CertificatePair> {
    const lib = (acme ??= await loadAcmeClient());
    agent ??= new DirectoryAgent({
      keepAlive: false,
      ca: o.directoryCa === undefined ? undefined : await readFile(o.directoryCa, 'utf8'),
    });
    return orderCertificate({
      lib,
      agent,
      directory: o.directory,
      email: o.email,
      domains,
      accountKey: await keyFile(STORE_FILES.accountKey),
      certKey: await keyFile(STORE_FILES.certificateKey),
      poll: o.poll,
      requestTimeoutMs: o.requestTimeoutMs ?? 30_000,
      signal: aborter.signal,
      tokens,
      onTermsOfService: (tos) => o.logger.info({ ...where, tos }, `acme: terms of service agreed: ${tos}`),
    });
  }

  function failed(err: unknown): void {
    lastError = message(err);
    const delayMs = retryDelayMs(failures, random, retry);
    failures++;
    o.logger.error(
      { ...where, attempt: failures, retryInMs: delayMs, err },
      `acme: order for ${names} failed: ${lastError} (directory ${o.directory}; attempt ${failures}, retry in ${wait(delayMs)})`,
    );
    schedule(delayMs, nowMs() + delayMs);
  }

  /** Looks at the storage, serves what is there, and orders under the lock when needed. */
  async function check(): Promise<void> {
    const stored = await loadStored();
    let plan = planCertificate(stored, nowMs(), o.renewAtFraction);
    if (stored && plan.kind !== 'order') use(stored);
    if (plan.kind === 'use') {
      failures = 0;
      lastError = undefined;
      return schedule(plan.renewAtMs - nowMs(), plan.renewAtMs);
    }
    const lock = await store.tryLock(nowMs());
    if (lock.kind === 'busy') {
      const waitMs = retryDelayMs(0, random, retry);
      const pid = lock.holder ? `pid ${lock.holder.pid} on ${lock.holder.host}` : 'another process';
      o.logger.info(where, `acme: ${pid} is ordering for ${names}; looking again in ${wait(waitMs)}`);
      return schedule(waitMs, nowMs() + waitMs);
    }
    try {
      // Another process may have finished while we waited for the lock.
      const again = await loadStored();
      plan = planCertificate(again, nowMs(), o.renewAtFraction);
      if (again && plan.kind !== 'order') use(again);
      if (plan.kind === 'use') return schedule(plan.renewAtMs - nowMs(), plan.renewAtMs);
      o.logger.info(
        where,
        `acme: ordering a certificate for ${names} from ${o.directory} (${plan.reason}; HTTP-01 on port ${o.httpPort ?? 80})`,
      );
      // Keep the lock fresh while the order runs: a long one must not look abandoned.
      const stamp = setInterval(() => void lock.refresh(nowMs()).catch(() => {}), lockStaleMs / 4);
      stamp.unref();
      const pair = await order().finally(() => clearInterval(stamp));
      const issued = readPair(pair, domains);
      if (!issued.coversDomains) throw new Error('the issued certificate does not name every domain');
      if (closed) return;
      await store.write(STORE_FILES.certificate, pair.cert);
      use(issued);
      failures = 0;
      lastError = undefined;
      const next = planCertificate(issued, nowMs(), o.renewAtFraction);
      const atMs = next.kind === 'use' ? next.renewAtMs : nowMs();
      o.logger.info(
        { ...where, notAfterMs: issued.notAfterMs, renewAtMs: atMs },
        `acme: certificate for ${names} issued, valid until ${new Date(issued.notAfterMs).toISOString()}, renewal at ${new Date(atMs).toISOString()}`,
      );
      // Never order again sooner than the first backoff step, whatever the lifetime.
      const waitMs = Math.max(atMs - nowMs(), retry.baseMs);
      schedule(waitMs, nowMs() + waitMs);
    } finally {
      await lock.release();
    }
  }

  function tick(): void {
    if (closed || running) return;
    running = check()
      .catch((err: unknown) => {
        if (!closed) failed(err);
      })
      .finally(() => {
        running = undefined;
      });
  }

  return {
    challenges: { get: (token) => tokens.get(token) },
    async start() {
      try {
        await store.ensureDir();
        const stored = await loadStored();
        if (stored && planCertificate(stored, nowMs(), o.renewAtFraction).kind !== 'order') use(stored);
      } catch (err) {
        o.logger.error({ ...where, err }, `acme: storage ${o.storage} for ${names}: ${message(err)}`);
      }
      tick();
    },
    close() {
      closed = true;
      clearTimeout(timer);
      aborter.abort(new Error('acme manager closed'));
      agent?.destroy();
    },
    status() {
      return {
        ...(current && { notAfterMs: current.notAfterMs }),
        ...(nextRenewalMs !== undefined && { nextRenewalMs }),
        ...(lastError !== undefined && { lastError }),
      };
    },
  };
}
