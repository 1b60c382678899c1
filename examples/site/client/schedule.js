// The reconnecting WebSocket's decisions, as pure functions over plain values: the next delay, what
// to do after a close, whether a link is dead. No timers, no clock: the caller passes `nowMs` and
// `random`. The class in websocket.ts applies them.
/**
 * Exponent cap: with it, `factor ** attempt` stays finite for any factor up to ~1e9, so a client that
 * failed thousands of times still gets `maxMs`, never NaN or Infinity (socket.io's backo2 bug).
 */
const MAX_EXPONENT = 32;
/**
 * Delay before reconnect attempt number `attempt` (0 = the first after a close). Without `backoff` it is
 * `intervalMs` whatever the attempt.
 */
export function reconnectDelayMs(attempt, intervalMs, backoff, random) {
    if (!backoff)
        return intervalMs;
    let ms = intervalMs * backoff.factor ** Math.min(attempt, MAX_EXPONENT);
    if (!(ms < backoff.maxMs))
        ms = backoff.maxMs; // also catches NaN (0 * Infinity)
    return Math.round(ms - ms * backoff.jitter * random());
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
