// When to renew an ACME certificate and how long to wait after a failure. Pure: the clock and the
// randomness are parameters, so the schedule is table-tested.

/** The instant `fraction` of the lifetime [notBefore, notAfter] has passed (2/3). */
export function renewAtMs(notBeforeMs: number, notAfterMs: number, fraction: number): number {
  return notBeforeMs + Math.floor((notAfterMs - notBeforeMs) * fraction);
}

export interface BackoffOptions {
  /** The first delay (attempt 0), before jitter. */
  baseMs: number;
  /** The cap, before jitter. */
  maxMs: number;
}

/** Production: 1 min after the first failure, doubling up to 1 h. */
export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 60_000, maxMs: 3_600_000 };

/**
 * The wait before retry number `attempt` (0 after the first failure): capped exponential backoff,
 * `min(maxMs, baseMs * 2^attempt)`, with "equal jitter": half fixed, half drawn from `random()` in
 * [0, 1), so many servers failing together do not retry in step and no wait falls below half the step.
 */
export function retryDelayMs(
  attempt: number,
  random: () => number,
  o: BackoffOptions = DEFAULT_BACKOFF,
): number {
  const n = Math.max(0, Math.floor(attempt));
  // 2^n overflows to Infinity long after the cap; min() keeps it finite.
  const stepMs = Math.min(o.maxMs, o.baseMs * 2 ** Math.min(n, 1024));
  const drawn = random();
  const r = Number.isFinite(drawn) ? Math.min(Math.max(drawn, 0), 1) : 0;
  return Math.floor(stepMs / 2 + (stepMs / 2) * r);
}

/** What the stored certificate is worth now. */
export type CertificatePlan =
  | { kind: 'use'; renewAtMs: number }
  | { kind: 'use-and-renew'; reason: 'due for renewal' }
  | { kind: 'order'; reason: 'none stored' | 'expired' | 'names changed' };

export interface StoredFacts {
  notBeforeMs: number;
  notAfterMs: number;
  /** Every configured domain is among the certificate's DNS names. */
  coversDomains: boolean;
}

/**
 * Decides from the stored certificate (or none) whether to serve it, serve it and renew now, or
 * order one before there is anything to serve.
 */
export function planCertificate(
  stored: StoredFacts | undefined,
  nowMs: number,
  fraction: number,
): CertificatePlan {
  if (stored === undefined) return { kind: 'order', reason: 'none stored' };
  if (!stored.coversDomains) return { kind: 'order', reason: 'names changed' };
  if (nowMs >= stored.notAfterMs) return { kind: 'order', reason: 'expired' };
  // A notBefore ahead of our clock (CA clock skew) is still used: ordering again would get the same.
  const at = renewAtMs(stored.notBeforeMs, stored.notAfterMs, fraction);
  if (nowMs >= at) return { kind: 'use-and-renew', reason: 'due for renewal' };
  return { kind: 'use', renewAtMs: at };
}
