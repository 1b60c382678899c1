// ReconnectingWebSocket's state machine with an injected clock and a fake socket: no sleeping, no real
// timers, no network. Each case is named by its condition.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  DEAD_LINK_CODE,
  ReconnectingWebSocket,
  type ReconnectingWebSocketOptions,
  type WsCloseEvent,
} from '../../src/client/websocket.js';
import { FakeClock, FakeNetwork, type FakeSocket, fakeWebSocket } from './fakes.js';

const PING = '{"type":"ping"}';

interface Rig {
  rws: ReconnectingWebSocket;
  clock: FakeClock;
  sockets: FakeSocket[];
  /** The newest socket. */
  last(): FakeSocket;
  events: string[];
}

function rig(
  o: ReconnectingWebSocketOptions = {},
  url: ConstructorParameters<typeof ReconnectingWebSocket>[0] = 'ws://x/ws',
): Rig {
  const clock = new FakeClock();
  const { WebSocket, sockets } = fakeWebSocket();
  const rws = new ReconnectingWebSocket(url, undefined, {
    WebSocket,
    timers: clock,
    connectivity: null,
    ...o,
  });
  const events: string[] = [];
  rws.addEventListener('open', () => events.push('open'));
  rws.addEventListener('message', (e) => events.push(`message ${e.data}`));
  rws.addEventListener('close', (e) => events.push(`close ${e.code}`));
  rws.addEventListener('error', () => events.push('error'));
  return {
    rws,
    clock,
    sockets,
    events,
    last: () => {
      const s = sockets.at(-1);
      assert.ok(s, 'a socket was made');
      return s;
    },
  };
}

/** Steps the clock by `stepMs` until a new socket appears (failing after an hour of virtual time). */
function advanceUntilNewSocket(r: Rig, stepMs: number): void {
  const n = r.sockets.length;
  for (let ms = 0; r.sockets.length === n; ms += stepMs) {
    assert.ok(ms < 3_600_000, 'no new socket within an hour');
    r.clock.advance(stepMs);
  }
}

describe('ReconnectingWebSocket: construction', () => {
  it('no WebSocket option and no global WebSocket -> a TypeError telling to pass ws', () => {
    const saved = Object.getOwnPropertyDescriptor(globalThis, 'WebSocket');
    // Node 22+ has a global WebSocket; Node 20 has none. Make both look like Node 20.
    Object.defineProperty(globalThis, 'WebSocket', { value: undefined, configurable: true, writable: true });
    try {
      assert.throws(
        () => new ReconnectingWebSocket('ws://x/'),
        (e: Error) => {
          assert.ok(e instanceof TypeError);
          assert.match(e.message, /no global WebSocket/);
          assert.match(e.message, /from 'ws'/);
          return true;
        },
      );
    } finally {
      if (saved) Object.defineProperty(globalThis, 'WebSocket', saved);
      else delete (globalThis as { WebSocket?: unknown }).WebSocket;
    }
  });

  const bad: [string, ReconnectingWebSocketOptions, RegExp][] = [
    ['negative reconnectInterval -> RangeError naming it', { reconnectInterval: -1 }, /reconnectInterval/],
    ['NaN reconnectInterval -> RangeError naming it', { reconnectInterval: Number.NaN }, /reconnectInterval/],
    ['heartbeatInterval 0 -> RangeError naming it', { heartbeatInterval: 0 }, /heartbeatInterval/],
    ['fractional maxQueuedMessages -> RangeError naming it', { maxQueuedMessages: 1.5 }, /maxQueuedMessages/],
    [
      'backoff factor below 1 -> RangeError naming it',
      { backoff: { factor: 0.5, maxMs: 1, jitter: 0 } },
      /backoff\.factor/,
    ],
    [
      'backoff maxMs Infinity -> RangeError naming it',
      { backoff: { factor: 2, maxMs: Infinity, jitter: 0 } },
      /backoff\.maxMs/,
    ],
    [
      'backoff jitter above 1 -> RangeError naming it',
      { backoff: { factor: 2, maxMs: 1, jitter: 2 } },
      /backoff\.jitter/,
    ],
  ];
  for (const [name, o, re] of bad) {
    it(name, () =>
      assert.throws(
        () => rig(o),
        (e: Error) => e instanceof RangeError && re.test(e.message),
      ),
    );
  }

  it('string URL -> the socket is made at once with the URL and protocols', () => {
    const { WebSocket, sockets } = fakeWebSocket();
    new ReconnectingWebSocket('ws://x/a', ['p1', 'p2'], {
      WebSocket,
      connectivity: null,
      timers: new FakeClock(),
    });
    assert.equal(sockets.length, 1);
    assert.equal(sockets[0]?.url, 'ws://x/a');
    assert.deepEqual(sockets[0]?.protocols, ['p1', 'p2']);
  });

  it('URL function -> asked again on every attempt', () => {
    let n = 0;
    const r = rig({ reconnectInterval: 10 }, () => `ws://x/${++n}`);
    r.last().end();
    r.clock.advance(10);
    assert.deepEqual(
      r.sockets.map((s) => s.url),
      ['ws://x/1', 'ws://x/2'],
    );
  });

  it('URL promise -> the socket is made when it resolves', async () => {
    const r = rig({}, () => Promise.resolve('ws://x/later'));
    assert.equal(r.sockets.length, 0);
    assert.equal(r.rws.readyState, ReconnectingWebSocket.CONNECTING);
    await Promise.resolve();
    await Promise.resolve();
    assert.equal(r.last().url, 'ws://x/later');
  });

  it('URL the WebSocket constructor refuses -> the constructor throws, as new WebSocket does', () => {
    class Refusing {
      constructor(url: string) {
        throw new SyntaxError(`bad URL ${url}`);
      }
    }
    assert.throws(
      () => new ReconnectingWebSocket('http//nope', undefined, { WebSocket: Refusing, connectivity: null }),
      SyntaxError,
    );
  });

  it('URL function throws on a later attempt -> error and close events, then the next attempt', () => {
    let n = 0;
    const r = rig({ reconnectInterval: 10 }, () => {
      if (++n === 2) throw new Error('no token yet');
      return `ws://x/${n}`;
    });
    r.last().end();
    r.clock.advance(10);
    assert.deepEqual(r.events, ['close 1006', 'error', 'close 1006']);
    r.clock.advance(10);
    assert.equal(r.last().url, 'ws://x/3');
  });

  it('URL promise rejects -> error and close events, then a reconnect after the interval', async () => {
    let n = 0;
    const r = rig({ reconnectInterval: 100 }, () =>
      ++n === 1 ? Promise.reject(new Error('no token')) : Promise.resolve('ws://x/ok'),
    );
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(r.events, ['error', 'close 1006']);
    r.clock.advance(100);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(r.last().url, 'ws://x/ok');
  });
});

describe('ReconnectingWebSocket: send', () => {
  it('open, string -> sent as is', () => {
    const r = rig();
    r.last().accept();
    assert.equal(r.rws.send('hello'), true);
    assert.deepEqual(r.last().sent, ['hello']);
  });

  it('open, object, number, null -> sent as JSON text', () => {
    const r = rig();
    r.last().accept();
    r.rws.send({ a: [1, 'x'] });
    r.rws.send(42);
    r.rws.send(null);
    assert.deepEqual(r.last().sent, ['{"a":[1,"x"]}', '42', 'null']);
  });

  it('undefined (no JSON text) -> TypeError, nothing sent', () => {
    const r = rig();
    r.last().accept();
    assert.throws(() => r.rws.send(undefined), TypeError);
    assert.deepEqual(r.last().sent, []);
  });

  it('connecting -> queued; on open flushed in order before open listeners run', () => {
    const r = rig({ heartbeat: false });
    const seenAtOpen: string[][] = [];
    r.rws.addEventListener('open', () => seenAtOpen.push([...r.last().sent]));
    r.rws.onopen = () => seenAtOpen.push([...r.last().sent]);
    r.rws.send('1');
    r.rws.send({ n: 2 });
    r.rws.send('3');
    assert.deepEqual(r.last().sent, []);
    r.last().accept();
    assert.deepEqual(seenAtOpen, [
      ['1', '{"n":2}', '3'],
      ['1', '{"n":2}', '3'],
    ]);
  });

  it('a send from an open listener -> goes after the queued ones', () => {
    const r = rig({ heartbeat: false });
    r.rws.send('queued');
    r.rws.onopen = () => r.rws.send('from onopen');
    r.last().accept();
    assert.deepEqual(r.last().sent, ['queued', 'from onopen']);
  });

  it('closed, waiting to reconnect -> queued and sent on the next socket', () => {
    const r = rig({ heartbeat: false, reconnectInterval: 50 });
    r.last().accept();
    r.last().end();
    r.rws.send('while down');
    r.clock.advance(50);
    r.last().accept();
    assert.deepEqual(r.sockets[0]?.sent, []);
    assert.deepEqual(r.last().sent, ['while down']);
  });

  it('queue at maxQueuedMessages -> send returns false and an error event fires; the queue is kept', () => {
    const r = rig({ maxQueuedMessages: 2, heartbeat: false });
    const errors: unknown[] = [];
    r.rws.onerror = (e) => errors.push(e.error);
    assert.equal(r.rws.send('a'), true);
    assert.equal(r.rws.send('b'), true);
    assert.equal(r.rws.send('c'), false);
    assert.equal(errors.length, 1);
    assert.match(String(errors[0]), /queue full \(2\)/);
    r.last().accept();
    assert.deepEqual(r.last().sent, ['a', 'b']);
    assert.equal(r.rws.send('d'), true, 'open again: sends go through');
  });

  it('maxQueuedMessages 0 -> every send while not open fails loudly', () => {
    const r = rig({ maxQueuedMessages: 0 });
    assert.equal(r.rws.send('x'), false);
    assert.deepEqual(r.events, ['error']);
  });
});

describe('ReconnectingWebSocket: events', () => {
  it('open, message, close, error -> both addEventListener and on* see them, in that order', () => {
    const r = rig({ reconnect: false });
    const seen: string[] = [];
    r.rws.onopen = () => seen.push('onopen');
    r.rws.onmessage = (e) => seen.push(`onmessage ${e.data}`);
    r.rws.onerror = (e) => seen.push(`onerror ${(e.error as Error).message}`);
    r.rws.onclose = (e) => seen.push(`onclose ${e.code} ${e.reason} ${e.wasClean}`);
    r.last().accept();
    r.last().receive('hi');
    r.last().fail(new Error('bad'));
    r.last().end(1001, 'going away', true);
    assert.deepEqual(r.events, ['open', 'message hi', 'error', 'close 1001']);
    assert.deepEqual(seen, ['onopen', 'onmessage hi', 'onerror bad', 'onclose 1001 going away true']);
  });

  it('a throwing onclose -> reported like any listener error; the state machine still reconnects', async () => {
    const r = rig({ reconnectInterval: 10 });
    // Node reports a listener's throw as an uncaught exception on the next tick (a browser logs it);
    // the test runner's own handler steps aside while this test catches it.
    const saved = process.listeners('uncaughtException');
    process.removeAllListeners('uncaughtException');
    const errors: unknown[] = [];
    process.on('uncaughtException', (e) => errors.push(e));
    r.rws.onclose = () => {
      throw new Error('listener bug');
    };
    try {
      r.last().end();
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.removeAllListeners('uncaughtException');
      for (const l of saved) process.on('uncaughtException', l);
    }
    assert.match(String(errors[0]), /listener bug/);
    r.clock.advance(10);
    assert.equal(r.sockets.length, 2);
  });

  it('readyState -> the current socket, through connect, open, close and reconnect', () => {
    const r = rig({ reconnectInterval: 10, heartbeat: false });
    assert.equal(r.rws.readyState, ReconnectingWebSocket.CONNECTING);
    r.last().accept();
    assert.equal(r.rws.readyState, ReconnectingWebSocket.OPEN);
    r.last().end();
    assert.equal(r.rws.readyState, ReconnectingWebSocket.CLOSED);
    r.clock.advance(10);
    assert.equal(r.rws.readyState, ReconnectingWebSocket.CONNECTING);
    r.rws.close();
    assert.equal(r.rws.readyState, ReconnectingWebSocket.CLOSING);
  });
});

describe('ReconnectingWebSocket: heartbeat', () => {
  it('open -> {"type":"ping"} every heartbeatInterval', () => {
    const r = rig({ heartbeatInterval: 30_000 });
    r.last().accept();
    r.clock.advance(29_999);
    assert.deepEqual(r.last().sent, []);
    r.clock.advance(1);
    assert.deepEqual(r.last().sent, [PING]);
    r.last().receive('{"type":"pong"}');
    r.clock.advance(30_000);
    assert.deepEqual(r.last().sent, [PING, PING]);
  });

  it('heartbeat false -> no ping and no timer while open', () => {
    const r = rig({ heartbeat: false });
    r.last().accept();
    assert.equal(r.clock.pending, 0);
    r.clock.advance(10 * 30_000);
    assert.deepEqual(r.last().sent, []);
  });

  it('closed by the server -> heartbeat stops (only the reconnect timer is left)', () => {
    const r = rig({ heartbeatInterval: 100, reconnectInterval: 5000 });
    r.last().accept();
    r.last().end(1000, '', true);
    assert.equal(r.clock.pending, 1);
    r.clock.advance(4999);
    assert.deepEqual(r.sockets[0]?.sent, []);
  });

  it('closed by the user -> no timer left at all', () => {
    const r = rig({ heartbeatInterval: 100 });
    r.last().accept();
    r.rws.close();
    assert.equal(r.clock.pending, 0);
  });

  it('pongs keep arriving -> the link stays open for hours', () => {
    const r = rig({ heartbeatInterval: 30_000 });
    r.last().accept();
    for (let i = 0; i < 500; i++) {
      r.clock.advance(30_000);
      r.last().receive('{"type":"pong"}');
    }
    assert.equal(r.sockets.length, 1);
    assert.equal(r.rws.readyState, ReconnectingWebSocket.OPEN);
  });
});

describe('ReconnectingWebSocket: dead link', () => {
  it('nothing received for 2 x heartbeatInterval -> closed with 4000, close event, reconnect', () => {
    const r = rig({ heartbeatInterval: 30_000, reconnectInterval: 5000 });
    const closes: WsCloseEvent[] = [];
    r.rws.onclose = (e) => closes.push(e);
    const first = r.last();
    first.accept();
    r.clock.advance(59_999);
    assert.equal(first.closeCalls.length, 0, 'one interval of silence is not dead');
    r.clock.advance(1);
    assert.deepEqual(first.closeCalls, [{ code: DEAD_LINK_CODE, reason: 'heartbeat timeout' }]);
    assert.ok(first.detached, 'the dead socket keeps none of our listeners');
    assert.equal(closes.length, 1);
    assert.equal(closes[0]?.code, DEAD_LINK_CODE);
    assert.equal(closes[0]?.wasClean, false);
    r.clock.advance(5000);
    assert.equal(r.sockets.length, 2);
  });

  it('a message within the window -> not dead', () => {
    const r = rig({ heartbeatInterval: 30_000 });
    r.last().accept();
    r.clock.advance(45_000);
    r.last().receive('anything');
    r.clock.advance(30_000);
    assert.equal(r.last().closeCalls.length, 0);
  });

  it('throttled tab: one late tick after 10 minutes of wall clock -> dead on that tick', () => {
    const r = rig({ heartbeatInterval: 30_000, reconnectInterval: 5000 });
    const first = r.last();
    first.accept();
    r.clock.throttle(10 * 60_000);
    assert.equal(first.closeCalls[0]?.code, DEAD_LINK_CODE);
    assert.deepEqual(first.sent, [], 'no ping is sent into a dead link');
  });

  it('the dead socket closes late -> its close event is not delivered twice', () => {
    const r = rig({ heartbeatInterval: 100 });
    const first = r.last();
    first.accept();
    r.clock.advance(200);
    first.end(1006);
    assert.deepEqual(r.events, ['open', `close ${DEAD_LINK_CODE}`]);
  });
});

describe('ReconnectingWebSocket: reconnect schedule', () => {
  it('server closes -> a new socket after exactly reconnectInterval (default 5000)', () => {
    const r = rig();
    r.last().accept();
    r.last().end();
    r.clock.advance(4999);
    assert.equal(r.sockets.length, 1);
    r.clock.advance(1);
    assert.equal(r.sockets.length, 2);
  });

  it('connection refused again and again -> fixed 5000 ms every time, without backoff', () => {
    const r = rig();
    const times: number[] = [];
    const t0 = r.clock.nowMs;
    for (let i = 0; i < 5; i++) {
      r.last().end();
      advanceUntilNewSocket(r, 1);
      times.push(r.clock.nowMs - t0);
    }
    assert.deepEqual(times, [5000, 10_000, 15_000, 20_000, 25_000]);
  });

  it('reconnect false -> no new socket, no timer', () => {
    const r = rig({ reconnect: false });
    r.last().accept();
    r.last().end();
    assert.equal(r.clock.pending, 0);
    r.clock.advance(60_000);
    assert.equal(r.sockets.length, 1);
  });

  it('backoff -> delays grow per failed attempt, capped, one random() per attempt; reset by a message, not by an open', () => {
    const r = rig({ reconnectInterval: 100, backoff: { factor: 2, maxMs: 500, jitter: 0.5 } });
    r.clock.randoms = [0.5, 0.5, 0.5, 0.5, 0.5, 0];
    const delays: number[] = [];
    const measure = () => {
      const t = r.clock.nowMs;
      r.last().end();
      advanceUntilNewSocket(r, 1);
      delays.push(r.clock.nowMs - t);
    };
    for (let i = 0; i < 5; i++) measure();
    assert.deepEqual(delays, [100, 200, 400, 500, 500]);
    assert.equal(r.clock.randomCalls, 5);
    r.last().accept();
    measure();
    assert.equal(delays.at(-1), 250, 'opened and closed at once: still capped (500, random 0: minus half)');
    r.last().accept();
    r.last().receive('hello');
    measure();
    assert.equal(delays.at(-1), 100, 'after a message, attempt 0 again');
  });

  it('accepted and closed at once, again and again -> the delays grow (an open alone is no success)', () => {
    const r = rig({ reconnectInterval: 100, backoff: { factor: 2, maxMs: 10_000, jitter: 0 } });
    const delays: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t = r.clock.nowMs;
      r.last().accept();
      r.last().end(1000, '', true);
      advanceUntilNewSocket(r, 1);
      delays.push(r.clock.nowMs - t);
    }
    assert.deepEqual(delays, [100, 200, 400, 800, 1600]);
  });

  it('open for a heartbeat interval -> the next failure starts from the first delay', () => {
    const r = rig({
      reconnectInterval: 100,
      heartbeatInterval: 1000,
      backoff: { factor: 2, maxMs: 10_000, jitter: 0 },
    });
    for (let i = 0; i < 3; i++) {
      r.last().end();
      advanceUntilNewSocket(r, 1);
    }
    r.last().accept();
    r.last().receive('x'); // keeps the link alive past the first heartbeat tick
    r.clock.advance(1000);
    const t = r.clock.nowMs;
    r.last().end();
    advanceUntilNewSocket(r, 1);
    assert.equal(r.clock.nowMs - t, 100);
  });

  it('default options -> jitter on: delays spread over reconnectInterval x (1 ± 0.5), mean the interval', () => {
    const r = rig({ reconnectInterval: 1000 });
    r.clock.randoms = [0, 0.25, 0.5, 0.75, 0.999];
    const delays: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t = r.clock.nowMs;
      r.last().end();
      advanceUntilNewSocket(r, 1);
      delays.push(r.clock.nowMs - t);
    }
    assert.deepEqual(delays, [500, 750, 1000, 1250, 1499]);
  });

  it('shouldReconnect false for an application code -> stops; it gets the close event', () => {
    const asked: [number, string][] = [];
    const r = rig({
      shouldReconnect: (e) => {
        asked.push([e.code, e.reason]);
        return e.code !== 4401;
      },
      reconnectInterval: 10,
    });
    r.last().accept();
    r.last().end(1012, 'restart', true);
    r.clock.advance(10);
    assert.equal(r.sockets.length, 2, '1012 -> reconnect');
    r.last().accept();
    r.last().end(4401, 'token expired', true);
    r.clock.advance(60_000);
    assert.equal(r.sockets.length, 2, '4401 -> stop');
    assert.deepEqual(asked, [
      [1012, 'restart'],
      [4401, 'token expired'],
    ]);
  });

  it('a close listener calls reconnect() -> one new socket now, no second one from the timer', () => {
    const r = rig({ reconnectInterval: 10 });
    r.rws.onclose = () => r.rws.reconnect();
    r.last().accept();
    r.last().end();
    assert.equal(r.sockets.length, 2);
    r.rws.onclose = null;
    r.clock.advance(1000);
    assert.equal(r.sockets.length, 2);
  });
});

describe('ReconnectingWebSocket: close()', () => {
  it('open -> the socket is closed with the code and reason; no reconnect; the close event arrives', () => {
    const r = rig();
    r.last().accept();
    r.rws.close(1000, 'bye');
    assert.deepEqual(r.last().closeCalls, [{ code: 1000, reason: 'bye' }]);
    r.last().end(1000, 'bye', true);
    assert.deepEqual(r.events, ['open', 'close 1000']);
    r.clock.advance(60_000);
    assert.equal(r.sockets.length, 1);
    assert.equal(r.clock.pending, 0);
  });

  it('waiting to reconnect -> the timer is cancelled', () => {
    const r = rig();
    r.last().end();
    assert.equal(r.clock.pending, 1);
    r.rws.close();
    assert.equal(r.clock.pending, 0);
    r.clock.advance(60_000);
    assert.equal(r.sockets.length, 1);
  });

  it('connecting -> abandoned: detached, closed, one close event 1006, no reconnect', () => {
    const r = rig();
    const s = r.last();
    assert.doesNotThrow(() => r.rws.close());
    assert.ok(s.detached);
    assert.equal(s.closeCalls.length, 1);
    s.accept(); // a late handshake on the abandoned socket reaches nobody
    assert.deepEqual(r.events, ['close 1006']);
    assert.equal(r.clock.pending, 0);
  });

  it('connecting, and the socket throws from close() -> close() still does not throw', () => {
    const r = rig();
    const s = r.last();
    s.close = () => {
      throw new Error('InvalidStateError');
    };
    assert.doesNotThrow(() => r.rws.close());
  });

  it('URL promise pending -> no socket is ever made', async () => {
    const r = rig({}, () => Promise.resolve('ws://x/'));
    r.rws.close();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(r.sockets.length, 0);
    assert.equal(r.rws.readyState, ReconnectingWebSocket.CLOSED);
  });

  it('twice -> harmless', () => {
    const r = rig();
    r.last().accept();
    r.rws.close();
    assert.doesNotThrow(() => r.rws.close());
    assert.equal(r.last().closeCalls.length, 1);
  });
});

describe('ReconnectingWebSocket: nothing leaks across reconnects', () => {
  it('after a reconnect -> the old socket has none of our listeners', () => {
    const r = rig({ reconnectInterval: 10 });
    const first = r.last();
    first.accept();
    first.end();
    r.clock.advance(10);
    assert.ok(first.detached);
    assert.equal(typeof first.onerror, 'function', 'a no-op error guard stays (ws would crash without one)');
    first.receive('stale'); // nothing reaches the user
    assert.deepEqual(r.events, ['open', 'close 1006']);
  });

  const states: [string, (r: Rig) => void][] = [
    ['connecting', () => {}],
    ['open', (r) => r.last().accept()],
    ['waiting to reconnect', (r) => r.last().end()],
    [
      'closed by the user',
      (r) => {
        r.last().accept();
        r.rws.close();
      },
    ],
    [
      'closed by the user, socket fully closed',
      (r) => {
        r.last().accept();
        r.rws.close();
        r.last().end(1000, '', true);
      },
    ],
    ['stopped by shouldReconnect', (r) => r.last().end(4401)],
    [
      'dead link',
      (r) => {
        r.last().accept();
        r.clock.advance(60_000);
      },
    ],
  ];
  for (const [name, setup] of states) {
    it(`reconnect() when ${name} -> exactly one new socket now, the old one detached, the queue kept`, () => {
      const r = rig({ shouldReconnect: (e) => e.code !== 4401 });
      setup(r);
      const before = r.sockets.length;
      const old = r.last();
      r.rws.reconnect();
      assert.equal(r.sockets.length, before + 1);
      assert.ok(old.detached);
      r.rws.send('after');
      r.last().accept();
      assert.deepEqual(r.last().sent, ['after']);
      assert.ok(!old.sent.includes('after'));
      // Nothing left armed by the old state: only the new socket's heartbeat, answered here.
      for (let i = 0; i < 10; i++) {
        r.clock.advance(30_000);
        r.last().receive('{"type":"pong"}');
      }
      assert.equal(r.sockets.length, before + 1);
      assert.equal(r.clock.pending, 1);
    });
  }
});

describe('ReconnectingWebSocket: online/offline', () => {
  function netRig(o: ReconnectingWebSocketOptions = {}) {
    const net = new FakeNetwork();
    return { ...rig({ connectivity: net, ...o }), net };
  }

  it('offline while waiting -> the timer is cancelled and nothing is tried, however long', () => {
    const r = netRig();
    r.last().end();
    r.net.go('offline');
    r.clock.advance(3_600_000);
    assert.equal(r.sockets.length, 1);
  });

  it('closed while offline -> no timer, waits for online', () => {
    const r = netRig();
    r.net.go('offline');
    r.last().accept();
    r.last().end();
    assert.equal(r.clock.pending, 0);
  });

  it('online while waiting -> reconnect at once, not after the interval', () => {
    const r = netRig();
    r.last().end();
    r.net.go('offline');
    r.net.go('online');
    assert.equal(r.sockets.length, 2);
    r.clock.advance(60_000);
    assert.equal(r.sockets.length, 2, 'the cancelled timer does not fire later');
  });

  it('online while open -> nothing happens', () => {
    const r = netRig();
    r.last().accept();
    r.net.go('online');
    assert.equal(r.sockets.length, 1);
  });

  it('online after close() -> nothing happens (and the listeners are gone)', () => {
    const r = netRig();
    r.last().end();
    r.rws.close();
    r.net.go('online');
    assert.equal(r.sockets.length, 1);
  });

  it('online after shouldReconnect refused -> nothing happens', () => {
    const r = netRig({ shouldReconnect: () => false });
    r.last().end(4401);
    r.net.go('online');
    assert.equal(r.sockets.length, 1);
  });

  it('online with backoff after many failures -> the attempt count starts over', () => {
    const r = netRig({ reconnectInterval: 100, backoff: { factor: 2, maxMs: 100_000, jitter: 0 } });
    for (let i = 0; i < 6; i++) {
      r.last().end();
      advanceUntilNewSocket(r, 100);
    }
    r.last().end();
    r.net.go('online');
    const n = r.sockets.length;
    r.last().end();
    r.clock.advance(100);
    assert.equal(r.sockets.length, n + 1);
  });
});
