// Admission of one request to an upstream: pick, body-size refusal, connection slot or queue,
// then the exchange (forward.ts); the one retry of an idempotent request on a connect failure.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ERRORS, sendError } from '../core/errors.js';
import { requestHasContent } from '../core/request-head.js';
import { type ForwardHooks, setFields } from './cache/index.js';
import { Exchange } from './forward.js';
import { type Route, upstreamTarget } from './routes.js';
import { type ProxyState, upstreamHeadersFor } from './state.js';
import type { Upstream } from './upstreams.js';

const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS']);

/** ExchangeEnv.retry: true when a retry took the exchange over. */
export function retryExchange(state: ProxyState, x: Exchange): boolean {
  const { req, res, mount, route, u, attempt, hooks, hasBody } = x;
  if (!(route as Route).o.retry || attempt > 0 || hasBody || !IDEMPOTENT.has(req.method!)) return false;
  // Once more on a fresh connection (another upstream when there is one).
  forward(state, req, res, mount, route as Route, 1, route.upstreams.all.length > 1 ? u : undefined, hooks);
  return true;
}

export function forward(
  state: ProxyState,
  req: IncomingMessage,
  res: ServerResponse,
  mount: string,
  route: Route,
  attempt: number,
  exclude?: Upstream,
  hooks?: ForwardHooks,
): void {
  const u = route.upstreams.pick(exclude);
  if (u === undefined) {
    sendError(req, res, ERRORS.badGateway, 'No upstream is available.');
    return;
  }
  const o = route.o;
  const cl = req.headers['content-length'];
  const hasBody = requestHasContent(req);
  if (o.maxBodyBytes !== undefined && cl !== undefined && Number(cl) > o.maxBodyBytes) {
    // Refused before the upstream is contacted; the unread body makes the connection unusable.
    sendError(req, res, ERRORS.contentTooLarge, 'The request body is larger than this route accepts.', {
      Connection: 'close',
    });
    return;
  }
  if (u.tryEnter()) {
    startExchange(state, req, res, mount, route, u, attempt, hooks, hasBody);
    return;
  }
  const cancel = u.enqueue(
    () => startExchange(state, req, res, mount, route, u, attempt, hooks, hasBody),
    () => {
      const err = Object.assign(new Error('no upstream connection within queueMs'), {
        code: 'QUEUE_TIMEOUT',
      });
      if (hooks?.onFailure?.(err) === true || hooks?.detached || res.headersSent) return;
      sendError(req, res, ERRORS.serviceUnavailable, 'The upstream is busy; try again later.', {
        'Retry-After': '1',
      });
    },
  );
  if (hooks?.detached !== true) res.once('close', cancel);
}

/** Sends the request upstream on a slot already taken. */
function startExchange(
  state: ProxyState,
  req: IncomingMessage,
  res: ServerResponse,
  mount: string,
  route: Route,
  u: Upstream,
  attempt: number,
  hooks: ForwardHooks | undefined,
  hasBody: boolean,
): void {
  const o = route.o;
  const headers = upstreamHeadersFor(state, req, route, u);
  if (hooks?.requestHeaders) setFields(headers, hooks.requestHeaders);
  const path = upstreamTarget(req.url!, route.prefix, {
    stripPrefix: o.stripPrefix,
    basePath: u.basePath,
    rewrite: route.rewrite,
  });
  new Exchange(state.env, route, u, req, res, mount, attempt, hooks, hasBody).dispatch(
    req.method!,
    path,
    headers,
  );
}
