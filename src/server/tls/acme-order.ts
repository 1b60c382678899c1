// One ACME order (RFC 8555 §7.4) with acme-client: account, new order, HTTP-01 for each name (§8.3),
// finalize with a CSR, download the chain. Each step names itself in a failure, and every request
// goes through the directory's own agent with a timeout and an abort signal.
import { Agent } from 'node:https';

/** A certificate chain and its key, as the TLS listener takes them. */
export interface CertificatePair {
  /** PEM chain: the leaf, then the intermediates. */
  cert: string;
  /** PEM private key. */
  key: string;
}

export type AcmeModule = typeof import('acme-client');
type AcmeClient = InstanceType<AcmeModule['Client']>;

/** acme-client, loaded on first use (it pulls in forge and axios: not for servers without ACME). */
export async function loadAcmeClient(): Promise<AcmeModule> {
  return ((await import('acme-client')) as { default: AcmeModule }).default;
}

/** One line for a log. */
export function message(err: unknown): string {
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
export class DirectoryAgent extends Agent {
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

export interface OrderInput {
  lib: AcmeModule;
  agent: DirectoryAgent;
  directory: string;
  email: string;
  /** Lower-cased, no duplicates; the first is the CSR's common name. */
  domains: readonly string[];
  accountKey: string;
  certKey: string;
  /** acme-client's polling of challenge and order status (default 5 s .. 30 s). */
  poll?: { minMs: number; maxMs: number } | undefined;
  requestTimeoutMs: number;
  signal: AbortSignal;
  /** The HTTP-01 table the plain-HTTP listener answers from: set while a challenge is pending. */
  tokens: Map<string, string>;
  onTermsOfService(url: string): void;
}

/** Orders a certificate for `domains`; throws an Error whose message names the failed step. */
export async function orderCertificate(i: OrderInput): Promise<CertificatePair> {
  const client = new i.lib.Client({
    directoryUrl: i.directory,
    accountKey: i.accountKey,
    backoffMin: i.poll?.minMs ?? 5000,
    backoffMax: i.poll?.maxMs ?? 30_000,
  });
  confine(client, i.agent, i.requestTimeoutMs, i.signal);
  const tos = await step(`directory ${i.directory}`, () => client.getTermsOfServiceUrl());
  // The terms of service are agreed to on the operator's behalf (README: "Automatic certificates").
  await step('account', () =>
    client.createAccount({ termsOfServiceAgreed: true, contact: [`mailto:${i.email}`] }),
  );
  if (tos) i.onTermsOfService(tos);
  const created = await step('new order', () =>
    client.createOrder({ identifiers: i.domains.map((value) => ({ type: 'dns', value })) }),
  );
  const authzs = await step('authorizations', () => client.getAuthorizations(created));
  const placed: string[] = [];
  try {
    for (const authz of authzs) {
      if (authz.status === 'valid') continue; // reused by the CA (RFC 8555 §7.1.4)
      const d = authz.identifier.value;
      const challenge = authz.challenges.find((c) => c.type === 'http-01');
      if (challenge === undefined) throw new Error(`challenge for ${d}: the CA offers no http-01`);
      i.tokens.set(challenge.token, await client.getChallengeKeyAuthorization(challenge));
      placed.push(challenge.token);
      await step(`challenge for ${d}`, () => client.completeChallenge(challenge));
      await client.waitForValidStatus(challenge).catch((err: unknown) => {
        const m = message(err);
        // acme-client's poll gives up with this text while the CA still says pending.
        if (m === 'Operation is pending or processing') throw new Error(`challenge for ${d} still pending`);
        throw new Error(`challenge invalid for ${d}: ${m}`, { cause: err });
      });
    }
    const [, csr] = await i.lib.crypto.createCsr(
      { commonName: i.domains[0], altNames: [...i.domains] },
      i.certKey,
    );
    const finalized = await step('finalize', () => client.finalizeOrder(created, csr));
    const cert = await step('certificate download', () => client.getCertificate(finalized));
    return { cert, key: i.certKey };
  } finally {
    for (const t of placed) i.tokens.delete(t);
  }
}
