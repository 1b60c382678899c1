// The Fetch-API transport: a host that calls `fetch(request, info)` and awaits a Response (Bun.serve,
// Deno.serve, workers) drives the kernel's entry through it, as node/entry.ts drives it from node:http's
// 'request' event. One FetchRequest and one FetchSink per request; no Upgrade here (a host's WebSocket
// API is its own transport).

import type { TunnelBase } from '../core/context.js';
import type { Entry } from '../core/entry.js';
import { type ConnectionInfo, FetchRequest } from './request.js';
import { FetchSink } from './sink.js';

export type { ConnectionInfo } from './request.js';
export { FetchRequest } from './request.js';
export { FetchSink } from './sink.js';

/** The host's handler: a Request in, its Response out (rejects only when the response was dropped). */
export type FetchListener = (request: Request, info?: ConnectionInfo) => Promise<Response>;

export function fetchEntry(entry: Entry<FetchRequest, FetchSink, TunnelBase>): FetchListener {
  return (request, info) => {
    const req = new FetchRequest(request, info);
    // RFC 9110 §9.3.2: HEAD gets the fields of GET and no content.
    const res = new FetchSink(req.method === 'HEAD');
    entry.request(req, res);
    return res.response;
  };
}
