// Library routes: `{ path, methods, handler }`; the handler's return value is the JSON answer
// (JSONP on a JSONP path with a valid callback, GET/HEAD only), or a `reply(status, body, headers)`
// (src/server/routes/reply.ts). POST, PUT and PATCH read a JSON body bounded by limits.maxBodyBytes. A
// thrown error or rejected promise is not caught here: it reaches the pipeline's onError (500 with a
// request id), and so does an answer that cannot be sent (RouteAnswerError, naming the route).
//
// The step reads the request through the exchange (ContentRequest: the body as it arrives) and
// writes the response sink. The one Node type left is the default of the public Route type: a route
// handler written for Node sees its IncomingMessage (and its header types) as it always did.

import type { IncomingMessage } from 'node:http';
import { compileJsonp, type JsonpOptions } from '../../http/jsonp.js';
import { parseParameters } from '../../http/lists.js';
import { compileFrom, matchPath, type PathMatcher, RedirectRuleError } from '../../http/redirect.js';
import { queryOf } from '../../http/request-path.js';
import { pathOf, type Step } from '../core/context.js';
import { ERRORS, type ErrorEntry, sendError } from '../core/errors.js';
import type { ContentRequest, ExchangeRequest, ResponseSink } from '../core/exchange.js';
import type { Feature } from '../core/feature.js';
import { requestHasContent } from '../core/request-head.js';
import { writeHeadMerged } from '../core/vary.js';
import type { StepContext } from '../node/types.js';
import { FileReply, fileReplyHeaders, planAnswer } from './reply.js';

/** Not in the shared catalogue yet (RFC 9110 §15.5.16). */
export const UNSUPPORTED_MEDIA_TYPE: ErrorEntry = {
  status: 415,
  code: 'unsupported_media_type',
  title: 'Unsupported Media Type',
};

export interface RouteContext {
  /** The parsed JSON body of a POST, PUT or PATCH; undefined when the request has none. */
  body?: unknown;
  /** Captures of the route path (`:name`, the splat as `splat` or its name), percent-decoded. */
  params: Record<string, string>;
  query: URLSearchParams;
}

/** A library route. `Q`: the request its handler gets, the transport's (Node's IncomingMessage by
 *  default). */
export interface Route<Q extends ContentRequest = IncomingMessage> {
  /**
   * Path as sent (percent-encoded, no query), in the `from` syntax of redirects: an exact path
   * (`/api/time`), `:name` for one segment (`/api/users/:id`), `*` or `:name*` for the rest
   * (`/api/files/*`), or an anchored regex starting with `^` (named groups become params).
   */
  path: string;
  /** Methods answered (default GET, HEAD). GET implies HEAD (RFC 9110 §9.3.2). */
  methods?: readonly string[];
  /** Cache-Control of the answers (default `no-store`: routes are API responses). */
  cacheControl?: string;
  /**
   * Returns the JSON value to send as 200 (or a promise of it); `undefined` gives 204; a
   * `reply(status, body?, headers?)` chooses the status and adds headers.
   */
  handler: (req: Q, ctx: RouteContext) => unknown | Promise<unknown>;
}

const DEFAULT_METHODS = ['GET', 'HEAD'];
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);
const METHOD_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** An answer the route cannot send (a body on 204, a bad header or Location): a bug in the route,
 *  so a 500 through the pipeline's onError, whose log line carries this message naming the route. */
export class RouteAnswerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RouteAnswerError';
  }
}

interface CompiledRoute<Q extends ContentRequest> {
  /** The path pattern as given, for log lines. */
  readonly pattern: string;
  readonly path: PathMatcher;
  readonly methods: ReadonlySet<string>;
  readonly cacheControl: string;
  readonly handler: Route<Q>['handler'];
}

function compileRoute<Q extends ContentRequest>(r: Route<Q>, i: number): CompiledRoute<Q> {
  let path: PathMatcher;
  try {
    path = compileFrom(r.path);
  } catch (err) {
    if (err instanceof RedirectRuleError) throw new Error(`routes[${i}].path: ${err.message}`);
    throw err;
  }
  const methods = new Set<string>();
  for (const m of r.methods ?? DEFAULT_METHODS) {
    if (!METHOD_TOKEN.test(m)) throw new Error(`routes[${i}].methods: ${JSON.stringify(m)} is not a method`);
    methods.add(m.toUpperCase());
  }
  if (methods.has('GET')) methods.add('HEAD');
  const cacheControl = r.cacheControl ?? 'no-store';
  if (!/^[\t\x20-\x7e]+$/.test(cacheControl)) {
    throw new Error(`routes[${i}].cacheControl: must be visible ASCII (no line breaks)`);
  }
  return { pattern: r.path, path, methods, cacheControl, handler: r.handler };
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof (v as { then?: unknown } | null)?.then === 'function';
}

/** Allow for a path: the methods of every route on it, plus OPTIONS, which we answer. */
function allowOf(routes: readonly Pick<CompiledRoute<ContentRequest>, 'methods'>[]): string {
  const all = new Set<string>();
  for (const r of routes) for (const m of r.methods) all.add(m);
  all.add('OPTIONS');
  return [...all].join(', ');
}

function decodeParams(
  r: Pick<CompiledRoute<ContentRequest>, 'path'>,
  named: Readonly<Record<string, string | undefined>>,
) {
  const params: Record<string, string> = {};
  for (const name of r.path.names) {
    const raw = named[name];
    if (raw === undefined) continue;
    try {
      params[name] = decodeURIComponent(raw);
    } catch {
      return null;
    }
  }
  return params;
}

type Body = { kind: 'ok'; body: unknown } | { kind: 'answered' };
const NO_BODY: Body = Object.freeze({ kind: 'ok', body: undefined });
const ANSWERED: Body = Object.freeze({ kind: 'answered' });

/**
 * Reads a JSON request body of at most `maxBytes`. Answers 413 (Content-Length over the limit, or
 * a chunked body growing past it: reading stops, the connection closes after the answer so the
 * rest is never read), 415 (not JSON, a charset other than UTF-8, or a content coding), 400 (not
 * UTF-8 or not JSON). A request without a body (requestHasContent: RFC 9112 §6.3, RFC 9113 §8.1,
 * or zero bytes) gives `undefined`.
 */
function readJsonBody(req: ContentRequest, res: ResponseSink, maxBytes: number): Body | Promise<Body> {
  if (!requestHasContent(req)) return NO_BODY;
  const cl = req.headers['content-length'] as string | undefined;
  // Answering before the body is read: close the connection when the unread rest may be large,
  // rather than letting node read and discard it to keep the connection alive.
  const close = { Connection: 'close' };
  const declared = cl === undefined ? undefined : Number(cl);
  if (declared !== undefined && declared > maxBytes) {
    sendError(req, res, ERRORS.contentTooLarge, `The request body is larger than ${maxBytes} bytes.`, close);
    return ANSWERED;
  }
  const ct = req.headers['content-type'] as string | undefined;
  const mediaType = ct === undefined ? '' : ct.split(';', 1)[0]!.trim().toLowerCase();
  const charset = ct === undefined ? undefined : parseParameters(ct).get('charset')?.toLowerCase();
  const encoding = req.headers['content-encoding'] as string | undefined;
  if (
    !(
      mediaType === 'application/json' ||
      (mediaType.startsWith('application/') && mediaType.endsWith('+json'))
    ) ||
    (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') ||
    (encoding !== undefined && encoding.toLowerCase() !== 'identity')
  ) {
    // RFC 9110 §15.5.16. Accept-Patch (RFC 5789 §3.1) and Accept-Post (W3C LDP §7.1) name what we take.
    const h: Record<string, string> = declared === undefined ? { ...close } : {};
    if (req.method === 'POST') h['Accept-Post'] = 'application/json';
    if (req.method === 'PATCH') h['Accept-Patch'] = 'application/json';
    sendError(
      req,
      res,
      UNSUPPORTED_MEDIA_TYPE,
      'The request body must be JSON (application/json, UTF-8).',
      h,
    );
    return ANSWERED;
  }
  return new Promise<Body>((resolve) => {
    const chunks: Uint8Array[] = [];
    let size = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onGone);
      req.off('close', onClose);
    };
    const onData = (chunk: Uint8Array) => {
      size += chunk.length;
      if (size > maxBytes) {
        cleanup();
        chunks.length = 0;
        sendError(
          req,
          res,
          ERRORS.contentTooLarge,
          `The request body is larger than ${maxBytes} bytes.`,
          close,
        );
        resolve(ANSWERED);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      if (size === 0) return resolve(NO_BODY);
      let text: string;
      try {
        // RFC 8259 §8.1: JSON exchanged between systems is UTF-8; invalid bytes are an error.
        text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(
          Buffer.concat(chunks, size),
        );
      } catch {
        sendError(req, res, ERRORS.badRequest, 'The request body is not valid UTF-8.');
        return resolve(ANSWERED);
      }
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        sendError(req, res, ERRORS.badRequest, 'The request body is not valid JSON.');
        return resolve(ANSWERED);
      }
      resolve({ kind: 'ok', body });
    };
    // The client went away before the body ended: nobody to answer.
    const onGone = () => {
      cleanup();
      res.destroy();
      resolve(ANSWERED);
    };
    const onClose = () => {
      if (!req.complete) onGone();
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onGone);
    req.on('close', onClose);
  });
}

/** The server's limits as the routes read them (the `limits` section, steps/limits-options.ts, has
 *  this shape; declared here so the routes import no step). */
interface LimitsOptions {
  readonly maxBodyBytes: number;
}

/**
 * The routes step. `jsonp` makes routes on JSONP paths answer GET/HEAD with a callback as JSONP
 * (the same validation and escaping as static files); `limits.maxBodyBytes` bounds request bodies.
 */
export function createRoutes<Q extends ContentRequest>(
  routes: readonly Route<Q>[],
  jsonpOptions: JsonpOptions | undefined,
  limits: Pick<LimitsOptions, 'maxBodyBytes'>,
  _ctx: StepContext,
  /** Serves a file of the static root (reply.file): the static handler's serveFileAt. */
  serveFileAt?: (req: ExchangeRequest, res: ResponseSink, rawPath: string) => void,
): Step<Q> | undefined {
  if (routes.length === 0) return undefined;
  const compiled = routes.map(compileRoute);
  const jsonp = compileJsonp(jsonpOptions);
  const maxBytes = limits.maxBodyBytes;

  const send = (
    req: Q,
    res: ResponseSink,
    route: CompiledRoute<Q>,
    callback: string | undefined,
    value: unknown,
  ): boolean => {
    if (res.writableEnded || res.destroyed) return true;
    if (value instanceof FileReply) {
      sendFile(req, res, route, value);
      return true;
    }
    const plan = planAnswer(value, { cacheControl: route.cacheControl, callback, target: req.url! });
    if (plan.kind === 'invalid') {
      throw new RouteAnswerError(`route ${req.method} ${route.pattern}: ${plan.reason}`);
    }
    // RFC 9110 §12.5.5: a reply's Vary adds to the names earlier steps (CORS) set.
    writeHeadMerged(res, plan.status, plan.headers);
    // HEAD: the same status and headers, no content (RFC 9110 §9.3.2).
    res.end(req.method === 'HEAD' ? undefined : plan.body);
    return true;
  };

  const sendFile = (req: Q, res: ResponseSink, route: CompiledRoute<Q>, file: FileReply) => {
    const where = `route ${req.method} ${route.pattern}`;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      throw new RouteAnswerError(`${where}: reply.file() answers GET and HEAD only`);
    }
    const headers = fileReplyHeaders(file);
    if (typeof headers === 'string') throw new RouteAnswerError(`${where}: ${headers}`);
    if (serveFileAt === undefined) throw new RouteAnswerError(`${where}: reply.file() needs the static root`);
    const rawPath = file.rawPath();
    if (rawPath === null) {
      sendError(req, res, ERRORS.notFound, 'No file at this path.');
      return;
    }
    // Set before the file's own fields, which win over them (writeHead).
    for (const [name, value] of headers) res.setHeader(name, value);
    serveFileAt(req, res, rawPath);
  };

  return (req, res, cx) => {
    const url = req.url!;
    const rawPath = pathOf(cx);
    if (rawPath === null) return false;
    const method = req.method!;
    let route: CompiledRoute<Q> | undefined;
    let named: Readonly<Record<string, string | undefined>> = {};
    let onPath: CompiledRoute<Q>[] | undefined;
    for (const r of compiled) {
      const m = matchPath(r.path, rawPath);
      if (m === null) continue;
      if (r.methods.has(method)) {
        route = r;
        named = m.named;
        break;
      }
      (onPath ??= []).push(r);
    }
    if (route === undefined) {
      if (onPath === undefined) return false;
      const allow = allowOf(onPath);
      if (method === 'OPTIONS') {
        writeHeadMerged(res, 204, { Allow: allow });
        res.end();
        return true;
      }
      // RFC 9110 §15.5.6
      sendError(req, res, ERRORS.methodNotAllowed, `${method} is not allowed here.`, { Allow: allow });
      return true;
    }
    const params = decodeParams(route, named);
    if (params === null) {
      sendError(req, res, ERRORS.badRequest, 'Malformed percent-encoding in the path.');
      return true;
    }
    // JSONP: GET/HEAD on a JSONP path with the callback parameter. Checked before the handler runs.
    let callback: string | undefined;
    if (jsonp !== undefined && (method === 'GET' || method === 'HEAD') && jsonp.matches(rawPath)) {
      const cb = jsonp.callback(url);
      if (cb.kind === 'invalid') {
        sendError(req, res, ERRORS.badRequest, jsonp.invalidDetail(cb.reason));
        return true;
      }
      if (cb.kind === 'ok') callback = cb.callback;
    }
    const query = new URLSearchParams(queryOf(url) ?? '');
    const r = route;
    const run = (body: unknown): boolean | Promise<boolean> => {
      const out = r.handler(req, body === undefined ? { params, query } : { body, params, query });
      if (isThenable(out)) return Promise.resolve(out).then((v) => send(req, res, r, callback, v));
      return send(req, res, r, callback, out);
    };
    if (!BODY_METHODS.has(method)) return run(undefined);
    const body = readJsonBody(req, res, maxBytes);
    if (body instanceof Promise) return body.then((b) => (b.kind === 'ok' ? run(b.body) : true));
    return body.kind === 'ok' ? run(body.body) : true;
  };
}

/** What the routes feature is made from: the app's routes and the sections they follow. */
export interface RoutesFeatureOptions<Q extends ContentRequest = IncomingMessage> {
  readonly routes: readonly Route<Q>[];
  readonly jsonp: JsonpOptions | undefined;
  readonly limits: Pick<LimitsOptions, 'maxBodyBytes'>;
  /** Serves a file of the static root (reply.file): the static feature's serveFileAt. */
  readonly serveFileAt?: ((req: ExchangeRequest, res: ResponseSink, rawPath: string) => void) | undefined;
}

/** Library routes as a feature (core/feature.ts): an answering step, off without routes. */
export function create<Q extends ContentRequest = IncomingMessage>(
  options: RoutesFeatureOptions<Q>,
  kernel: StepContext,
): Feature<Q> | undefined {
  const answer = createRoutes(options.routes, options.jsonp, options.limits, kernel, options.serveFileAt);
  return answer && { answer };
}
