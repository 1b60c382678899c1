// Sending to one client, with slow-consumer protection.
import { CLOSE_CODES, type Client, WS_OPEN, type WsState } from './types.js';

export const PONG = '{"type":"pong"}';

/** Sends unless the peer is a slow consumer, which is closed with 1013 instead of buffering more. */
export function deliver(ws: WsState, client: Client, data: Buffer | string, binary: boolean): void {
  const s = client.socket;
  if (s.readyState !== WS_OPEN) return;
  if (s.bufferedAmount > client.maxBufferedBytes) {
    ws.logger.warn(
      { path: client.path, bufferedBytes: s.bufferedAmount, maxBufferedBytes: client.maxBufferedBytes },
      'websocket slow consumer closed (1013)',
    );
    // The close frame queues behind the backlog; the heartbeat (or ws's 30 s close timer) ends a peer
    // that never reads it.
    s.close(CLOSE_CODES.tryAgainLater, 'slow consumer');
    return;
  }
  s.send(data, binary);
}
