// The HTTP/2 session guard: what Node's http2 leaves open. Sessions without a stream are
// closed after keepAliveTimeoutMs, sessions without a request after headersTimeoutMs; a stream whose
// client takes no DATA is reset after sendTimeoutMs; streams the client resets count against its
// address across connections (rapid reset, CVE-2023-44487): past the budget its session gets GOAWAY
// ENHANCE_YOUR_CALM and its new connections are refused for resetBanMs; a session whose header blocks
// keep being refused (HPACK bomb, RFC 7541 §7.3; oversized lists, RFC 9113 §10.5.1) gets the same.
//
// Per stream the cost is two counters and a Set entry (h2-exchange.ts calls onStream/onStreamClose);
// everything else runs on one sweep timer while sessions are open, which reads each session's socket
// byte count and walks the streams with unsent DATA.
import type { Http2SecureServer, Http2Session, ServerHttp2Stream } from 'node:http2';
import { constants } from 'node:http2';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { LRUCache } from 'lru-cache';
import { bucketKey } from '../steps/limits.js';
import type { Http2LimitsOptions } from '../steps/limits-options.js';

/** What the guard reads and marks on a response (h2-exchange.ts GuardedResponse). */
export interface GuardedResponse {
  readonly stream: ServerHttp2Stream;
  /** DATA bytes handed to the stream. */
  readonly bytesSent: number;
  resetByServer: boolean;
  progressMark: number;
  stalledSinceMs: number;
}

const { NGHTTP2_CANCEL, NGHTTP2_ENHANCE_YOUR_CALM, NGHTTP2_NO_ERROR } = constants;

/** How often the sweep runs while sessions are open: the precision of the session timeouts, and how
 *  long a flood of refused header blocks lasts at most before its GOAWAY. */
export const H2_SWEEP_INTERVAL_MS = 100;
/** After our GOAWAY, how long a session may take to close before it is destroyed. */
const GOAWAY_GRACE_MS = 1000;
/** Client addresses whose reset count is kept (least recently used dropped first). */
const MAX_TRACKED_ADDRESSES = 10_000;

/** Why the guard closed a session (the `reason` label of the metric). */
export const H2_CLOSE_REASONS = ['idle', 'no_request', 'resets', 'header_blocks'] as const;
export type H2CloseReason = (typeof H2_CLOSE_REASONS)[number];

/** The guard's counts, read by the metrics at scrape time. */
export interface H2Stats {
  /** Streams the client reset before their response ended. */
  clientResets: number;
  /** Header blocks refused before they became a request. */
  refusedHeaderBlocks: number;
  /** Streams reset after sendTimeoutMs without the client taking their DATA. */
  sendTimeouts: number;
  /** Connections refused at accept: their address was over the reset budget. */
  refusedConnections: number;
  /** Sessions closed by the guard, by reason. */
  closed: Record<H2CloseReason, number>;
}

/** What the guard keeps per session (h2-exchange.ts holds it by session). */
export interface SessionState {
  readonly session: Http2Session;
  /** The connection's own TLS socket (session.socket is a Proxy). */
  readonly socket: TLSSocket;
  /** The client address's budget key (IPv6 by /64, as the rate limit). */
  readonly key: string;
  readonly openedMs: number;
  /** Streams that reached JavaScript ('stream' events), reset ones included. */
  seen: number;
  /** Streams being served. */
  open: number;
  /** Since when no stream is open (performance.now()). */
  idleSinceMs: number;
  /** Our GOAWAY went out at this time (0: not closing). */
  closingSinceMs: number;
  /** The socket's bytesRead at the last sweep: no new bytes, no new header blocks. */
  bytesRead: number;
  /** Header blocks refused so far. */
  refused: number;
}

interface AddressBudget {
  resets: number;
  windowStartMs: number;
  bannedUntilMs: number;
}

export interface SessionGuardOptions {
  http2: Http2LimitsOptions;
  keepAliveTimeoutMs: number;
  headersTimeoutMs: number;
  sendTimeoutMs: number;
}

export class SessionGuard {
  readonly stats: H2Stats = {
    clientResets: 0,
    refusedHeaderBlocks: 0,
    sendTimeouts: 0,
    refusedConnections: 0,
    closed: { idle: 0, no_request: 0, resets: 0, header_blocks: 0 },
  };
  readonly #o: SessionGuardOptions;
  readonly #sessions = new Set<SessionState>();
  /** Responses being served: the sweep looks for the stalled ones. */
  readonly #responses = new Set<GuardedResponse>();
  readonly #budgets = new LRUCache<string, AddressBudget>({ max: MAX_TRACKED_ADDRESSES });
  #timer: NodeJS.Timeout | undefined;

  constructor(o: SessionGuardOptions) {
    this.#o = o;
  }

  /** Refuses connections from banned addresses at accept, before any TLS work. */
  // biome-ignore lint/suspicious/noExplicitAny: the four class parameters of Node's generic servers
  install(server: Http2SecureServer<any, any, any, any>): void {
    server.prependListener('connection', (socket: Socket) => {
      const b = this.#budgets.get(keyOf(socket));
      if (b !== undefined && b.bannedUntilMs > performance.now()) {
        this.stats.refusedConnections++;
        socket.destroy();
      }
    });
  }

  onSession(session: Http2Session, socket: TLSSocket): SessionState {
    const now = performance.now();
    const st: SessionState = {
      session,
      socket,
      key: keyOf(socket),
      openedMs: now,
      seen: 0,
      open: 0,
      idleSinceMs: now,
      closingSinceMs: 0,
      bytesRead: 0,
      refused: 0,
    };
    this.#sessions.add(st);
    session.once('close', () => this.#sessions.delete(st));
    // GOAWAY and destroy emit the session's errors; the socket's own are handled by the server.
    session.on('error', noop);
    this.#timer ??= setInterval(this.#sweep, H2_SWEEP_INTERVAL_MS).unref();
    return st;
  }

  /** A stream reached JavaScript; false when the client already reset it (nothing is started). */
  onStream(st: SessionState, stream: ServerHttp2Stream): boolean {
    st.seen++;
    // Defensive (CVE-2023-44487): a stream already closed when it reaches JavaScript runs no handler.
    // Not seen on Node 20-24, which emit 'stream' before reading a RST_STREAM of the same read; what
    // keeps a reset stream from starting upstream work is the proxy's res.destroyed check.
    if (stream.destroyed || stream.closed) {
      if (stream.rstCode !== NGHTTP2_NO_ERROR) this.#countReset(st);
      return false;
    }
    st.open++;
    return true;
  }

  /** The response of a stream onStream let through, until onStreamClose. */
  track(res: GuardedResponse): void {
    this.#responses.add(res);
  }

  onStreamClose(st: SessionState, stream: ServerHttp2Stream, res: GuardedResponse): void {
    this.#responses.delete(res);
    if (--st.open === 0) st.idleSinceMs = performance.now();
    if (stream.rstCode !== NGHTTP2_NO_ERROR && !res.resetByServer) this.#countReset(st);
  }

  /** One reset by the client: against its address's budget; over it, GOAWAY and a ban. */
  #countReset(st: SessionState): void {
    this.stats.clientResets++;
    this.#charge(st, 1);
  }

  #charge(st: SessionState, n: number): void {
    const { maxResetsPerWindow, resetWindowMs, resetBanMs } = this.#o.http2;
    const now = performance.now();
    let b = this.#budgets.get(st.key);
    if (b === undefined || now - b.windowStartMs >= resetWindowMs) {
      b = { resets: 0, windowStartMs: now, bannedUntilMs: b?.bannedUntilMs ?? 0 };
      this.#budgets.set(st.key, b);
    }
    b.resets += n;
    if (b.resets > maxResetsPerWindow) {
      b.bannedUntilMs = now + resetBanMs;
      // Out of the stream's close handling: a session destroyed inside it never sent its GOAWAY.
      setImmediate(() => this.#calm(st, 'resets'));
    }
  }

  /** GOAWAY ENHANCE_YOUR_CALM (RFC 9113 §7) and the session ends, its streams with it. */
  #calm(st: SessionState, reason: H2CloseReason): void {
    if (st.session.destroyed) return;
    this.stats.closed[reason]++;
    st.closingSinceMs = performance.now();
    // (destroy(undefined, code) would send NO_ERROR: Node's default for the first parameter is 0.)
    st.session.destroy(new Error(`http2: ${reason}`), NGHTTP2_ENHANCE_YOUR_CALM);
  }

  /** GOAWAY NO_ERROR (RFC 9113 §6.8): no stream is open, so the session closes at once. */
  #close(st: SessionState, reason: H2CloseReason, now: number): void {
    this.stats.closed[reason]++;
    st.closingSinceMs = now;
    st.session.close();
  }

  readonly #sweep = (): void => {
    if (this.#sessions.size === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      return;
    }
    const now = performance.now();
    const { keepAliveTimeoutMs, headersTimeoutMs } = this.#o;
    for (const st of this.#sessions) {
      if (st.closingSinceMs > 0) {
        // Node waits for the peer to close its side: a client that never does keeps the socket.
        if (now - st.closingSinceMs >= GOAWAY_GRACE_MS) {
          st.session.destroy();
          st.socket.destroy();
        }
        continue;
      }
      if (st.session.destroyed) continue;
      const read = st.socket.bytesRead;
      if (read !== st.bytesRead) {
        st.bytesRead = read;
        if (this.#refusedBlocks(st)) continue;
      }
      if (st.open > 0) continue;
      if (st.seen === 0 && now - st.openedMs >= headersTimeoutMs) this.#close(st, 'no_request', now);
      else if (keepAliveTimeoutMs > 0 && now - st.idleSinceMs >= keepAliveTimeoutMs)
        this.#close(st, 'idle', now);
    }
    for (const res of this.#responses) this.#checkStalled(res, now);
  };

  /**
   * Header blocks Node refused (over SETTINGS_MAX_HEADER_LIST_SIZE or the field count: RST_STREAM
   * ENHANCE_YOUR_CALM in C++) never reach JavaScript; nghttp2 still counts their stream ids. Client
   * stream ids are odd and rising (RFC 9113 §5.1.1), so ids processed minus streams seen is the
   * number refused (a block still arriving counts as one). True when the session was closed.
   */
  #refusedBlocks(st: SessionState): boolean {
    const processed = (st.session.state.lastProcStreamID! + 1) >>> 1;
    const refused = processed - st.seen;
    if (refused <= 0) return false;
    const known = st.refused;
    if (refused <= known) return false;
    this.stats.refusedHeaderBlocks += refused - known;
    st.refused = refused;
    if (refused <= this.#o.http2.maxRefusedHeaderBlocks) return false;
    this.#calm(st, 'header_blocks');
    // They count against the address too: a client that reconnects to go on is refused.
    this.#charge(st, refused - known);
    return true;
  }

  /** DATA waiting on a client that takes none for sendTimeoutMs (zero window): RST_STREAM CANCEL. */
  #checkStalled(res: GuardedResponse, now: number): void {
    const stream = res.stream;
    const pending = stream.writableLength;
    if (pending === 0 || stream.destroyed) {
      res.stalledSinceMs = 0;
      return;
    }
    const mark = res.bytesSent - pending;
    if (res.stalledSinceMs === 0 || mark !== res.progressMark) {
      res.progressMark = mark;
      res.stalledSinceMs = now;
      return;
    }
    if (now - res.stalledSinceMs < this.#o.sendTimeoutMs) return;
    this.stats.sendTimeouts++;
    res.resetByServer = true;
    stream.close(NGHTTP2_CANCEL);
  }
}

const noop = () => {};

function keyOf(socket: Socket): string {
  return bucketKey(socket.remoteAddress ?? 'unknown', 64);
}
