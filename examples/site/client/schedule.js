// The reconnecting WebSocket's decisions, as pure functions over plain values: the next delay, what
// to do after a close, whether a link is dead. No timers, no clock: the caller passes `nowMs` and
// `random`. The class in websocket.ts applies them.
export const DEFAULT_JITTER = 0.5;
export const DEFAULT_MAX_DELAY_MS = 30_000;
/**
 * Exponent cap: with it, `factor ** attempt` stays finite for any factor up to ~1e9, so a client that
 * failed thousands of times still gets `maxMs`, never NaN or Infinity (socket.io's backo2 bug).
 */
const MAX_EXPONENT = 32;
/**
 * Delay before reconnect attempt number `attempt` (0 = the first after a close):
 * `min(intervalMs * factor^attempt, maxMs) * (1 + jitter * (2 * random() - 1))`, so never more than
 * `maxMs * (1 + jitter)`. Without `backoff`: `intervalMs` with the default jitter (mean `intervalMs`).
 */
export function reconnectDelayMs(attempt, intervalMs, backoff, random) {
    const factor = backoff?.factor ?? 1;
    const maxMs = backoff?.maxMs ?? Math.max(DEFAULT_MAX_DELAY_MS, intervalMs);
    const jitter = backoff?.jitter ?? DEFAULT_JITTER;
    let ms = intervalMs * factor ** Math.min(attempt, MAX_EXPONENT);
    if (!(ms < maxMs))
        ms = maxMs; // also catches NaN (0 * Infinity)
    return Math.round(ms * (1 + jitter * (2 * random() - 1)));
}
/** What follows a close: nothing, a wait for the `online` event, or a reconnect after `delayMs`. */
export function afterClose(s) {
    if (s.userClosed)
        return { kind: 'stop', why: 'user-closed' };
    if (!s.reconnect)
        return { kind: 'stop', why: 'reconnect-off' };
    if (!s.allowed)
        return { kind: 'stop', why: 'refused' };
    // Offline: a connect would fail at once; the `online` event starts the next attempt.
    if (s.offline)
        return { kind: 'wait-online' };
    return { kind: 'reconnect', delayMs: s.delayMs };
}
/**
 * True when nothing has arrived for 2 x the heartbeat interval: with a ping sent every interval, a
 * live peer would have answered one. Wall-clock time, not a count of timer ticks, because background
 * tabs throttle timers: a late tick still sees how long the link has been silent.
 */
export function isLinkDead(nowMs, lastReceivedMs, heartbeatIntervalMs) {
    return nowMs - lastReceivedMs >= 2 * heartbeatIntervalMs;
}
