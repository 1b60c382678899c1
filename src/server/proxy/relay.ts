// WebSocket pass-through on a host that switches handshakes itself (Bun.serve, Deno.serve): their
// servers give messages, not bytes, so this is a message relay (Node's byte tunnel is upgrade.ts). The
// upstream side is a WebSocket client (the runtime's global WebSocket) opened with the client's offered
// subprotocols and the proxy's forwarding fields; the host writes the 101 only once the upstream
// accepted, with the subprotocol it chose (RFC 6455 §4.2.2), so a refusal or an unreachable upstream
// is a 502 (a WebSocket client cannot read the upstream's refusal), no answer in time a 504. Then
// text and binary messages go both ways (RFC 6455 §5.6), and a close on either side closes the other
// with its code and reason (§7.4; relayedCloseCode). Extensions (permessage-deflate) and Ping/Pong are
// per hop: each side negotiates and answers its own.
import { switchFields } from '../../http/switch-fields.js';
import { relayedCloseCode } from '../../http/websocket-relay.js';
import { ERRORS, type ErrorEntry, sendError } from '../core/errors.js';
import type { ExchangeRequest, ResponseSink } from '../core/exchange.js';
import type { HostTunnel, PeerEvents, PeerSocket } from '../core/host-tunnel.js';
import { responseFields } from '../core/response-headers.js';
import type { Logger } from '../ops/log.js';

/** RFC 6455 readyState values. */
const CONNECTING = 0;
const OPEN = 1;
/** RFC 6455 §7.4.1. */
const GOING_AWAY = 1001;
const TRY_AGAIN_LATER = 1013;

export interface RelayOptions {
  /** The upstream's ws: or wss: URL with the target. */
  readonly url: string;
  /** The client's offer (Sec-WebSocket-Protocol), in its order. */
  readonly protocols: readonly string[];
  /** The forwarding fields and the client's end-to-end ones (no handshake or hop-by-hop fields). */
  readonly headers: Record<string, string>;
  /** How long the upstream may take to accept (connectMs + headersMs). */
  readonly timeoutMs: number;
  /** A side with more than this queued for it ends the relay (1013): neither side can be paused. */
  readonly maxBufferedBytes: number;
  readonly upstreamOrigin: string;
  readonly logger: Logger;
  readonly onFailure: () => void;
  /** Called once, when both sides are closed. */
  readonly onDone: () => void;
}

/** One relay as the proxy's shutdown sees it. */
export interface Relay {
  /** Closes both sides with `code` (before the switch: answers 503). */
  close(code: number, reason: string): void;
  /** Drops what is left without a closing handshake. */
  terminate(): void;
  /** Resolves once both sides are closed. */
  readonly done: Promise<void>;
}

/** Bun's and Deno's WebSocket take fields beside the protocols (not in the WHATWG constructor). */
type RelayWebSocket = new (
  url: string,
  o: { protocols: string[]; headers: Record<string, string> },
) => WebSocket;

export function relayUpgrade(
  req: ExchangeRequest,
  res: ResponseSink,
  tunnel: HostTunnel,
  o: RelayOptions,
  relays: Set<Relay>,
): void {
  let up: WebSocket;
  try {
    up = new (WebSocket as unknown as RelayWebSocket)(o.url, {
      protocols: [...o.protocols],
      headers: o.headers,
    });
  } catch (err) {
    o.onFailure();
    o.onDone();
    o.logger.warn({ err, url: req.url, upstream: o.upstreamOrigin }, 'upstream upgrade failed');
    sendError(req, res, ERRORS.badGateway, 'The upstream could not be reached for the handshake.');
    return;
  }
  up.binaryType = 'arraybuffer';

  /** The handshake got its answer (the switch, or an error response). */
  let answered = false;
  let client: PeerSocket | undefined;
  let clientGone = false;
  let upGone = false;
  /** The upstream's close, kept until the client's side opens. */
  let upClose: { code: number; reason: string } | undefined;
  /** Upstream messages that came before the client's side opened. */
  const early: [Buffer | string, boolean][] = [];
  let earlyBytes = 0;
  let resolveDone!: () => void;
  const relay: Relay = {
    close: (code, reason) => {
      if (!answered) {
        answered = true;
        clearTimeout(timer);
        clientGone = true;
        up.close();
        sendError(req, res, ERRORS.serviceUnavailable, 'The server is shutting down.');
        return;
      }
      endBoth(code, reason, code);
    },
    terminate: () => {
      client?.terminate();
      closeUpstream(GOING_AWAY, '');
    },
    done: new Promise<void>((resolve) => {
      resolveDone = resolve;
    }),
  };
  relays.add(relay);
  const finish = () => {
    if (!clientGone || !upGone || !relays.delete(relay)) return;
    o.onDone();
    resolveDone();
  };

  const closeUpstream = (code: number | undefined, reason: string) => {
    if (up.readyState > OPEN) return;
    try {
      if (code === undefined) up.close();
      else up.close(code, reason);
    } catch {
      // Deno's client takes only 1000 and 3000-4999 (WHATWG WebSockets, close()): the reason goes on.
      up.close(1000, reason);
    }
  };
  const closeClient = (code: number | undefined, reason: string) => {
    if (client === undefined) upClose = { code: code ?? 1005, reason };
    else if (client.readyState <= OPEN) client.close(code, reason);
  };
  /** Ends the relay from the proxy's side: `clientCode` to the client, `upCode` to the upstream. */
  const endBoth = (clientCode: number, reason: string, upCode: number) => {
    closeClient(clientCode, reason);
    closeUpstream(upCode, reason);
  };
  /** A side is more than maxBufferedBytes behind: neither can be paused, so the relay ends. */
  const overflowed = (queued: number): boolean => {
    if (queued <= o.maxBufferedBytes) return false;
    o.logger.warn({ url: req.url, upstream: o.upstreamOrigin, bufferedBytes: queued }, 'relay buffer full');
    endBoth(TRY_AGAIN_LATER, 'relay buffer full', GOING_AWAY);
    return true;
  };

  const fail = (entry: ErrorEntry, detail: string, err?: unknown) => {
    answered = true;
    clientGone = true;
    clearTimeout(timer);
    o.onFailure();
    o.logger.warn({ err, url: req.url, upstream: o.upstreamOrigin }, 'upstream upgrade failed');
    sendError(req, res, entry, detail);
  };
  const timer = setTimeout(() => {
    if (answered) return;
    fail(ERRORS.gatewayTimeout, 'The upstream did not answer the handshake in time.');
    up.close();
    // Counted out now: a client still connecting may never report its close.
    upGone = true;
    finish();
  }, o.timeoutMs);

  up.onopen = () => {
    if (answered) {
      closeUpstream(GOING_AWAY, '');
      return;
    }
    answered = true;
    clearTimeout(timer);
    const switching = tunnel.upgradeWebSocket({
      // The upstream's choice, which its client checked against the offer (RFC 6455 §4.1).
      protocol: up.protocol === '' ? undefined : up.protocol,
      fields: switchFields(responseFields(res)),
      // Pings are per hop, and a tunnel has no heartbeat on Node either.
      heartbeatIntervalMs: 0,
      open: (peer) => clientOpened(peer),
    });
    if (!switching) {
      // The host refused the client's handshake (a bad Sec-WebSocket-Key or version): nothing was sent.
      clientGone = true;
      closeUpstream(GOING_AWAY, '');
      sendError(req, res, ERRORS.badRequest, 'The WebSocket handshake could not be completed.');
      return;
    }
    tunnel.accept();
  };
  up.onerror = (e) => {
    if (!answered)
      fail(ERRORS.badGateway, 'The upstream refused the handshake or could not be reached.', errorOf(e));
  };
  up.onclose = (e: CloseEvent) => {
    upGone = true;
    if (!answered) fail(ERRORS.badGateway, 'The upstream refused the handshake or could not be reached.');
    else if (!clientGone) closeClient(relayedCloseCode(e.code, false), e.reason);
    finish();
  };
  up.onmessage = (e: MessageEvent<string | ArrayBuffer>) => {
    const text = typeof e.data === 'string';
    const data = text ? (e.data as string) : Buffer.from(e.data as ArrayBuffer);
    if (client === undefined) {
      earlyBytes += data.length;
      if (!overflowed(earlyBytes)) early.push([data, !text]);
    } else if (client.readyState === OPEN && !overflowed(client.bufferedAmount)) client.send(data, !text);
  };

  const clientOpened = (peer: PeerSocket): PeerEvents => {
    client = peer;
    for (const [data, binary] of early) peer.send(data, binary);
    early.length = 0;
    if (upClose !== undefined) closeClient(relayedCloseCode(upClose.code, false), upClose.reason);
    return {
      receive: (data, isBinary) => {
        if (up.readyState !== OPEN || overflowed(up.bufferedAmount)) return;
        up.send(isBinary ? data : data.toString('utf8'));
      },
      // Each hop answers its own Pings (the host does).
      ping: () => {},
      pong: () => {},
      closed: (code, reason) => {
        clientGone = true;
        if (up.readyState === CONNECTING || up.readyState === OPEN)
          closeUpstream(relayedCloseCode(code, true), reason);
        finish();
      },
    };
  };
}

function errorOf(e: Event): unknown {
  return (e as { error?: unknown }).error ?? (e as { message?: unknown }).message;
}
