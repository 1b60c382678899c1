// The kernel's types: the request context built once per request, the step contract every feature
// implements, and the logger the kernel and the features write to. A leaf module: it imports
// nothing from the features, so any of them may import it. The types are generic over the
// transport's request and response (exchange.ts); the Node transport's instances are node/types.ts.
import { type PathResult, resolveRequestPath } from '../../http/request-path.js';
import type { ExchangeRequest, ResponseSink } from './exchange.js';

/** Facts that earlier steps establish about one request and later steps read. */
export interface RequestFacts {
  /** An auth rule covered the request (credentials or address lists) and let it through: the
   *  answer depends on who asked, so the shared cache must not mix it with others' (RFC 9111 §3.5). */
  authorized?: boolean;
  /** The user id of Basic credentials that were verified, when any. */
  user?: string;
}

/** What an app mounting Gatehouse passes on to (Connect's and Express's `next`). */
export type PassOn = (err?: unknown) => void;

/** Where an app mounted Gatehouse for this request (adapters/shared.ts answerAtMount). */
export interface MountFacts {
  /** The path the app routed the request at, stripped from req.url ('/app'; never '' here). */
  readonly path: string;
  /** The client asked for the mount itself without its slash (`/app`, not `/app/`; req.url is `/`). */
  readonly withoutSlash: boolean;
}

/** What the app that mounted Gatehouse brings with a request: its `next`, and its mount. */
export interface Mounted {
  readonly passOn?: PassOn | undefined;
  readonly mount?: MountFacts | undefined;
}

/**
 * The request context: built once by the entry, after the request-target check (RFC 9112 §3.2), and
 * handed to every step, the final handler and the tunnels.
 */
export interface RequestContext {
  /** The method token, as sent (RFC 9110 §9.1: case-sensitive). */
  readonly method: string;
  /** The path of the canonical target, still percent-encoded ('*' for `OPTIONS *`). */
  readonly path: string;
  /** The query with its '?', or ''. */
  readonly query: string;
  /** The validated authority (Host, or HTTP/2's :authority). */
  readonly authority: string | undefined;
  /** Facts the steps record (auth's verdict, for the cache). */
  readonly facts: RequestFacts;
  /** Where the app mounted Gatehouse; undefined at the root and standalone. */
  readonly mount: MountFacts | undefined;
  /** The app's `next`, until the request is passed on (passOn). */
  next: PassOn | undefined;
  /** resolvedPath's answer, once asked. */
  resolved: PathResult | null | undefined;
}

/** The path, or null for `OPTIONS *` (RFC 9110 §9.3.7: it names the server, not a resource). */
export function pathOf(cx: RequestContext): string | null {
  return cx.path.charCodeAt(0) === 47 ? cx.path : null;
}

/**
 * The path decoded once, dot segments removed (RFC 3986 §5.2.4), dotfiles allowed: what path rules
 * (headers, CORS, auth, limits) match, so `/%61dmin` and `//admin/./x` are under `/admin`. Computed on
 * the first call and kept; null for `OPTIONS *`.
 */
export function resolvedPath(cx: RequestContext): PathResult | null {
  let r = cx.resolved;
  if (r === undefined) {
    const p = pathOf(cx);
    r = cx.resolved = p === null ? null : resolveRequestPath(p, true);
  }
  return r;
}

/** True when the request came through a mounted handler whose app has a next middleware for it. */
export function canPassOn(cx: RequestContext): boolean {
  return cx.next !== undefined;
}

/**
 * Hands the request to the app's next middleware when it was mounted with one: true when it did (the
 * caller answers nothing), false when Gatehouse answers itself (createServer, or no `next`).
 */
export function passOn(cx: RequestContext): boolean {
  const next = cx.next;
  if (next === undefined) return false;
  cx.next = undefined;
  next();
  return true;
}

/** A request step: true when it has taken the request (answered it or is answering it); false
 *  passes it on. Sync steps cost no promise. */
export type Step<Q extends ExchangeRequest = ExchangeRequest, S extends ResponseSink = ResponseSink> = (
  req: Q,
  res: S,
  cx: RequestContext,
) => boolean | Promise<boolean>;
export type Final<Q extends ExchangeRequest = ExchangeRequest, S extends ResponseSink = ResponseSink> = (
  req: Q,
  res: S,
  cx: RequestContext,
) => void;

/** A WebSocket handshake that passed every step; `accept()` hands the connection to the handler. */
export interface TunnelBase {
  accept(): void;
}

/** Takes a handshake for a path it owns: true when it did (answered, refused or switched). */
export type TunnelHandler<
  Q extends ExchangeRequest = ExchangeRequest,
  S extends ResponseSink = ResponseSink,
  T extends TunnelBase = TunnelBase,
> = (req: Q, res: S, tunnel: T, cx: RequestContext) => boolean;

/** The part of a pino logger the server uses; pass any pino logger. */
export interface Logger {
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
  isLevelEnabled(level: string): boolean;
  flush?(): void;
}

/** Memory pressure as the watch (ops/pressure.ts) last decided it. */
export interface MemoryPressure {
  /** none; shed: the caches drop their least recently used entries; critical: readiness answers 503. */
  readonly level: 'none' | 'shed' | 'critical';
  /** One line for the log and readiness ('' when none). */
  readonly reason: string;
  /** Bytes the features dropped under pressure since the start. */
  readonly shedBytes: number;
}

/** What every feature's create(options, kernel) may use. */
export interface StepContext<Q extends ExchangeRequest = ExchangeRequest> {
  readonly logger: Logger;
  /** The memory pressure watch's last decision (ops/pressure.ts); absent: not watched. */
  readonly memory?: (() => MemoryPressure) | undefined;
  /** The client address that counts for this request (the socket peer, or X-Forwarded-For /
   *  Forwarded from a trusted proxy). */
  readonly clientAddress: (req: Q) => string;
}
