// Test doubles for the reconnecting WebSocket's unit tests: a clock whose time moves only when the test
// says so, and a socket class the test drives (open, message, close) and inspects (sent, closes).
import type { Timers, WebSocketLike } from '../../src/client/websocket.js';

interface Timer {
  id: number;
  atMs: number;
  fn: () => void;
}

/** setTimeout/clearTimeout/now/random over a virtual clock: nothing runs unless `advance` says so. */
export class FakeClock implements Timers {
  nowMs = 1_000_000;
  private timers: Timer[] = [];
  private nextId = 1;
  /** Values `random()` returns in turn (then 0.5: the middle, where jitter adds nothing); each call is counted. */
  randoms: number[] = [];
  randomCalls = 0;

  setTimeout = (fn: () => void, ms: number): number => {
    const t = { id: this.nextId++, atMs: this.nowMs + ms, fn };
    this.timers.push(t);
    return t.id;
  };
  clearTimeout = (id: unknown): void => {
    this.timers = this.timers.filter((t) => t.id !== id);
  };
  now = (): number => this.nowMs;
  random = (): number => {
    this.randomCalls++;
    return this.randoms.shift() ?? 0.5;
  };

  /** Timers still armed. */
  get pending(): number {
    return this.timers.length;
  }

  /** Moves time forward by `ms`, running every timer that falls due, in order of due time. */
  advance(ms: number): void {
    const end = this.nowMs + ms;
    for (;;) {
      const due = this.timers.filter((t) => t.atMs <= end).sort((a, b) => a.atMs - b.atMs || a.id - b.id)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.nowMs = Math.max(this.nowMs, due.atMs);
      due.fn();
    }
    this.nowMs = end;
  }

  /**
   * A throttled background tab: the wall clock jumps by `ms` while no timer fires, then the earliest
   * timer fires once, late.
   */
  throttle(ms: number): void {
    this.nowMs += ms;
    const due = [...this.timers].sort((a, b) => a.atMs - b.atMs || a.id - b.id)[0];
    if (!due) return;
    this.timers = this.timers.filter((t) => t !== due);
    due.fn();
  }
}

type Listener<E> = ((ev: E) => unknown) | null;

/** One fake socket; the test plays the server through `accept`, `receive` and `drop`. */
export class FakeSocket implements WebSocketLike {
  readyState = 0;
  readonly sent: string[] = [];
  readonly closeCalls: { code?: number; reason?: string }[] = [];
  onopen: Listener<never> = null;
  onmessage: Listener<{ data: unknown }> = null;
  onclose: Listener<{ code: number; reason: string; wasClean: boolean }> = null;
  onerror: Listener<{ error?: unknown }> = null;

  constructor(
    readonly url: string,
    readonly protocols?: string | string[],
  ) {}

  send(data: string): void {
    if (this.readyState !== 1) throw new Error(`send in readyState ${this.readyState}`);
    this.sent.push(data);
  }

  /** Like a browser: an open socket goes CLOSING; a CONNECTING one too (the handshake is abandoned). */
  close(code?: number, reason?: string): void {
    this.closeCalls.push({ code, reason });
    if (this.readyState < 2) this.readyState = 2;
  }

  /** The handshake completes. */
  accept(): void {
    this.readyState = 1;
    this.onopen?.(undefined as never);
  }

  receive(data: unknown): void {
    this.onmessage?.({ data });
  }

  /** The connection ends (the server closed, or the network dropped it). */
  end(code = 1006, reason = '', wasClean = false): void {
    this.readyState = 3;
    this.onclose?.({ code, reason, wasClean });
  }

  fail(error: unknown = new Error('boom')): void {
    this.onerror?.({ error });
  }

  /** True when none of our listeners is left on it (onerror may be a no-op guard). */
  get detached(): boolean {
    return this.onopen === null && this.onmessage === null && this.onclose === null;
  }
}

/** A constructor that records every socket it makes, for one test. */
export function fakeWebSocket(): {
  WebSocket: new (url: string, p?: string | string[]) => FakeSocket;
  sockets: FakeSocket[];
} {
  const sockets: FakeSocket[] = [];
  class S extends FakeSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols);
      sockets.push(this);
    }
  }
  return { WebSocket: S, sockets };
}

/** Records a target's `online`/`offline` listeners so a test can fire them. */
export class FakeNetwork extends EventTarget {
  go(state: 'online' | 'offline'): void {
    this.dispatchEvent(new Event(state));
  }
}
