// Automatic certificates over ACME (RFC 8555) with acme-client: the account and certificate keys
// (ECDSA P-256) are made once and kept in `storage`; a stored certificate that is valid and names
// every domain is served at once; an order runs when there is none, the names changed, or
// `renewAtFraction` of the lifetime has passed. HTTP-01 (§8.3) is answered from `challenges` by the
// plain-HTTP listener. Failures are logged and retried with backoff; the server keeps serving.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Agent } from 'node:https';
import type { Logger } from '../log.js';
import type { AcmeChallenges } from './acme-challenge.js';
import { type AcmeStore, createAcmeStore, STORE_FILES } from './acme-store.js';
import type { AcmeOptions } from './options.js';
import { type BackoffOptions, DEFAULT_BACKOFF, planCertificate, retryDelayMs } from './renewal.js';

export type { AcmeChallengeAnswer, AcmeChallenges } from './acme-challenge.js';
export { answerAcmeChallenge } from './acme-challenge.js';

export interface CertificatePair {
  /** PEM chain: the leaf, then the intermediates. */
  cert: string;
  /** PEM private key. */
  key: string;
}

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

type AcmeModule = typeof import('acme-client');
type AcmeClient = InstanceType<AcmeModule['Client']>;

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

/** One line for a log. */
function message(err: unknown): string {
  if (!(err instanceof Error)) return String(err).replace(/\s+/g, ' ');
  return (err.message || (err as NodeJS.ErrnoException).code || err.name).replace(/\s+/g, ' ');
}

/** Runs one step of the order, prefixing a failure with the step's name. */
async function step<T>(label: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw new Error(`${label}: ${message(err)}`, { cause: err });
  }
}

/**
 * The directory's agent: trusts `directoryCa` for the directory only (never process-wide) and keeps
 * the last socket error. acme-client 5.4 loses a request's network error (its axios interceptor
 * reads `response.config` of an error without a response and throws a TypeError instead), so the
 * reason is taken from here.
 */
class DirectoryAgent extends Agent {
  lastSocketError: NodeJS.ErrnoException | undefined;
  override createConnection(...args: Parameters<Agent['createConnection']>) {
    const socket = super.createConnection(...args);
    socket?.on('error', (err: NodeJS.ErrnoException) => {
      this.lastSocketError = err;
    });
    return socket;
  }
}

/**
 * Routes every request of this client through our agent, a timeout and an abort signal, and turns
 * off acme-client's axios retries (up to 75 s of 5 s steps): our backoff retries the whole order.
 */
function confine(client: AcmeClient, agent: DirectoryAgent, timeoutMs: number, signal: AbortSignal): void {
  const http = (client as unknown as { http?: { request?: unknown } }).http;
  if (typeof http?.request !== 'function') throw new Error('acme-client has no http.request to configure');
  const request = http.request as (url: string, method: string, opts?: object) => Promise<unknown>;
  http.request = async function confined(url: string, method: string, opts: object = {}) {
    signal.throwIfAborted();
    agent.lastSocketError = undefined;
    try {
      return await request.call(this, url, method, {
        ...opts,
        httpsAgent: agent,
        timeout: timeoutMs,
        signal,
        retryAttempt: Number.MAX_SAFE_INTEGER,
      });
    } catch (err) {
      if ((err as { response?: unknown }).response !== undefined) throw err;
      const net = agent.lastSocketError as NodeJS.ErrnoException | undefined; // set by the socket meanwhile
      if (net) throw new Error(`unreachable (${net.code ?? 'socket error'}): ${net.message}`, { cause: err });
      signal.throwIfAborted();
      if (err instanceof TypeError) throw new Error(`no answer within ${timeoutMs} ms`, { cause: err });
      throw err;
    }
  };
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
  const store: AcmeStore = createAcmeStore(o.storage, { staleMs: o.lockStaleMs });
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

  /** One order (RFC 8555 §7.4): account, order, HTTP-01 for each name, finalize, download. */
  async function order(): Promise<CertificatePair> {
    const lib = (acme ??= ((await import('acme-client')) as { default: AcmeModule }).default);
    agent ??= new DirectoryAgent({
      keepAlive: false,
      ca: o.directoryCa === undefined ? undefined : await readFile(o.directoryCa, 'utf8'),
    });
    const [accountKey, certKey] = [
      await keyFile(STORE_FILES.accountKey),
      await keyFile(STORE_FILES.certificateKey),
    ];
    const client = new lib.Client({
      directoryUrl: o.directory,
      accountKey,
      backoffMin: o.poll?.minMs ?? 5000,
      backoffMax: o.poll?.maxMs ?? 30_000,
    });
    confine(client, agent, o.requestTimeoutMs ?? 30_000, aborter.signal);
    const tos = await step(`directory ${o.directory}`, () => client.getTermsOfServiceUrl());
    // The terms of service are agreed to on the operator's behalf (README: "Automatic certificates").
    await step('account', () =>
      client.createAccount({ termsOfServiceAgreed: true, contact: [`mailto:${o.email}`] }),
    );
    if (tos) o.logger.info({ ...where, tos }, `acme: terms of service agreed: ${tos}`);
    const created = await step('new order', () =>
      client.createOrder({ identifiers: domains.map((value) => ({ type: 'dns', value })) }),
    );
    const authzs = await step('authorizations', () => client.getAuthorizations(created));
    const placed: string[] = [];
    try {
      for (const authz of authzs) {
        if (authz.status === 'valid') continue;
        const d = authz.identifier.value;
        const challenge = authz.challenges.find((c) => c.type === 'http-01');
        if (challenge === undefined) throw new Error(`challenge for ${d}: the CA offers no http-01`);
        const keyAuthorization = await client.getChallengeKeyAuthorization(challenge);
        tokens.set(challenge.token, keyAuthorization);
        placed.push(challenge.token);
        await step(`challenge for ${d}`, () => client.completeChallenge(challenge));
        await step(`challenge invalid for ${d}`, () => client.waitForValidStatus(challenge));
      }
      const [, csr] = await lib.crypto.createCsr({ commonName: domains[0], altNames: domains }, certKey);
      const finalized = await step('finalize', () => client.finalizeOrder(created, csr));
      const cert = await step('certificate download', () => client.getCertificate(finalized));
      return { cert, key: certKey };
    } finally {
      for (const t of placed) tokens.delete(t);
    }
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
      const pair = await order();
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
