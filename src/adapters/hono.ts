// gatehouse-http/hono (issue 28): Gatehouse as Hono middleware on @hono/node-server, `app.use(gatehouse(config))`.
// Gatehouse answers on Node's response (c.env.outgoing) and the middleware returns node-server's
// "already sent" response, so Hono writes nothing; what it passes on goes to `next()` untouched.
import type { IncomingMessage, ServerResponse } from 'node:http';
// node-server's marker of a response already written on `outgoing`. Made when that module loads, before
// serve() swaps in node-server's own Response class (which would make node-server write a head).
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import type { GatehouseConfigInput } from '../config/schema.js';
import { createHandler, type GatehouseDeps } from '../node.js';
import { type HandlerMembers, handleOrPass, withMembers } from './shared.js';

export type { GatehouseConfigInput, GatehouseDeps, GatehouseHandler } from '../node.js';

/** What the middleware uses of Hono's context (structural: hono is an optional peer). */
interface HonoContext {
  readonly env?: { incoming?: IncomingMessage; outgoing?: ServerResponse } | undefined;
}

export interface GatehouseHonoMiddleware extends HandlerMembers {
  // biome-ignore lint/suspicious/noExplicitAny: Hono's Context type, without depending on it here
  (c: any, next: () => Promise<void>): Promise<Response | undefined>;
}

export function gatehouse(
  config: GatehouseConfigInput = {},
  deps: GatehouseDeps = {},
): GatehouseHonoMiddleware {
  const h = createHandler(config, deps);
  const middleware = async (c: HonoContext, next: () => Promise<void>): Promise<Response | undefined> => {
    const req = c.env?.incoming;
    const res = c.env?.outgoing;
    if (req === undefined || res === undefined)
      throw new Error('gatehouse-http/hono runs on @hono/node-server (c.env.incoming and outgoing)');
    const passed = await handleOrPass(h, req, res, async () => {
      await next();
      return true;
    });
    if (passed === true) return undefined;
    return RESPONSE_ALREADY_SENT;
  };
  return withMembers(middleware, h);
}

export default gatehouse;
