// Token-bucket rate limiting and the RateLimit / RateLimit-Policy fields of
// draft-ietf-httpapi-ratelimit-headers-11 (May 2026), the latest revision when this was written.
// Pure: the bucket state goes in and comes out, and the clock is the caller's `nowMs`.

export interface TokenBucketPolicy {
  /** Tokens added per second (the sustained request rate); > 0. */
  readonly ratePerSec: number;
  /** Bucket size: requests allowed at once after an idle period; an integer >= 1. */
  readonly burst: number;
}

export interface BucketState {
  /** Tokens in the bucket at `updatedMs`, 0..burst (fractional while refilling). */
  readonly tokens: number;
  readonly updatedMs: number;
}

export type TakeResult =
  | {
      readonly kind: 'allowed';
      readonly state: BucketState;
      /** Whole tokens left after this request: the draft's `r` (§4.1.1). */
      readonly remaining: number;
      /** Seconds until another whole token arrives: the draft's `t` (§4.1.2), >= 1. */
      readonly resetSec: number;
    }
  | {
      readonly kind: 'limited';
      readonly state: BucketState;
      /** Seconds until one token is available: Retry-After (RFC 9110 §10.2.3) and `t`, >= 1. */
      readonly retryAfterSec: number;
    };

/** The policy name in both fields; one policy per server. */
export const RATE_LIMIT_POLICY_NAME = 'default';

/** Whole seconds, rounded up, with float noise (1.0000000001) not counted as another second. */
function ceilSec(sec: number): number {
  return Math.max(1, Math.ceil(sec - 1e-9));
}

/**
 * Refills the bucket for the time since `state.updatedMs` and takes `cost` tokens if it holds them.
 * A missing state is a full bucket (an unknown or evicted client has been idle). A clock that went
 * backwards adds nothing. A refused request takes nothing, so hammering does not push recovery out.
 *
 * `t` (draft-11 §4.1.2, "the number of seconds within which the client can use no more than the
 * available quota") is, for a bucket that refills continuously, the time until the next whole token:
 * before then the client can use exactly `r` more. On a refusal `r` is 0 and `t` equals Retry-After,
 * so Retry-After never points before the end of the effective window (draft-11 §6).
 */
export function takeToken(
  state: BucketState | undefined,
  policy: TokenBucketPolicy,
  nowMs: number,
  cost = 1,
): TakeResult {
  const { ratePerSec, burst } = policy;
  let tokens = burst;
  if (state !== undefined) {
    const elapsedSec = Math.max(0, nowMs - state.updatedMs) / 1000;
    tokens = Math.min(burst, state.tokens + elapsedSec * ratePerSec);
  }
  if (tokens + 1e-9 >= cost) {
    const left = Math.max(0, tokens - cost);
    const remaining = Math.floor(left + 1e-9);
    return {
      kind: 'allowed',
      state: { tokens: left, updatedMs: nowMs },
      remaining,
      resetSec: ceilSec((remaining + 1 - left) / ratePerSec),
    };
  }
  return {
    kind: 'limited',
    state: { tokens, updatedMs: nowMs },
    retryAfterSec: ceilSec((cost - tokens) / ratePerSec),
  };
}

/** True when the state is a full bucket at `nowMs` (it can be forgotten without changing anything). */
export function isBucketFull(state: BucketState, policy: TokenBucketPolicy, nowMs: number): boolean {
  return state.tokens + (Math.max(0, nowMs - state.updatedMs) / 1000) * policy.ratePerSec >= policy.burst;
}

/**
 * The window advertised with the quota: the seconds an empty bucket takes to fill (burst / rate),
 * rounded up to a whole second (draft-11 §3.1.3: w is a positive integer, no sub-second precision).
 * `q=burst;w=window` is exact for a client that starts empty and waits; a bucket that starts full
 * allows up to twice q in the first window, so the advertised policy is the conservative reading.
 */
export function policyWindowSec(policy: TokenBucketPolicy): number {
  return ceilSec(policy.burst / policy.ratePerSec);
}

/** `RateLimit-Policy: "default";q=<burst>;w=<window>` (draft-11 §3, §3.1: the item is a String). */
export function formatRateLimitPolicy(policy: TokenBucketPolicy, name = RATE_LIMIT_POLICY_NAME): string {
  return `"${name}";q=${Math.floor(policy.burst)};w=${policyWindowSec(policy)}`;
}

/** `RateLimit: "default";r=<remaining>;t=<seconds>` (draft-11 §4, §4.1). */
export function formatRateLimit(remaining: number, resetSec: number, name = RATE_LIMIT_POLICY_NAME): string {
  return `"${name}";r=${Math.max(0, Math.floor(remaining))};t=${Math.max(0, Math.ceil(resetSec))}`;
}
