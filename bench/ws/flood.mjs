// The WebSocket flood of the ws-flood group: `clients` `ws` clients on ws://127.0.0.1:PORT/PATH, each
// sending `size`-byte text messages as fast as its socket takes them (a new one each time a write is
// flushed to the kernel, `window` unflushed at most) and reading the echoes. A client the server closes
// (1013 slow consumer, 1008 over a rate limit, ...) reconnects at once and floods again, as an abusive
// client would. Run by lib/flood.mjs as a child pinned to the load CPU at a lower priority than wrk.
// Control on stdin, one word a line: `mark` zeroes the counters (the timed window starts), `stop` prints
// one JSON line { seconds, sent, echoes, opened, closes: { code: n } (of open connections), errors } for the time since the mark
// and exits. Prints `ready <open clients>` once every client is open (or has failed). Exits when stdin ends.
//   node bench/ws/flood.mjs --port P [--path /ws] [--clients 50] [--size 64] [--window 32]
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { WebSocket } from 'ws';

const { values: o } = parseArgs({
  options: {
    port: { type: 'string' },
    path: { type: 'string', default: '/ws' },
    clients: { type: 'string', default: '50' },
    size: { type: 'string', default: '64' },
    window: { type: 'string', default: '32' },
  },
});
const url = `ws://127.0.0.1:${Number(o.port)}${o.path}`;
const clients = Number(o.clients);
const window = Number(o.window);
const shell = '{"type":"chat","content":""}';
const message = `{"type":"chat","content":"${'x'.repeat(Math.max(0, Number(o.size) - shell.length))}"}`;

let stats;
let since;
const reset = () => {
  stats = { sent: 0, echoes: 0, opened: 0, closes: {}, errors: new Set() };
  since = performance.now();
};
reset();
let stopping = false;

/** One client: connects, floods, and reconnects when the server closes it. `onOpen` once, first time. */
function client(onFirst) {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  let inFlight = 0;
  const pump = () => {
    while (!stopping && inFlight < window && ws.readyState === WebSocket.OPEN) {
      inFlight++;
      stats.sent++;
      ws.send(message, flushed);
    }
  };
  // Refill on the next turn of the event loop, not in the write callback: that callback can come in a
  // process.nextTick, and refilling there would chain nextTicks forever and starve reads and stdin.
  let scheduled = false;
  const refill = () => {
    scheduled = false;
    pump();
  };
  function flushed() {
    inFlight--;
    if (!scheduled) {
      scheduled = true;
      setImmediate(refill);
    }
  }
  ws.on('open', () => {
    stats.opened++;
    onFirst?.(true);
    onFirst = undefined;
    pump();
  });
  ws.on('message', () => {
    stats.echoes++;
  });
  ws.on('error', (err) => {
    stats.errors.add(err.code ?? err.message);
    onFirst?.(false);
    onFirst = undefined;
  });
  let wasOpen = false;
  ws.once('open', () => {
    wasOpen = true;
  });
  ws.on('close', (code) => {
    if (wasOpen) stats.closes[code] = (stats.closes[code] ?? 0) + 1;
    // A handshake that failed is retried after a pause, so a refusing server does not make us spin.
    if (!stopping) setTimeout(() => client(), wasOpen ? 0 : 50);
  });
}

const opened = await Promise.all(
  Array.from({ length: clients }, () => new Promise((resolve) => client(resolve))),
);
process.stdout.write(`ready ${opened.filter(Boolean).length}\n`);

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  if (line.trim() === 'mark') reset();
  else if (line.trim() === 'stop') {
    stopping = true;
    const result = {
      seconds: (performance.now() - since) / 1000,
      sent: stats.sent,
      echoes: stats.echoes,
      opened: stats.opened,
      closes: stats.closes,
      errors: [...stats.errors],
    };
    process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
  }
});
lines.on('close', () => process.exit(0));
