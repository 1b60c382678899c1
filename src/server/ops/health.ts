// Health endpoints for load balancers: liveness (`/healthz`) and readiness (`/readyz`).
// A step at the very front of the gate: load balancers do not authenticate and must not be rate
// limited, and a probe says nothing about the request path, so it is not access-logged either.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { MemoryPressure, Step } from '../core/context.js';
import { ERRORS, sendError } from '../core/errors.js';
import type { ExchangeRequest, ResponseSink } from '../core/exchange.js';
import type { Feature } from '../core/feature.js';
import type { StepContext } from '../node/types.js';
import type { RedisConnection } from '../redis/connection.js';
import { quietAccessLog } from './log.js';

export interface HealthOptions {
  path: string;
  readyPath: string;
  /** Liveness is 503 when the event loop was blocked longer than this within the last second. */
  maxEventLoopDelayMs: number;
  /**
   * true: readiness is 503 while the top-level Redis is down. Unset: 503 until the top-level Redis
   * (when configured) has been reached once, so an instance whose Redis is mistyped or not up yet does
   * not join the pool; later outages keep it serving (the features fall back). false: never.
   */
  requireRedis?: boolean | undefined;
}

export type Probe = 'live' | 'ready';

/** What a probe sees: plain values, so the decision is a pure function. */
export interface HealthState {
  eventLoopDelayMs: number;
  maxEventLoopDelayMs: number;
  draining: boolean;
  /** undefined: no store is required. false: a required store is down (or not reached yet). */
  redisUp: boolean | undefined;
  /** The memory pressure watch's last decision (ops/pressure.ts); undefined: not watched. */
  memory?: MemoryPressure | undefined;
}

/** ok, with `memory` set while the caches shed under memory pressure (readiness reports it). */
export type HealthAnswer = { kind: 'ok'; memory?: string } | { kind: 'unavailable'; reason: string };

const OK: HealthAnswer = Object.freeze({ kind: 'ok' });

/**
 * Liveness: the loop answers in time. Readiness: live, not draining, required stores up, memory not at
 * its limit after shedding (then the balancer sends the work elsewhere); while the caches shed, ready
 * with the pressure reported.
 */
export function decideHealth(probe: Probe, s: HealthState): HealthAnswer {
  if (s.eventLoopDelayMs > s.maxEventLoopDelayMs)
    return {
      kind: 'unavailable',
      reason: `The event loop was blocked for ${Math.round(s.eventLoopDelayMs)} ms (limit ${s.maxEventLoopDelayMs} ms).`,
    };
  if (probe === 'live') return OK;
  if (s.draining) return { kind: 'unavailable', reason: 'The server is draining.' };
  if (s.redisUp === false) return { kind: 'unavailable', reason: 'A required store (Redis) is down.' };
  const m = s.memory;
  if (m?.level === 'critical') return { kind: 'unavailable', reason: m.reason };
  if (m?.level === 'shed')
    return { kind: 'ok', memory: `${m.reason} The caches shed their least recently used entries.` };
  return OK;
}

export interface Health {
  readonly step: Step;
  /** Draining: readiness answers 503 from now on; the delay monitor stops. */
  close(): void;
}

const OK_BODY = '{"status":"ok"}\n';
const NO_STORE = { 'Cache-Control': 'no-store' } as const;

/** The path of a canonical target (the query is not part of the match). */
const pathOf = (url: string): string => {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
};

/** Undefined when `health` is not configured: no step, no timer. */
export function createHealth(
  o: HealthOptions | undefined,
  ctx: StepContext,
  redisConfigured = false,
): Health | undefined {
  if (o === undefined) return undefined;
  // Samples the loop every 10 ms; the worst delay of the last full second is kept.
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  let lastSecondMaxMs = 0;
  const timer = setInterval(() => {
    lastSecondMaxMs = h.max / 1e6;
    h.reset();
  }, 1000);
  timer.unref();
  let draining = false;
  let redis: RedisConnection | undefined;
  /** undefined: readiness does not look at Redis. */
  let mode: 'always' | 'until-reached' | undefined;
  if (o.requireRedis === true) mode = 'always';
  else if (o.requireRedis === undefined && redisConfigured) mode = 'until-reached';
  let reached = false;
  if (mode !== undefined) {
    redis = ctx.redis?.get();
    redis?.onStateChange((up) => {
      if (up) reached = true;
    });
  }
  const redisUp = (): boolean | undefined => {
    if (mode === undefined) return undefined;
    if (redis?.isUp() === true) reached = true;
    return mode === 'always' ? (redis?.isUp() ?? false) : reached;
  };
  const answer = (probe: Probe, req: ExchangeRequest, res: ResponseSink): true => {
    quietAccessLog(res);
    const d = decideHealth(probe, {
      eventLoopDelayMs: Math.max(lastSecondMaxMs, h.max / 1e6),
      maxEventLoopDelayMs: o.maxEventLoopDelayMs,
      draining,
      redisUp: redisUp(),
      memory: ctx.memory?.(),
    });
    if (d.kind === 'unavailable') {
      sendError(req, res, ERRORS.serviceUnavailable, d.reason, NO_STORE);
      return true;
    }
    const body = d.memory === undefined ? OK_BODY : `${JSON.stringify({ status: 'ok', memory: d.memory })}\n`;
    res.writeHead(200, {
      ...NO_STORE,
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(body),
    });
    res.end(req.method === 'HEAD' ? undefined : body);
    return true;
  };
  const step: Step = (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const path = pathOf(req.url!);
    if (path === o.path) return answer('live', req, res);
    if (path === o.readyPath) return answer('ready', req, res);
    return false;
  };
  return {
    step,
    close: () => {
      draining = true;
      clearInterval(timer);
      h.disable();
    },
  };
}

/**
 * Health probes as a feature (core/feature.ts): a gate step before auth and the rate limit (probes do
 * not authenticate); readiness turns 503 once the shutdown starts (drain). Off without `health`.
 */
export function create(options: HealthOptions | undefined, kernel: StepContext): Feature | undefined {
  const h = createHealth(options, kernel, kernel.redis?.configured === true);
  return h && { gate: h.step, drain: () => h.close() };
}
