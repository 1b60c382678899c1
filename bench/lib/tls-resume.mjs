// The load of the tls-resumed row (bench/https.mjs): TLS connections that resume a session ticket on
// another instance than the one that issued it. Each of `concurrency` loops connects to the ports in
// turn (A, B, A, ...), offers the last ticket it got (RFC 8446 §4.6.1, RFC 5077), sends one
// `GET path` with `Connection: close` over HTTP/1.1 and reads the answer to the end. h2load cannot do
// this (one host:port per run, and its sessions stay with the connection's own server).
//
//   node bench/lib/tls-resume.mjs --ports A,B --ca FILE --path /1k.txt --seconds 5 [--concurrency 16]
//
// prints one JSON line: { seconds, connections, requestsPerSec, offered, resumed, statusOk, errors }.
// `offered` counts connections that offered a ticket (all but each loop's first), `resumed` those the
// server resumed (tlsSocket.isSessionReused()).
import { readFileSync } from 'node:fs';
import { connect } from 'node:tls';
import { parseArgs } from 'node:util';

/**
 * One connection to 127.0.0.1:`port` offering `session`: { reused, status, bodyBytes, session } where
 * session is the newest ticket the server sent (else the one offered: a resumption may send none).
 */
export function resumeOnce({ port, ca, path, session, timeoutMs = 5000 }) {
  return new Promise((resolve, reject) => {
    let ticket;
    let reused = false;
    let raw = Buffer.alloc(0);
    const t = connect({
      port,
      host: '127.0.0.1',
      servername: 'localhost',
      ca,
      ALPNProtocols: ['http/1.1'],
      session,
    });
    const timer = setTimeout(() => t.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    t.on('session', (s) => {
      ticket = s;
    });
    t.once('secureConnect', () => {
      reused = t.isSessionReused();
      t.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
    });
    t.on('data', (d) => {
      raw = Buffer.concat([raw, d]);
    });
    t.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    t.once('close', () => {
      clearTimeout(timer);
      const text = raw.toString('latin1');
      const head = text.indexOf('\r\n\r\n');
      resolve({
        reused,
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0),
        bodyBytes: head < 0 ? 0 : raw.length - head - 4,
        session: ticket ?? session,
      });
    });
  });
}

async function drive({ ports, ca, path, seconds, concurrency }) {
  const endMs = performance.now() + seconds * 1000;
  const totals = { connections: 0, offered: 0, resumed: 0, statusOk: 0, errors: [] };
  const loop = async (slot) => {
    let session;
    for (let i = slot; performance.now() < endMs; i++) {
      const offered = session !== undefined;
      try {
        const r = await resumeOnce({ port: ports[i % ports.length], ca, path, session });
        totals.connections++;
        if (offered) totals.offered++;
        if (offered && r.reused) totals.resumed++;
        if (r.status === 200) totals.statusOk++;
        session = r.session;
      } catch (err) {
        if (totals.errors.length < 5) totals.errors.push(err.message);
        session = undefined;
      }
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, (_, slot) => loop(slot)));
  const elapsed = (performance.now() - t0) / 1000;
  return { seconds: elapsed, requestsPerSec: totals.connections / elapsed, ...totals };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      ports: { type: 'string' },
      ca: { type: 'string' },
      path: { type: 'string', default: '/1k.txt' },
      seconds: { type: 'string', default: '5' },
      concurrency: { type: 'string', default: '16' },
    },
  });
  const result = await drive({
    ports: values.ports.split(',').map(Number),
    ca: readFileSync(values.ca),
    path: values.path,
    seconds: Number(values.seconds),
    concurrency: Number(values.concurrency),
  });
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
