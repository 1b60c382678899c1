// The request context: the types every step shares and the facts steps record about a request.
// A leaf module: it imports nothing from the steps, so any step may import it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from '../ops/log.js';
import type { RedisPool } from '../redis/pool.js';

/** A request step: true when it has taken the request (answered it or is answering it); false
 *  passes it on. Sync steps cost no promise. */
export type Step = (req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>;
export type Final = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * A WebSocket handshake that passed every step (src/server/core/entry.ts): the raw socket and the bytes
 * read after its head. Until `accept()` the step's ServerResponse is bound to the socket, so a
 * refusal is an ordinary response (sendError); `accept()` takes the socket from it (RFC 6455 §4.2.2:
 * the handler then writes the 101 itself) and logs the switch.
 */
export interface Tunnel {
  readonly socket: Duplex;
  readonly head: Buffer;
  accept(): void;
}

/** Takes a handshake for a path it owns: true when it did (answered, refused or switched). */
export type TunnelHandler = (req: IncomingMessage, res: ServerResponse, tunnel: Tunnel) => boolean;

/** What every step factory may use. */
export interface StepContext {
  readonly logger: Logger;
  /** The client address that counts for this request (the socket peer, or X-Forwarded-For /
   *  Forwarded from a trusted proxy). */
  readonly clientAddress: (req: IncomingMessage) => string;
  /** Shared Redis connections; set by createGatehouse, absent in contexts tests build by hand. */
  readonly redis?: RedisPool;
}

/** Facts that earlier steps establish about one request and later steps read. */
export interface RequestFacts {
  /** An auth rule covered the request (credentials or address lists) and let it through: the
   *  answer depends on who asked, so the shared cache must not mix it with others' (RFC 9111 §3.5). */
  authorized?: boolean;
  /** The user id of Basic credentials that were verified, when any. */
  user?: string;
}

const FACTS = Symbol('gatehouse.requestFacts');
type WithFacts = IncomingMessage & { [FACTS]?: RequestFacts };

/** The facts recorded for `req`, or undefined when no step recorded any (reads allocate nothing). */
export function peekRequestFacts(req: IncomingMessage): RequestFacts | undefined {
  return (req as WithFacts)[FACTS];
}

/** The facts recorded for `req` so far (created empty on first use). */
export function requestFacts(req: IncomingMessage): RequestFacts {
  const r = req as WithFacts;
  let f = r[FACTS];
  if (f === undefined) {
    f = {};
    r[FACTS] = f;
  }
  return f;
}

/** What an app mounting Gatehouse passes on to (Connect's and Express's `next`). */
export type PassOn = (err?: unknown) => void;

const PASS_ON = Symbol('gatehouse.passOn');
type WithPassOn = IncomingMessage & { [PASS_ON]?: PassOn };

/** Records where a request that nothing here claims goes (handler.ts createHandler). */
export function setPassOn(req: IncomingMessage, next: PassOn): void {
  (req as WithPassOn)[PASS_ON] = next;
}

/** True when `req` came through a mounted handler whose app has a next middleware for it. */
export function canPassOn(req: IncomingMessage): boolean {
  return (req as WithPassOn)[PASS_ON] !== undefined;
}

/**
 * Hands `req` to the app's next middleware when it was mounted with one: true when it did (the
 * caller answers nothing), false when Gatehouse answers itself (createServer, or no `next`).
 */
export function passOn(req: IncomingMessage): boolean {
  const next = (req as WithPassOn)[PASS_ON];
  if (next === undefined) return false;
  (req as WithPassOn)[PASS_ON] = undefined;
  next();
  return true;
}

/** Where an app mounted Gatehouse for this request (adapters/shared.ts answerAtMount). */
export interface MountFacts {
  /** The path the app routed the request at, stripped from req.url ('/app'; never '' here). */
  readonly path: string;
  /** The client asked for the mount itself without its slash (`/app`, not `/app/`; req.url is `/`). */
  readonly withoutSlash: boolean;
}

const MOUNT = Symbol('gatehouse.mount');
type WithMount = IncomingMessage & { [MOUNT]?: MountFacts | undefined };

/** Records where the app mounted Gatehouse for `req`, or clears it before the request is passed on. */
export function setMount(req: IncomingMessage, mount: MountFacts | undefined): void {
  if (mount !== undefined || (req as WithMount)[MOUNT] !== undefined) (req as WithMount)[MOUNT] = mount;
}

/** Where the app mounted Gatehouse for `req`; undefined at the root and standalone. */
export function mountOf(req: IncomingMessage): MountFacts | undefined {
  return (req as WithMount)[MOUNT];
}
