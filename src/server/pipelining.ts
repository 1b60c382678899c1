// Pipelining bound (RFC 9112 §9.3.2): at most `maxPipelined` requests per connection are accepted
// and not yet answered. Node parses every request of a chunk it reads (a 64 KiB read can hold a
// thousand small requests) and starts a handler for each, so a client that pipelines thousands of
// requests and never reads makes the server hold thousands of responses. Here the bytes reach Node's
// parser one request head at a time: once `maxPipelined` responses are outstanding, the rest of the
// data waits (the socket is paused, so TCP pushes back on the client) until responses finish, like
// nginx, which reads the next request only after answering the previous one.
//
// How: the socket's 'data' and 'end' listeners that Node's HTTP server installs (`socketOnData`,
// `socketOnEnd`, the same in Node 20, 22 and 24) are taken off and called by the gate. Adding a
// 'data' listener makes Node read the socket from JavaScript instead of its C++ fast path. When those
// listeners cannot be found (a future Node), the gate stays off and Node's own behaviour applies.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** Node internals the gate reads: the HTTP parser and Node's own pause flag. */
interface HttpSocket extends Socket {
  parser?: { incoming?: { complete?: boolean } | null } | null;
  /** Set by Node's HTTP server while the outgoing buffer is full; Node asserts it is false on data. */
  _paused?: boolean;
}

interface Gate {
  inFlight: number;
  /** Pumps waiting bytes into the parser (called when a response finishes). */
  pump: () => void;
  /** Hands over the bytes not yet given to the parser (to an upgrade handler), leaving none. */
  take: () => Buffer | undefined;
}

const CRLFCRLF = Buffer.from('\r\n\r\n');
const gates = new WeakMap<Socket, Gate>();

type Listener = (...args: unknown[]) => void;
const named = (socket: Socket, event: string, name: string): Listener | undefined =>
  socket.listeners(event).find((f) => f.name === `bound ${name}`) as Listener | undefined;

function installGate(socket: HttpSocket, maxPipelined: number): void {
  const foundData = named(socket, 'data', 'socketOnData');
  const foundEnd = named(socket, 'end', 'socketOnEnd');
  if (foundData === undefined || foundEnd === undefined) return;
  const parser = socket.parser;
  const onData: Listener = foundData;
  const onEnd: Listener = foundEnd;
  let waiting: Buffer | undefined;
  let endSeen = false;
  let gatePaused = false;
  let done = false;
  const gate: Gate = {
    inFlight: 0,
    pump: () => {},
    take: () => {
      const rest = waiting;
      waiting = undefined;
      detach();
      return rest;
    },
  };

  /** The parser is inside a message (its body still arriving): its bytes must go on. */
  const midMessage = () => socket.parser?.incoming != null && socket.parser.incoming.complete === false;
  const detach = () => {
    done = true;
    socket.removeListener('data', onSocketData);
    socket.removeListener('end', onSocketEnd);
  };

  const pump = (): void => {
    while (waiting !== undefined && !done) {
      if (socket._paused === true) return; // Node waits for 'drain' and resumes the socket itself
      if (gate.inFlight >= maxPipelined && !midMessage()) {
        socket.pause();
        gatePaused = true;
        return;
      }
      // One request head at a time: up to and including the next CRLFCRLF (RFC 9112 §2.1). Body
      // bytes may be cut anywhere; the parser is incremental.
      const i = waiting.indexOf(CRLFCRLF);
      const cut = i === -1 ? waiting.length : i + 4;
      const piece = cut === waiting.length ? waiting : waiting.subarray(0, cut);
      waiting = cut === waiting.length ? undefined : waiting.subarray(cut);
      onData(piece);
      // An upgrade listener took the socket and the rest of the bytes (takeUnparsed).
      if (done) return;
      if (socket.parser !== parser) {
        // An upgrade (or a freed parser): the socket belongs to the upgrade handler now, which may
        // already have given it a new parser (an ignored Upgrade is parsed again: entry.ts).
        detach();
        if (waiting !== undefined && !socket.destroyed) socket.unshift(waiting);
        waiting = undefined;
        return;
      }
      if (socket.destroyed || socket.writableEnded) {
        // Answered with Connection: close or refused (client-error.ts): the rest is never parsed.
        waiting = undefined;
        done = true;
        return;
      }
    }
    if (done) return;
    if (endSeen) {
      endSeen = false;
      onEnd();
      return;
    }
    if (gatePaused && socket._paused !== true) {
      gatePaused = false;
      socket.resume();
    }
  };
  gate.pump = pump;

  function onSocketData(chunk: unknown): void {
    if (done) return;
    const b = chunk as Buffer;
    waiting = waiting === undefined ? b : Buffer.concat([waiting, b]);
    pump();
  }
  function onSocketEnd(): void {
    if (done) return;
    // The client's FIN waits behind the requests still waiting, so their answers are still sent.
    if (waiting !== undefined) endSeen = true;
    else onEnd();
  }
  socket.removeListener('data', onData);
  socket.removeListener('end', onEnd);
  socket.on('data', onSocketData);
  socket.on('end', onSocketEnd);
  // Node resumes the socket on 'drain' after its own pause; bytes already waiting go on then.
  socket.on('drain', () => {
    if (waiting !== undefined) setImmediate(pump);
  });
  gates.set(socket, gate);
}

/**
 * The bytes read from `socket` but not yet given to its parser. An 'upgrade' listener, which Node
 * calls while the gate is feeding the parser, takes them so they follow the upgrade's own head.
 */
export function takeUnparsed(socket: object): Buffer | undefined {
  return gates.get(socket as Socket)?.take();
}

export interface PipeliningTracker {
  /** Requests accepted and not yet answered on every connection, oldest first. */
  outstanding(): IterableIterator<ServerResponse>;
}

/**
 * Bounds pipelined requests per connection of `server` to `maxPipelined` accepted and not yet
 * answered; the socket is not read while that many are outstanding. 0: no bound (Node reads on its
 * C++ fast path; only for a server behind a proxy that bounds pipelining itself). Outstanding
 * responses are tracked either way (for the shutdown deadline).
 */
export function limitPipelining(server: Server, maxPipelined: number): PipeliningTracker {
  if (!Number.isInteger(maxPipelined) || maxPipelined < 0) {
    throw new TypeError('limits.maxPipelinedRequests must be an integer >= 0');
  }
  const open = new Set<ServerResponse>();
  if (maxPipelined > 0) server.on('connection', (socket: Socket) => installGate(socket, maxPipelined));
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const gate = gates.get(req.socket);
    open.add(res);
    if (gate !== undefined) gate.inFlight++;
    let counted = true;
    const release = () => {
      if (!counted) return;
      counted = false;
      open.delete(res);
      if (gate === undefined) return;
      gate.inFlight--;
      gate.pump();
    };
    res.once('finish', release);
    res.once('close', release);
  });
  return { outstanding: () => open.values() };
}
