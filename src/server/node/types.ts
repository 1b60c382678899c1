// The kernel's types as the Node transport instantiates them: node:http's request and response (and
// node:http2's compatibility pair, which has the same shape) pass through the kernel as they are.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type * as core from '../core/context.js';
import type * as plug from '../core/feature.js';
import type { RedisPool } from '../redis/pool.js';

export type Step = core.Step<IncomingMessage, ServerResponse>;
export type Final = core.Final<IncomingMessage, ServerResponse>;
/** What every feature's create(options, kernel) may use: the kernel's (its clientAddress reads any
 *  exchange request, so transport-neutral steps call it too), and the shared Redis connections (set by
 *  the composition root; absent in contexts tests build by hand). */
export interface StepContext extends core.StepContext {
  readonly redis?: RedisPool;
}

/**
 * A WebSocket handshake that passed every step (the entry): the raw socket and the bytes read after
 * its head. Until `accept()` the step's ServerResponse is bound to the socket, so a refusal is an
 * ordinary response (sendError); `accept()` takes the socket from it (RFC 6455 §4.2.2: the handler
 * then writes the 101 itself) and logs the switch.
 */
export interface Tunnel extends core.TunnelBase {
  readonly socket: Duplex;
  readonly head: Buffer;
}

export type TunnelHandler = core.TunnelHandler<IncomingMessage, ServerResponse, Tunnel>;
/** The plug-in shape every feature returns (core/feature.ts). */
export type Feature = plug.Feature<IncomingMessage, ServerResponse, Tunnel>;
