// PLACEHOLDER (being written)
import type { IncomingMessage } from 'node:http';
export function createClientAddress(_trust: readonly string[]): (req: IncomingMessage) => string {
  return (req) => req.socket.remoteAddress ?? '';
}
