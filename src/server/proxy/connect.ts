// The upstream connector: undici's own (TCP, TLS, session cache) with connectMs on a timer of ours.
// undici's connect timeout runs on its 499 ms "fast timer" tick (lib/util/timers.js), so a 200 ms
// connectMs fired after ~1000 ms; this one fires within a few ms. One timer per new connection, not
// per request (the pool reuses connections).
import type { Socket } from 'node:net';
import type { buildConnector as BuildConnector } from 'undici';

type Undici = {
  readonly buildConnector: typeof BuildConnector;
  readonly errors: { readonly ConnectTimeoutError: new (message?: string) => Error };
};

/** undici's tick is 499 ms and its timers fire up to ~0.5 s early or ~1 s late: with this margin its
 *  own timeout, kept as a backstop, never fires before ours. */
const BACKSTOP_MARGIN_MS = 1500;

/**
 * A `connect` function for an undici Pool: the socket is destroyed with undici's ConnectTimeoutError
 * (code UND_ERR_CONNECT_TIMEOUT, so the exchange maps it to 504) when the TCP connection and, for
 * https, the TLS handshake are not done within `timeoutMs`.
 */
export function exactConnector(undici: Undici, timeoutMs: number): BuildConnector.connector {
  const connect = undici.buildConnector({ timeout: timeoutMs + BACKSTOP_MARGIN_MS });
  return (opts, callback) => {
    let timer: NodeJS.Timeout | undefined;
    let settled = false;
    // undici's connector returns the socket it opens (lib/core/connect.js; its types say void).
    const socket = connect(opts, (...args) => {
      settled = true;
      clearTimeout(timer);
      callback(...args);
    }) as unknown as Socket | undefined;
    if (settled || typeof socket?.destroy !== 'function') return;
    timer = setTimeout(() => {
      socket.destroy(new undici.errors.ConnectTimeoutError(`Connect Timeout Error (${timeoutMs} ms)`));
    }, timeoutMs);
    timer.unref();
  };
}
