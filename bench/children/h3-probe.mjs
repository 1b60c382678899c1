// The HTTP/3 latency probe's client, run by Bun (no load generator for HTTP/3 comes from npm or Debian:
// Debian's h2load has no QUIC). One client, one request at a time, on each protocol Bun's fetch speaks:
// `http3` (QUIC) and HTTPS/1.1 (TCP) to the same server, in alternating rounds so that both see the same
// machine. Arguments: the base URL, the path, requests per protocol, rounds. Prints one JSON line: per
// protocol the latencies (ms) of every timed request and the statuses seen.
const [base, path, perProtocol, rounds] = process.argv.slice(2);
const n = Number(perProtocol);
const url = new URL(path, base);
const PROTOCOLS = { h3: { protocol: 'http3' }, 'h1-tls': {} };

async function once(extra) {
  const t = performance.now();
  const r = await fetch(url, { ...extra, tls: { rejectUnauthorized: false }, decompress: false });
  await r.arrayBuffer();
  return { ms: performance.now() - t, status: r.status };
}

const out = Object.fromEntries(Object.keys(PROTOCOLS).map((p) => [p, { ms: [], statuses: {} }]));
// Warm-up: the connections, the server's file cache, both JITs.
for (const extra of Object.values(PROTOCOLS)) for (let i = 0; i < 200; i++) await once(extra);
for (let round = 0; round < Number(rounds); round++) {
  for (const [name, extra] of Object.entries(PROTOCOLS)) {
    for (let i = 0; i < n / Number(rounds); i++) {
      const r = await once(extra);
      out[name].ms.push(r.ms);
      out[name].statuses[r.status] = (out[name].statuses[r.status] ?? 0) + 1;
    }
  }
}
console.log(JSON.stringify(out));
