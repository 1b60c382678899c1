// The WebSocket echo load generator: N raw-TCP WebSocket clients (RFC 6455 framing done by hand, so the
// client side costs far less than the server under test, as wrk does for HTTP). Each connection keeps
// `window` messages in flight and sends the next one as each echo arrives; echoes are counted for
// `duration` seconds after a `warmup`. With --server-pid it also reads the server's CPU time (utime + stime
// of /proc/PID/stat) at both ends of the timed window, so the result holds messages per server CPU-second,
// which other load on a shared machine disturbs far less than messages per second.
// Prints one JSON line: { messagesPerSec, messagesPerCpuSec, echoes, seconds, serverCpuSec, errors }.
//   node bench/ws/load.mjs --port P [--path /echo] [--connections 50] [--window 8] [--size 64]
//                          [--binary] [--warmup 1] [--duration 3] [--server-pid PID --clk-tck 100]
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { parseArgs } from 'node:util';

const { values: o } = parseArgs({
  options: {
    port: { type: 'string' },
    path: { type: 'string', default: '/echo' },
    connections: { type: 'string', default: '50' },
    window: { type: 'string', default: '8' },
    size: { type: 'string', default: '64' },
    binary: { type: 'boolean', default: false },
    warmup: { type: 'string', default: '1' },
    duration: { type: 'string', default: '3' },
    'server-pid': { type: 'string' },
    'clk-tck': { type: 'string', default: '100' },
  },
});
const port = Number(o.port);
const connections = Number(o.connections);
const window = Number(o.window);
const size = Number(o.size);
const warmupMs = Number(o.warmup) * 1000;
const durationMs = Number(o.duration) * 1000;
const clkTck = Number(o['clk-tck']);

/** CPU seconds the server process has used (all threads), or undefined without --server-pid. */
function serverCpuSec() {
  if (o['server-pid'] === undefined) return undefined;
  const stat = readFileSync(`/proc/${o['server-pid']}/stat`, 'utf8');
  // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / clkTck;
}

/** A text payload shaped like the `{ "type", "content" }` convention, `size` bytes long. */
function payload() {
  if (o.binary) return randomBytes(size);
  const shell = '{"type":"chat","content":""}';
  if (size < shell.length + 1) return Buffer.alloc(size, 'x');
  return Buffer.from(`{"type":"chat","content":"${'x'.repeat(size - shell.length)}"}`);
}

/** A masked client frame (RFC 6455 §5.2, §5.3). */
function frame(data, opcode) {
  const len = data.length;
  const ext = len < 126 ? 0 : len < 65536 ? 2 : 8;
  const buf = Buffer.allocUnsafe(2 + ext + 4 + len);
  buf[0] = 0x80 | opcode;
  if (ext === 0) buf[1] = 0x80 | len;
  else if (ext === 2) {
    buf[1] = 0x80 | 126;
    buf.writeUInt16BE(len, 2);
  } else {
    buf[1] = 0x80 | 127;
    buf.writeBigUInt64BE(BigInt(len), 2);
  }
  const mask = randomBytes(4);
  const at = 2 + ext;
  mask.copy(buf, at);
  for (let i = 0; i < len; i++) buf[at + 4 + i] = data[i] ^ mask[i & 3];
  return buf;
}

const message = frame(payload(), o.binary ? 0x2 : 0x1);
/** `window` messages back to back: k of them are written with one call as k echoes arrive. */
const batch = Buffer.concat(Array.from({ length: window }, () => message));
const pong = frame(Buffer.alloc(0), 0xa);

let measuring = false;
let echoes = 0;
const errors = new Set();

function handshake(socket) {
  return new Promise((resolve, reject) => {
    const key = randomBytes(16).toString('base64');
    let head = Buffer.alloc(0);
    const onData = (chunk) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end === -1) return;
      socket.off('data', onData);
      const status = head.subarray(0, 12).toString('latin1');
      if (status !== 'HTTP/1.1 101')
        reject(new Error(`handshake: ${head.subarray(0, end).toString('latin1')}`));
      else resolve(head.subarray(end + 4));
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.write(
      `GET ${o.path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    );
  });
}

/** Counts the server's (unmasked) frames as they stream in, across chunk boundaries. */
function run(socket, rest) {
  const hdr = Buffer.alloc(10);
  let hdrLen = 0;
  let skip = 0;
  let opcode = 0;
  const finish = () => {
    if (opcode === 0x1 || opcode === 0x2) return 1;
    if (opcode === 0x9) socket.write(pong);
    else if (opcode === 0x8) errors.add('the server closed a connection');
    return 0;
  };
  const onData = (chunk) => {
    let got = 0;
    let i = 0;
    while (i < chunk.length) {
      if (skip > 0) {
        const n = Math.min(skip, chunk.length - i);
        skip -= n;
        i += n;
        if (skip === 0) got += finish();
        continue;
      }
      hdr[hdrLen++] = chunk[i++];
      if (hdrLen < 2) continue;
      const len7 = hdr[1] & 0x7f;
      const need = len7 === 126 ? 4 : len7 === 127 ? 10 : 2;
      if (hdrLen < need) continue;
      const frameLen =
        len7 === 126 ? hdr.readUInt16BE(2) : len7 === 127 ? Number(hdr.readBigUInt64BE(2)) : len7;
      opcode = hdr[0] & 0x0f;
      hdrLen = 0;
      if ((opcode === 0x1 || opcode === 0x2) && frameLen !== size)
        errors.add(`echo of ${frameLen} bytes, sent ${size}`);
      skip = frameLen;
      if (skip === 0) got += finish();
    }
    if (got > 0) {
      if (measuring) echoes += got;
      socket.write(got === window ? batch : batch.subarray(0, got * message.length));
    }
  };
  socket.on('data', onData);
  if (rest.length) onData(rest);
  socket.write(batch);
}

const sockets = [];
try {
  await Promise.all(
    Array.from({ length: connections }, async () => {
      const socket = net.connect({ port, host: '127.0.0.1', noDelay: true });
      socket.on('error', (err) => errors.add(err.code ?? err.message));
      socket.on('close', () => {
        if (measuring) errors.add('a connection closed during the run');
      });
      sockets.push(socket);
      await new Promise((resolve, reject) => {
        socket.once('connect', resolve);
        socket.once('error', reject);
      });
      run(socket, await handshake(socket));
    }),
  );
} catch (err) {
  process.stdout.write(`${JSON.stringify({ error: err.message })}\n`);
  process.exit(1);
}

await new Promise((r) => setTimeout(r, warmupMs));
measuring = true;
const cpu0 = serverCpuSec();
const t0 = performance.now();
await new Promise((r) => setTimeout(r, durationMs));
const seconds = (performance.now() - t0) / 1000;
const counted = echoes;
const cpu1 = serverCpuSec();
measuring = false;
for (const s of sockets) s.destroy();
const cpu = cpu0 === undefined || cpu1 === undefined ? undefined : cpu1 - cpu0;
const result = {
  messagesPerSec: counted / seconds,
  messagesPerCpuSec: cpu ? counted / cpu : undefined,
  echoes: counted,
  seconds,
  serverCpuSec: cpu,
  errors: [...errors],
};
process.stdout.write(`${JSON.stringify(result)}\n`);
process.exit(0);
