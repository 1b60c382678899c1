// The load generator of bench/cold.mjs, a process of its own (pinned to the load CPU): GETs
// `/d<i / 1000>/f<i>.txt` for i = 0 .. FILES-1, each path once, over CONNECTIONS keep-alive
// connections (one request outstanding per connection), and prints one JSON line: { requests,
// elapsedMs, errors }. Raw sockets with a minimal response parser (status line, Content-Length), so the
// generator costs little next to a server answering from the disk.
//   node bench/cold/load.mjs PORT FILES CONNECTIONS
import net from 'node:net';

const [port, files, connections] = process.argv.slice(2).map(Number);
const pathOf = (i) => `/d${Math.floor(i / 1000)}/f${i}.txt`;

let next = 0;
let done = 0;
const errors = [];
const started = performance.now();

function connection() {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.setNoDelay(true);
    let buf = Buffer.alloc(0);
    let need = -1; // bytes of the current response still to come once its head is read
    const send = () => {
      if (next >= files) {
        socket.end();
        return resolve();
      }
      socket.write(`GET ${pathOf(next++)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    };
    socket.on('data', (chunk) => {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      for (;;) {
        if (need < 0) {
          const end = buf.indexOf('\r\n\r\n');
          if (end === -1) return;
          const head = buf.subarray(0, end).toString('latin1');
          const status = Number(head.slice(9, 12));
          if (status !== 200 && errors.length < 5) errors.push(`status ${status}`);
          const len = /\r\ncontent-length:\s*(\d+)/i.exec(head);
          if (len === null) {
            errors.push('no Content-Length');
            socket.destroy();
            return resolve();
          }
          need = Number(len[1]);
          buf = buf.subarray(end + 4);
        }
        if (buf.length < need) return;
        buf = buf.subarray(need);
        need = -1;
        done++;
        send();
      }
    });
    socket.on('error', (err) => {
      if (errors.length < 5) errors.push(err.message);
      resolve();
    });
    socket.on('connect', send);
  });
}

await Promise.all(Array.from({ length: connections }, connection));
const elapsedMs = performance.now() - started;
process.stdout.write(`${JSON.stringify({ requests: done, elapsedMs, errors })}\n`);
