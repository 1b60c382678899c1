// The `websocket` config key: WebSocket endpoints (RFC 6455) served on exact paths.
// Defaults are filled in here, once; src/server/websocket/index.ts runs on the resolved shape.
import { z } from 'zod';
import { redisOverrideSchema } from './redis.js';

const MiB = 1024 * 1024;

/**
 * The default per-connection message rate of an endpoint with `fanout: "redis"`: a chat or presence
 * client sends a few messages a second, a 60 Hz game loop fits, a flood is cut to 1/100 of what one
 * client could push through every instance.
 */
export const FANOUT_RATE_LIMIT = Object.freeze({ messagesPerSec: 100, burst: 200 });

/** RFC 9110 §5.6.2 token: what RFC 6455 §4.1 allows as a subprotocol name. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

export const websocketEndpointSchema = z
  .strictObject({
    path: z
      .string()
      .regex(/^\/[^?#\s]*$/, 'must start with / and contain no ?, # or whitespace')
      .describe('Exact request path of the endpoint (the part before ?), e.g. /ws. Not percent-decoded.'),
    mode: z
      .enum(['echo', 'broadcast', 'custom'])
      .describe(
        'echo: every message back to its sender. broadcast: every message to every client on the path, ' +
          'the sender included; {"type":"join","room":"r"} joins a room and messages with a "room" field ' +
          'go only to its members. custom: the library handler registered for this path.',
      ),
    maxPayloadBytes: z
      .number()
      .int()
      .min(1)
      .default(1 * MiB)
      .describe('Largest message accepted (after decompression); a bigger one closes with 1009.'),
    heartbeatIntervalMs: z
      .number()
      .int()
      .min(0)
      .refine((v) => v === 0 || v >= 100, 'must be 0 (off) or at least 100')
      .default(30_000)
      .describe(
        'A protocol ping to every client this often; a client that did not answer the previous ping ' +
          'with a pong is dropped (so 1 to 2 intervals after its last pong). 0 turns the heartbeat off.',
      ),
    requireOrigin: z
      .boolean()
      .default(false)
      .describe('Refuse handshakes without an Origin header (non-browser clients) with 403.'),
    maxBufferedBytes: z
      .number()
      .int()
      .min(0)
      .default(1 * MiB)
      .describe(
        'Slow-consumer threshold: a client with more than this many bytes still queued for it is closed ' +
          'with 1013 (Try Again Later) instead of being sent more.',
      ),
    perMessageDeflate: z
      .boolean()
      .default(false)
      .describe('Negotiate permessage-deflate (RFC 7692). Costs CPU and a zlib context per client.'),
    subprotocols: z
      .array(z.string().regex(TOKEN, 'must be an HTTP token (RFC 6455 §4.1)'))
      .default([])
      .describe(
        'Subprotocols this endpoint speaks, preferred first. The first one of these the client offers ' +
          'is selected; none is selected when the client offers none of them.',
      ),
    rateLimit: z
      .union([
        z.strictObject({
          messagesPerSec: z
            .number()
            .positive()
            .describe(
              'Sustained messages per second per connection (token bucket refill; may be fractional). ' +
                'A protocol ping counts as a message.',
            ),
          burst: z
            .number()
            .int()
            .min(1)
            .describe('Messages a connection may send at once after being quiet (bucket size).'),
        }),
        z.literal(false),
      ])
      .optional()
      .describe(
        'Per-connection message rate limit. A client over it is closed with 1008 (policy violation, ' +
          'RFC 6455 §7.4.1); the message over the limit is not delivered. Default: off, except with ' +
          'fanout "redis", where it is { messagesPerSec: 100, burst: 200 } (every message reaches every ' +
          'instance); false turns it off there.',
      ),
    fanout: z
      .enum(['local', 'redis'])
      .default('local')
      .describe(
        'broadcast mode: local delivers to the clients of this instance; redis also publishes every ' +
          'broadcast on the top-level redis (channel <keyPrefix>ws:<path>, or <keyPrefix>ws:<path>#<room> for a room) so the clients of ' +
          'every instance on it get it, once each. While Redis is down, local delivery continues.',
      ),
    redis: redisOverrideSchema.optional(),
  })
  // One client's 75,000 messages in 8 s, published to every instance, slowed plain HTTP on
  // the others to 0.5 s. A fan-out over Redis is limited by default; local fan-out stays opt-in.
  .transform(({ rateLimit, ...e }) => {
    const limit =
      rateLimit === false ? undefined : (rateLimit ?? (e.fanout === 'redis' ? FANOUT_RATE_LIMIT : undefined));
    // No key at all when unlimited: the parsed endpoint has the shape it always had.
    const out: typeof e & { rateLimit?: NonNullable<typeof limit> } = e;
    if (limit !== undefined) out.rateLimit = limit;
    return out;
  })
  .describe('One WebSocket endpoint.');

export const websocketSchema = z
  .array(websocketEndpointSchema)
  .superRefine((endpoints, ctx) => {
    const seen = new Map<string, number>();
    for (const [i, e] of endpoints.entries()) {
      if (e.fanout === 'redis' && e.mode !== 'broadcast') {
        ctx.addIssue({
          code: 'custom',
          path: [i, 'fanout'],
          message: `"redis" applies to mode "broadcast" only (this endpoint is "${e.mode}")`,
        });
      }
      const first = seen.get(e.path);
      if (first === undefined) seen.set(e.path, i);
      else {
        ctx.addIssue({
          code: 'custom',
          path: [i, 'path'],
          message: `duplicate path ${e.path} (already used by websocket[${first}].path)`,
        });
      }
    }
  })
  .describe('WebSocket endpoints, each on its own exact path.');

/** What a config file writes for `websocket`. */
export type WebSocketConfigInput = z.input<typeof websocketSchema>;
/** The resolved endpoints, defaults filled in (assignable to the server's WebSocketEndpoint[]). */
export type WebSocketConfig = z.output<typeof websocketSchema>;
