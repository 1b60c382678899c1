// Automatic certificates over ACME (RFC 8555) with acme-client: the account and certificate keys
// (ECDSA P-256) are made once and kept in `storage`; a stored certificate that is valid and names
// every domain is served at once; an order runs when there is none, the names changed, or
// `renewAtFraction` of the lifetime has passed. HTTP-01 (§8.3) is answered from `challenges` by the
// plain-HTTP listener. Failures are logged and retried with backoff; the server keeps serving.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Logger } from '../ops/log.js';
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
  return new Manager(o);
}

/** The manager's state and steps: look at the storage, serve, order under the lock, schedule. */
class Manager implements AcmeManager {
  readonly challenges: AcmeChallenges;
  private readonly domains: string[];
  private readonly names: string;
  private readonly nowMs: () => number;
  private readonly random: () => number;
  private readonly retry: BackoffOptions;
  private readonly recheckMs: number;
  private readonly lockStaleMs: number;
  private readonly store: AcmeStore;
  private readonly tokens = new Map<string, string>();
  private readonly aborter = new AbortController();
  private readonly where: { domains: string[]; directory: string };
  private closed = false;
  private timer: NodeJS.Timeout | undefined;
  private current: Loaded | undefined;
  private nextRenewalMs: number | undefined;
  private lastError: string | undefined;
  private failures = 0;
  private running: Promise<void> | undefined;
  private acme: AcmeModule | undefined;
  private agent: DirectoryAgent | undefined;

  constructor(private readonly o: AcmeManagerOptions) {
    this.domains = [...new Set(o.domains.map((d) => d.toLowerCase()))];
    this.names = this.domains.join(', ');
    this.nowMs = o.nowMs ?? Date.now;
    this.random = o.random ?? Math.random;
    this.retry = o.retry ?? DEFAULT_BACKOFF;
    this.recheckMs = o.recheckMs ?? 3_600_000;
    this.lockStaleMs = o.lockStaleMs ?? LOCK_STALE_MS;
    this.store = createAcmeStore(o.storage, { staleMs: this.lockStaleMs });
    this.where = { domains: this.domains, directory: o.directory };
    this.challenges = { get: (token) => this.tokens.get(token) };
  }

  private schedule(delayMs: number, renewalAtMs: number): void {
    if (this.closed) return;
    clearTimeout(this.timer);
    this.nextRenewalMs = renewalAtMs;
    // setTimeout holds at most 2^31-1 ms; recheckMs also bounds how late another process's
    // certificate is noticed.
    this.timer = setTimeout(this.tick, Math.max(0, Math.min(delayMs, this.recheckMs, 2 ** 31 - 1)));
    this.timer.unref();
  }

  private use(loaded: Loaded): void {
    if (this.closed || loaded.fingerprint === this.current?.fingerprint) return;
    this.current = loaded;
    this.o.logger.info(
      { ...this.where, notAfterMs: loaded.notAfterMs },
      `acme: serving the certificate for ${this.names}, valid until ${new Date(loaded.notAfterMs).toISOString()}`,
    );
    try {
      this.o.onCertificate(loaded.pair);
    } catch (err) {
      this.o.logger.error(
        { ...this.where, err },
        `acme: the certificate for ${this.names} was refused: ${message(err)}`,
      );
    }
  }

  private async loadStored(): Promise<Loaded | undefined> {
    try {
      const cert = await this.store.read(STORE_FILES.certificate);
      const key = await this.store.read(STORE_FILES.certificateKey);
      if (cert === undefined || key === undefined) return undefined;
      return readPair({ cert, key }, this.domains);
    } catch (err) {
      this.o.logger.warn(
        { ...this.where, err },
        `acme: stored certificate for ${this.names} is unusable: ${message(err)}`,
      );
      return undefined;
    }
  }

  private async keyFile(name: string): Promise<string> {
    const have = await this.store.read(name);
    if (have !== undefined) return have;
    const made = (await (this.acme as AcmeModule).crypto.createPrivateEcdsaKey('P-256')).toString();
    await this.store.write(name, made);
    return made;
  }

  private async order(): Promise<CertificatePair> {
    const o = this.o;
    const lib = (this.acme ??= await loadAcmeClient());
    this.agent ??= new DirectoryAgent({
      keepAlive: false,
      ca: o.directoryCa === undefined ? undefined : await readFile(o.directoryCa, 'utf8'),
    });
    return orderCertificate({
      lib,
      agent: this.agent,
      directory: o.directory,
      email: o.email,
      domains: this.domains,
      accountKey: await this.keyFile(STORE_FILES.accountKey),
      certKey: await this.keyFile(STORE_FILES.certificateKey),
      poll: o.poll,
      requestTimeoutMs: o.requestTimeoutMs ?? 30_000,
      signal: this.aborter.signal,
      tokens: this.tokens,
      onTermsOfService: (tos) =>
        o.logger.info({ ...this.where, tos }, `acme: terms of service agreed: ${tos}`),
    });
  }

  private failed(err: unknown): void {
    this.lastError = message(err);
    const delayMs = retryDelayMs(this.failures, this.random, this.retry);
    this.failures++;
    this.o.logger.error(
      { ...this.where, attempt: this.failures, retryInMs: delayMs, err },
      `acme: order for ${this.names} failed: ${this.lastError} (directory ${this.o.directory}; attempt ${this.failures}, retry in ${wait(delayMs)})`,
    );
    this.schedule(delayMs, this.nowMs() + delayMs);
  }

  /** Serves a stored pair unless it must be replaced; true when it needs no order now (scheduled). */
  private serveStored(stored: Loaded | undefined): boolean {
    const plan = planCertificate(stored, this.nowMs(), this.o.renewAtFraction);
    if (stored && plan.kind !== 'order') this.use(stored);
    if (plan.kind !== 'use') return false;
    this.schedule(plan.renewAtMs - this.nowMs(), plan.renewAtMs);
    return true;
  }

  /** Looks at the storage, serves what is there, and orders under the lock when needed. */
  private async check(): Promise<void> {
    if (this.serveStored(await this.loadStored())) {
      this.failures = 0;
      this.lastError = undefined;
      return;
    }
    const lock = await this.store.tryLock(this.nowMs());
    if (lock.kind === 'busy') {
      const waitMs = retryDelayMs(0, this.random, this.retry);
      const pid = lock.holder ? `pid ${lock.holder.pid} on ${lock.holder.host}` : 'another process';
      this.o.logger.info(
        this.where,
        `acme: ${pid} is ordering for ${this.names}; looking again in ${wait(waitMs)}`,
      );
      return this.schedule(waitMs, this.nowMs() + waitMs);
    }
    try {
      // Another process may have finished while we waited for the lock.
      const again = await this.loadStored();
      if (this.serveStored(again)) return;
      await this.orderAndServe(lock, planCertificate(again, this.nowMs(), this.o.renewAtFraction));
    } finally {
      await lock.release();
    }
  }

  /** The order itself, the lock kept fresh while it runs; the new pair stored, served, scheduled. */
  private async orderAndServe(
    lock: { refresh(nowMs: number): Promise<unknown> },
    plan: ReturnType<typeof planCertificate>,
  ): Promise<void> {
    const { o, names, where } = this;
    const reason = plan.kind === 'use' ? 'renewal' : plan.reason;
    o.logger.info(
      where,
      `acme: ordering a certificate for ${names} from ${o.directory} (${reason}; HTTP-01 on port ${o.httpPort ?? 80})`,
    );
    // Keep the lock fresh while the order runs: a long one must not look abandoned.
    const stamp = setInterval(() => void lock.refresh(this.nowMs()).catch(() => {}), this.lockStaleMs / 4);
    stamp.unref();
    const pair = await this.order().finally(() => clearInterval(stamp));
    const issued = readPair(pair, this.domains);
    if (!issued.coversDomains) throw new Error('the issued certificate does not name every domain');
    if (this.closed) return;
    await this.store.write(STORE_FILES.certificate, pair.cert);
    this.use(issued);
    this.failures = 0;
    this.lastError = undefined;
    const next = planCertificate(issued, this.nowMs(), o.renewAtFraction);
    const atMs = next.kind === 'use' ? next.renewAtMs : this.nowMs();
    o.logger.info(
      { ...where, notAfterMs: issued.notAfterMs, renewAtMs: atMs },
      `acme: certificate for ${names} issued, valid until ${new Date(issued.notAfterMs).toISOString()}, renewal at ${new Date(atMs).toISOString()}`,
    );
    // Never order again sooner than the first backoff step, whatever the lifetime.
    const waitMs = Math.max(atMs - this.nowMs(), this.retry.baseMs);
    this.schedule(waitMs, this.nowMs() + waitMs);
  }

  private readonly tick = (): void => {
    if (this.closed || this.running) return;
    this.running = this.check()
      .catch((err: unknown) => {
        if (!this.closed) this.failed(err);
      })
      .finally(() => {
        this.running = undefined;
      });
  };

  async start(): Promise<void> {
    try {
      await this.store.ensureDir();
      const stored = await this.loadStored();
      if (stored && planCertificate(stored, this.nowMs(), this.o.renewAtFraction).kind !== 'order')
        this.use(stored);
    } catch (err) {
      this.o.logger.error(
        { ...this.where, err },
        `acme: storage ${this.o.storage} for ${this.names}: ${message(err)}`,
      );
    }
    this.tick();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.aborter.abort(new Error('acme manager closed'));
    this.agent?.destroy();
  }

  status(): { notAfterMs?: number; nextRenewalMs?: number; lastError?: string } {
    return {
      ...(this.current && { notAfterMs: this.current.notAfterMs }),
      ...(this.nextRenewalMs !== undefined && { nextRenewalMs: this.nextRenewalMs }),
      ...(this.lastError !== undefined && { lastError: this.lastError }),
    };
  }
}
