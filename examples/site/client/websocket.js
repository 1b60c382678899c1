// A WebSocket (RFC 6455) that reconnects, queues sends while down, sends a heartbeat and notices a dead
// link. Browser and Node (pass `ws`'s WebSocket on Node 20). The decisions are pure (schedule.ts); this
// class only wires sockets, timers and events to them.
import { afterClose, isLinkDead, reconnectDelayMs } from './schedule.js';
/** The `message` event (Node 20 has no global MessageEvent). */
export class WsMessageEvent extends Event {
    data;
    constructor(data) {
        super('message');
        this.data = data;
    }
}
/** The `close` event (Node 20 has no global CloseEvent). */
export class WsCloseEvent extends Event {
    code;
    reason;
    wasClean;
    constructor(code, reason, wasClean) {
        super('close');
        this.code = code;
        this.reason = reason;
        this.wasClean = wasClean;
    }
}
/** The `error` event; `error` is the cause when one is known (ws gives one, browsers do not). */
export class WsErrorEvent extends Event {
    error;
    constructor(error) {
        super('error');
        this.error = error;
    }
}
const PING = '{"type":"ping"}';
/** Our close code for a dead link (RFC 6455 §7.4.2: 4000-4999 are private use). */
export const DEAD_LINK_CODE = 4000;
const OPEN = 1;
const CLOSED = 3;
const noop = () => { };
function check(name, v, ok) {
    if (!ok || !(v >= 0))
        throw new RangeError(`ReconnectingWebSocket: ${name} = ${v} is out of range`);
    return v;
}
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: see the interface above.
export class ReconnectingWebSocket extends EventTarget {
    url;
    protocols;
    static CONNECTING = 0;
    static OPEN = 1;
    static CLOSING = 2;
    static CLOSED = 3;
    onopen = null;
    onmessage = null;
    onclose = null;
    onerror = null;
    o;
    WS;
    t;
    net;
    socket;
    queue = [];
    /** Bumped whenever the current attempt is abandoned: a URL promise of an older one is dropped. */
    gen = 0;
    attempt = 0;
    userClosed = false;
    offline = false;
    /** Closed and meant to reconnect: on a timer, or waiting for `online`. */
    pending = false;
    timer;
    beat;
    lastReceivedMs = 0;
    constructor(url, protocols, options = {}) {
        super();
        this.url = url;
        this.protocols = protocols;
        const o = {
            reconnect: true,
            reconnectInterval: 5000,
            heartbeat: true,
            heartbeatInterval: 30000,
            maxQueuedMessages: 1000,
            ...options,
        };
        check('reconnectInterval', o.reconnectInterval, true);
        check('heartbeatInterval', o.heartbeatInterval, o.heartbeatInterval > 0);
        check('maxQueuedMessages', o.maxQueuedMessages, Number.isInteger(o.maxQueuedMessages));
        const b = o.backoff;
        if (b) {
            const { factor = 1, maxMs = 0, jitter = 0 } = b;
            check('backoff.factor', factor, factor >= 1 && factor < Infinity);
            check('backoff.maxMs', maxMs, maxMs < Infinity);
            check('backoff.jitter', jitter, jitter <= 1);
        }
        this.o = o;
        const WS = o.WebSocket ?? globalThis.WebSocket;
        if (!WS)
            throw new TypeError("ReconnectingWebSocket: this runtime has no global WebSocket (Node 20); pass one: import { WebSocket } from 'ws' and { WebSocket } in the options");
        this.WS = WS;
        const g = globalThis;
        this.t = {
            setTimeout: (fn, ms) => setTimeout(fn, ms),
            clearTimeout: (id) => clearTimeout(id),
            now: Date.now,
            random: Math.random,
            ...o.timers,
        };
        const hasEvents = typeof g.addEventListener === 'function' && 'ononline' in g;
        this.net = o.connectivity !== undefined ? o.connectivity : hasEvents ? g : null;
        this.offline = this.net === g && g.navigator?.onLine === false;
        // on* properties are listeners too: a throwing handler is reported like any other listener.
        for (const type of ['open', 'message', 'close', 'error'])
            this.addEventListener(type, (e) => this[`on${type}`]?.(e));
        // A synchronous failure here (a bad URL, a throwing URL function) throws, as `new WebSocket` does.
        this.connect(true);
        this.listenNetwork(true);
    }
    /** The current socket's state (before the first socket exists: CONNECTING, or CLOSED when stopped). */
    get readyState() {
        return this.socket?.readyState ?? (this.userClosed || this.pending ? CLOSED : 0);
    }
    /**
     * Sends `data` (a string as is, anything else as its JSON text), or queues it while not open.
     * False when the queue is full (`maxQueuedMessages`); an `error` event says so too.
     */
    send(data) {
        const text = typeof data === 'string' ? data : JSON.stringify(data);
        if (text === undefined)
            throw new TypeError('ReconnectingWebSocket: send() needs a JSON value');
        if (this.socket?.readyState === OPEN) {
            this.socket.send(text);
            return true;
        }
        if (this.queue.length >= this.o.maxQueuedMessages) {
            this.dispatchEvent(new WsErrorEvent(new RangeError(`send queue full (${this.o.maxQueuedMessages})`)));
            return false;
        }
        this.queue.push(text);
        return true;
    }
    /** Closes for good: no reconnect, no heartbeat, no pending timer; a connecting socket is abandoned. */
    close(code, reason) {
        this.userClosed = true;
        this.stop();
        this.listenNetwork(false);
        const s = this.socket;
        if (s?.readyState === 0) {
            // Abandoned: as a browser does, report it as a close without a handshake (1006).
            this.drop(s);
            this.closed(s, 1006, 'closed before open', false);
        }
        // An open socket keeps its listeners: its own close event reaches the user (RFC 6455 §7.1.2).
        else if (s && s.readyState < 2)
            s.close(code, reason);
    }
    /** Drops the current socket, whatever the state (even after `close()`), and connects again now. */
    reconnect(code, reason) {
        this.userClosed = false;
        this.stop();
        this.listenNetwork(true);
        if (this.socket)
            this.drop(this.socket, code, reason);
        this.attempt = 0;
        this.connect();
    }
    stop() {
        this.gen++;
        this.pending = false;
        this.t.clearTimeout(this.timer);
        this.t.clearTimeout(this.beat);
    }
    /** Detaches our listeners from `s` and closes it; never throws (reconnecting-websocket #183). */
    drop(s, code, reason) {
        s.onopen = s.onmessage = s.onclose = null;
        // `ws` emits `error` when a CONNECTING socket is closed; with no listener that would crash Node.
        s.onerror = noop;
        try {
            if (s.readyState < 2)
                s.close(code, reason);
        }
        catch { }
    }
    connect(rethrow = false) {
        const gen = ++this.gen;
        try {
            const url = typeof this.url === 'string' ? this.url : this.url();
            if (typeof url === 'string')
                this.create(url);
            else
                url.then((u) => gen === this.gen && this.create(u), (e) => gen === this.gen && this.fail(e));
        }
        catch (e) {
            if (rethrow)
                throw e;
            this.fail(e);
        }
    }
    /** An attempt that failed before a socket existed (the URL function or the constructor threw). */
    fail(e) {
        this.dispatchEvent(new WsErrorEvent(e));
        this.closed(undefined, 1006, String(e), false);
    }
    create(url) {
        if (this.socket)
            this.drop(this.socket);
        const s = new this.WS(url, this.protocols);
        this.socket = s;
        s.onopen = () => this.opened(s);
        s.onmessage = (e) => {
            this.lastReceivedMs = this.t.now();
            // A message: the link works, the next failure starts over from the first delay.
            this.attempt = 0;
            this.dispatchEvent(new WsMessageEvent(e.data));
        };
        s.onerror = (e) => this.dispatchEvent(new WsErrorEvent(e.error ?? e));
        s.onclose = (e) => this.closed(s, e.code, e.reason, e.wasClean);
    }
    opened(s) {
        // Not `attempt = 0` here: a server that accepts and closes at once would reset it every time.
        this.lastReceivedMs = this.t.now();
        // Queued sends go first, in order, before any `open` listener can send.
        const q = this.queue;
        this.queue = [];
        for (const text of q)
            s.send(text);
        if (this.o.heartbeat)
            this.tick(s);
        this.dispatchEvent(new Event('open'));
    }
    /** Arms the next heartbeat: then a dead link is dropped, a live one pinged. */
    tick(s) {
        const ms = this.o.heartbeatInterval;
        this.beat = this.t.setTimeout(() => {
            if (this.socket !== s)
                return;
            if (isLinkDead(this.t.now(), this.lastReceivedMs, ms)) {
                this.drop(s, DEAD_LINK_CODE, 'heartbeat timeout');
                this.closed(s, DEAD_LINK_CODE, 'heartbeat timeout', false);
            }
            else {
                // Up for a heartbeat interval: the link stayed up.
                this.attempt = 0;
                s.send(PING);
                this.tick(s);
            }
        }, ms);
    }
    /** A close of socket `s` (undefined: none was made); then the next step. */
    closed(s, code, reason, wasClean) {
        if (s && s !== this.socket)
            return;
        this.t.clearTimeout(this.beat);
        const ev = new WsCloseEvent(code, reason, wasClean);
        const gen = this.gen;
        this.dispatchEvent(ev);
        // A close listener may have called close() or reconnect(): that call decided already.
        if (gen !== this.gen)
            return;
        const o = this.o;
        const next = afterClose({
            userClosed: this.userClosed,
            reconnect: o.reconnect,
            allowed: this.userClosed || !o.reconnect || (o.shouldReconnect?.(ev) ?? true),
            offline: this.offline,
            delayMs: reconnectDelayMs(this.attempt, o.reconnectInterval, o.backoff, this.t.random),
        });
        if (next.kind === 'stop')
            return;
        this.pending = true;
        if (next.kind === 'reconnect') {
            this.attempt++;
            this.timer = this.t.setTimeout(() => {
                this.pending = false;
                this.connect();
            }, next.delayMs);
        }
    }
    onNetwork = (e) => {
        this.offline = e.type === 'offline';
        if (!this.pending)
            return;
        this.t.clearTimeout(this.timer);
        if (!this.offline) {
            this.pending = false;
            this.attempt = 0;
            this.connect();
        }
    };
    listenNetwork(on) {
        const n = this.net;
        if (!n)
            return;
        const f = on ? n.addEventListener : n.removeEventListener;
        f.call(n, 'online', this.onNetwork);
        f.call(n, 'offline', this.onNetwork);
    }
}
