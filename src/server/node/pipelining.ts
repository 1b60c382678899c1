// Pipelining bound (RFC 9112 §9.3.2): at most `maxPipelined` requests per connection are handled and
// not yet answered; the others wait without a handler and the socket is not read beyond them.
//
// Node reads a connection on its C++ fast path: its parser takes each read (up to 64 KiB) whole and
// emits a request for every head in it. Most clients send one request and wait for the answer, so that
// path stays on for them and the bound costs a counter. The first time a request arrives while an
// earlier one on the same connection is unanswered, the client pipelines, and its connection moves to
// a feed of our own: from then on its bytes reach Node's parser one request head at a time, and only
// while fewer than `maxPipelined` requests are outstanding. The read that revealed the pipelining
// stops at the first request beyond the bound (stopRead); the rest of it goes to the feed unparsed.
// So a client that pipelines thousands of requests and never reads holds `maxPipelined` handlers and
// a few parsed heads, like nginx, which reads the next request only after answering the previous one.
//
// How: the feed takes off the socket's 'data' and 'end' listeners that Node's HTTP server installs
// (`socketOnData`, `socketOnEnd`, the same in Node 20, 22 and 24) and calls them itself; adding a
// 'data' listener moves Node's reading from C++ to JavaScript. When those listeners cannot be found
// (a future Node), the feed stays off and only the handler bound applies.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** Node's HTTP parser (node_http_parser.cc), as far as the feed and the stop use it. */
interface HttpParser {
  incoming?: { complete?: boolean } | null;
  /** True while the parser reads the socket itself, in C++ (`parser.consume(handle)`). */
  _consumed?: boolean;
  /** After a request head: what llhttp does next (0: go on, 2: upgrade); set per connection. */
  onIncoming?: (req: unknown, keepAlive: unknown) => unknown;
  /** Clears a pause (llhttp_resume). */
  resume?: () => void;
  /** Inside the kOnExecute callback: a copy of the whole read just parsed. */
  getCurrentBuffer?: () => Buffer;
  [k: number]: unknown;
}

/** Node internals the feed reads: the HTTP parser and Node's own pause flag. */
interface HttpSocket extends Socket {
  parser?: HttpParser | null;
  /** Set by Node's HTTP server while the outgoing buffer is full; Node asserts it is false on data. */
  _paused?: boolean;
  [CONN]?: Conn;
}

const CONN = Symbol('gatehouse.pipelining');
const CRLFCRLF = Buffer.from('\r\n\r\n');

type Listener = (...args: unknown[]) => void;
type Handle = (req: IncomingMessage, res: ServerResponse) => void;

/** A connection that pipelined: its unanswered requests (handled or waiting) and its feed. */
class Conn {
  /** Requests parsed and not yet answered, oldest first. */
  readonly unanswered = new Set<ServerResponse>();
  /** Responses of requests parsed beyond the bound, oldest first: their handler has not run. */
  waiting: ServerResponse[] | undefined;
  /** Pumps bytes held by the feed into the parser. */
  pump: (() => void) | undefined;
  /** Hands over the bytes not yet given to the parser (to an upgrade handler), leaving none. */
  take: (() => Buffer | undefined) | undefined;
  /** Puts bytes the parser stopped before back in front of the feed's. */
  giveBack: ((rest: Buffer) => void) | undefined;
  /** The feed is giving bytes to the parser now (so a request arriving is one it gave). */
  feeding = false;
  /** Stops the read being parsed on Node's C++ path after the current head (stopRead), once. */
  stop: (() => void) | undefined;

  get accepted(): number {
    return this.unanswered.size;
  }
}

const named = (socket: Socket, event: string, name: string): Listener | undefined =>
  socket.listeners(event).find((f) => f.name === `bound ${name}`) as Listener | undefined;

/** Moves `socket` to the head-at-a-time feed. Safe inside Node's parser callbacks (it only swaps
 *  listeners; the read being parsed finishes as it began). */
function installFeed(socket: HttpSocket, c: Conn, maxPipelined: number): void {
  const foundData = named(socket, 'data', 'socketOnData');
  const foundEnd = named(socket, 'end', 'socketOnEnd');
  if (foundData === undefined || foundEnd === undefined) return;
  const parser = socket.parser;
  const onData: Listener = foundData;
  const onEnd: Listener = foundEnd;
  let held: Buffer | undefined;
  let endSeen = false;
  let feedPaused = false;
  let done = false;

  /** The parser is inside a message (its body still arriving): its bytes must go on. */
  const midMessage = () => socket.parser?.incoming != null && socket.parser.incoming.complete === false;
  const detach = () => {
    done = true;
    socket.removeListener('data', onSocketData);
    socket.removeListener('end', onSocketEnd);
  };

  const pump = (): void => {
    while (held !== undefined && !done) {
      if (socket._paused === true) return; // Node waits for 'drain' and resumes the socket itself
      if (c.accepted >= maxPipelined && !midMessage()) {
        socket.pause();
        feedPaused = true;
        return;
      }
      // One request head at a time: up to and including the next CRLFCRLF (RFC 9112 §2.1). Body
      // bytes may be cut anywhere; the parser is incremental.
      const i = held.indexOf(CRLFCRLF);
      const cut = i === -1 ? held.length : i + 4;
      const piece = cut === held.length ? held : held.subarray(0, cut);
      held = cut === held.length ? undefined : held.subarray(cut);
      c.feeding = true;
      try {
        onData(piece);
      } finally {
        c.feeding = false;
      }
      // An upgrade listener took the socket and the rest of the bytes (takeUnparsed).
      if (done) return;
      if (socket.parser !== parser) {
        // An upgrade (or a freed parser): the socket belongs to the upgrade handler now, which may
        // already have given it a new parser (an ignored Upgrade is parsed again: entry.ts).
        detach();
        if (held !== undefined && !socket.destroyed) socket.unshift(held);
        held = undefined;
        return;
      }
      if (socket.destroyed || socket.writableEnded) {
        // Answered with Connection: close or refused (client-error.ts): the rest is never parsed.
        held = undefined;
        done = true;
        return;
      }
    }
    if (done) return;
    if (endSeen && c.accepted === 0) {
      // The client's FIN is passed on once its requests are answered (Node ends the connection then).
      endSeen = false;
      onEnd();
      return;
    }
    if (feedPaused && socket._paused !== true) {
      feedPaused = false;
      socket.resume();
    }
  };

  function onSocketData(chunk: unknown): void {
    if (done) return;
    const b = chunk as Buffer;
    held = held === undefined ? b : Buffer.concat([held, b]);
    pump();
  }
  function onSocketEnd(): void {
    if (done) return;
    // RFC 9112 §9.6: the client's FIN waits behind the requests it pipelined, held or unanswered,
    // so their answers are still sent (Node ends the connection at the FIN).
    if (held !== undefined || c.accepted > 0) endSeen = true;
    else onEnd();
  }
  socket.removeListener('data', onData);
  socket.removeListener('end', onEnd);
  socket.on('data', onSocketData);
  socket.on('end', onSocketEnd);
  // Node resumes the socket on 'drain' after its own pause; bytes already held go on then.
  socket.on('drain', () => {
    if (held !== undefined) setImmediate(pump);
  });
  c.pump = pump;
  c.take = () => {
    const rest = held;
    held = undefined;
    detach();
    return rest;
  };
  c.giveBack = (rest) => {
    if (done) return;
    held = held === undefined ? rest : Buffer.concat([rest, held]);
    pump();
  };
}

/** llhttp's HPE_PAUSED: a parser callback returning it stops llhttp_execute at that point. */
const HPE_PAUSED = 21;

/**
 * Lets the read being parsed on Node's C++ path stop at the first request beyond the bound, so the
 * rest of it is never parsed into requests (5,000 pipelined heads in one read became about
 * 1,900 requests, 3 MB per connection). Called when the connection starts to pipeline, from inside
 * that read. Node's parser asks `parser.onIncoming` what to do after each request head (0: go on,
 * 2: upgrade) and hands the answer to llhttp; HPE_PAUSED stops llhttp right after that head, before
 * any body (on Node 20 `parser.pause()` inside a callback waits for the end of the read). Node then
 * calls the parser's kOnExecute with a `HPE_PAUSED` error: there the parser resumes, Node is told
 * the bytes parsed (not an error), and the bytes after the head go back to the feed. Both hooks are
 * put back after that read; from the next read on, the feed gives heads one at a time. Only for a
 * parser that read the socket itself (for a JavaScript `execute`, Node treats the pause as an error).
 */
function stopRead(socket: HttpSocket, c: Conn): void {
  const parser = socket.parser;
  const k = (parser?.constructor as { kOnExecute?: unknown } | undefined)?.kOnExecute;
  if (parser == null || typeof k !== 'number') return;
  const onExecute = parser[k];
  const onIncoming = parser.onIncoming;
  const { resume, getCurrentBuffer } = parser;
  if (typeof onExecute !== 'function' || typeof onIncoming !== 'function' || !resume || !getCurrentBuffer) {
    return;
  }
  let stopNow = false;
  c.stop = () => {
    c.stop = undefined;
    stopNow = true;
  };
  parser.onIncoming = (req: unknown, keepAlive: unknown): unknown => {
    const r = onIncoming(req, keepAlive);
    if (!stopNow || r !== 0) return r;
    stopNow = false;
    return HPE_PAUSED;
  };
  parser[k] = function (this: unknown, ret: unknown) {
    parser[k] = onExecute;
    parser.onIncoming = onIncoming;
    c.stop = undefined;
    const e = ret as { code?: unknown; bytesParsed?: unknown };
    if (!(ret instanceof Error) || e.code !== 'HPE_PAUSED' || typeof e.bytesParsed !== 'number') {
      (onExecute as (r: unknown) => void).call(this, ret);
      return;
    }
    // Only within kOnExecute does the parser hold the read (a copy is returned).
    const rest = getCurrentBuffer.call(parser).subarray(e.bytesParsed);
    // Before Node's handler, which may pause the parser for its own reasons (a full send buffer).
    resume.call(parser);
    (onExecute as (r: unknown) => void).call(this, e.bytesParsed);
    if (rest.length > 0) c.giveBack?.(rest);
  };
}

/**
 * The bytes read from `socket` but not yet given to its parser. An 'upgrade' listener, which Node
 * calls while the feed is giving bytes to the parser, takes them so they follow the upgrade's head.
 */
export function takeUnparsed(socket: object): Buffer | undefined {
  return (socket as HttpSocket)[CONN]?.take?.();
}

/** The response Node is writing on `socket` now (the oldest unanswered one), if any. */
const currentResponse = (socket: Socket): ServerResponse | null | undefined =>
  (socket as { _httpMessage?: ServerResponse | null })._httpMessage;

export interface PipeliningTracker {
  /** The server's 'request' listener: counts the request, then runs `handle` now or, beyond the
   *  bound, once an earlier answer on its connection finished. */
  readonly onRequest: Handle;
  /** Requests accepted and not yet answered on every connection (started or waiting). */
  outstanding(): IterableIterator<ServerResponse>;
}

/**
 * Bounds pipelined requests per connection of `server` to `maxPipelined` handled and not yet
 * answered (0: no bound; every request is handled at once, and still tracked). `strict`: every connection is read one
 * head at a time from the start, so not even the read that shows the pipelining is parsed ahead (at
 * the cost of Node's C++ read path). Outstanding responses are tracked either way (for the shutdown
 * deadline).
 */
export function limitPipelining(
  server: import('node:events').EventEmitter,
  maxPipelined: number,
  handle: Handle,
  strict = false,
  /** 'secureConnection' on a TLS server: the socket the HTTP/1 parser reads is the TLS one. */
  connectionEvent: 'connection' | 'secureConnection' = 'connection',
): PipeliningTracker {
  if (!Number.isInteger(maxPipelined) || maxPipelined < 0) {
    throw new TypeError('limits.maxPipelinedRequests must be an integer >= 0');
  }
  /** Open connections (for the shutdown deadline): one entry per connection, none per request. */
  const sockets = new Set<HttpSocket>();
  /** HTTP/2 streams in progress (RFC 9113 streams are concurrent: no pipelining bound applies). */
  const streams = new Set<ServerResponse>();
  server.on(connectionEvent, (socket: HttpSocket & { alpnProtocol?: string | false }) => {
    if (socket.alpnProtocol === 'h2') return;
    sockets.add(socket);
    socket.once('close', () => {
      sockets.delete(socket);
      // Requests still waiting for a handler are dropped with their connection.
      const c = socket[CONN];
      if (c !== undefined) dropWaiting(c);
    });
    // Every connection is fed one head at a time from its first byte: the parser never runs ahead.
    if (strict && maxPipelined > 0) pipelining(socket);
  });

  /** Counts `res` on its pipelining connection until it is answered. */
  const track = (c: Conn, res: ServerResponse): void => {
    c.unanswered.add(res);
    // 'close' follows 'finish' (Node emits it for every answered response) and a reset connection.
    res.on('close', onResponseClose);
  };
  /** Forgets the requests still waiting for a handler (their connection is gone). */
  const dropWaiting = (c: Conn): void => {
    if (c.waiting === undefined) return;
    for (const res of c.waiting.splice(0)) c.unanswered.delete(res);
  };
  /** A response finished or its connection closed: the next waiting request (if any) starts. */
  function onResponseClose(this: ServerResponse): void {
    const socket = this.req.socket as HttpSocket | null;
    const c = socket?.[CONN];
    if (c === undefined || !c.unanswered.delete(this)) return;
    if (socket!.destroyed) {
      // The connection is gone: the requests still waiting never run.
      dropWaiting(c);
      return;
    }
    let next = c.waiting?.shift();
    while (next?.destroyed) {
      // Reset before its turn: it never runs.
      c.unanswered.delete(next);
      next = c.waiting?.shift();
    }
    if (next !== undefined) handle(next.req, next);
    c.pump?.();
  }
  /** The connection pipelines from now on: counted, and (with a bound) fed one head at a time. */
  const pipelining = (socket: HttpSocket): Conn => {
    const c = new Conn();
    socket[CONN] = c;
    // The answer in progress (an earlier request) counts too.
    const current = currentResponse(socket);
    if (current) track(c, current);
    if (maxPipelined > 0) {
      // Whether Node's parser reads the socket in C++ (the feed's 'data' listener ends that).
      const consumed = socket.parser?._consumed === true;
      installFeed(socket, c, maxPipelined);
      if (consumed && c.pump !== undefined) stopRead(socket, c);
    }
    return c;
  };

  const forgetStream = function (this: ServerResponse) {
    streams.delete(this);
  };
  const onRequest: Handle = (req, res) => {
    if (req.httpVersionMajor === 2) {
      streams.add(res);
      res.once('close', forgetStream);
      handle(req, res);
      return;
    }
    const socket = req.socket as HttpSocket;
    let c = socket[CONN];
    if (c === undefined) {
      // Node gave this response the socket: no earlier request on the connection is unanswered (the
      // common case costs nothing more). Otherwise it queued it: the client pipelines.
      if (res.socket !== null) {
        handle(req, res);
        return;
      }
      c = pipelining(socket);
    }
    track(c, res);
    if (maxPipelined > 0 && c.accepted > maxPipelined) {
      (c.waiting ??= []).push(res);
      // The first beyond the bound in the read that showed the pipelining: the rest is not parsed.
      if (c.stop !== undefined && !c.feeding) c.stop();
      return;
    }
    handle(req, res);
  };

  /** Unanswered requests: each connection's answer in progress, or all of a pipelining one's. */
  function* outstanding(): IterableIterator<ServerResponse> {
    yield* [...streams];
    for (const socket of sockets) {
      const c = socket[CONN];
      if (c !== undefined) yield* [...c.unanswered];
      else {
        const res = currentResponse(socket);
        if (res) yield res;
      }
    }
  }
  return { onRequest, outstanding };
}
