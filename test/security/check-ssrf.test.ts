// Attack: gatehouse check used as a library inside a service, pointed at a site whose redirects lead
// into the service's own network (server-side request forgery, issue 25 §5): a name that resolves to a
// private address, the cloud metadata address, a name that resolves to loopback once and to a private
// address the next time (DNS rebinding). The sites are real servers on 127.0.0.1:0; private addresses
// come only from a `lookup` hook, and the decision is made before any connect, so no socket is ever
// opened to a non-loopback address.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import { after, describe, it } from 'node:test';
import { checkCommand } from '../../src/cli/check.js';
import { record } from '../../src/inspect/live.js';

const FAST = { repeatDelayMs: 0, timeoutMs: 2000 };
const servers: Server[] = [];
after(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
});

/** A site on 127.0.0.1:0 answering `answer(path)`; counts its requests. */
async function site(answer: (path: string) => { status: number; location?: string; close?: boolean }) {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(req.url ?? '/');
    const a = answer(req.url ?? '/');
    res.writeHead(a.status, {
      ...(a.location === undefined ? {} : { location: a.location }),
      ...(a.close === true ? { connection: 'close' } : {}),
    });
    res.end('ok');
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, seen };
}

/** A lookup hook over a table of names: each name gives its addresses in turn (the last one repeats). */
function fakeDns(table: Record<string, string[]>) {
  const asked: string[] = [];
  const count = new Map<string, number>();
  const lookup: LookupFunction = (hostname, options, callback) => {
    asked.push(hostname);
    const list = table[hostname];
    if (list === undefined) {
      const e: NodeJS.ErrnoException = new Error(`no such test name ${hostname}`);
      e.code = 'ENOTFOUND';
      return callback(e, '', undefined);
    }
    const n = count.get(hostname) ?? 0;
    count.set(hostname, n + 1);
    const address = list[Math.min(n, list.length - 1)] as string;
    const family = address.includes(':') ? 6 : 4;
    if (options.all === true) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
  return { lookup, asked };
}

describe('attack: redirects into the network', () => {
  it('attack: loopback site redirects to intranet.test, which resolves to 10.0.0.5 -> refused before connecting; the chain ends there', async () => {
    const dns = fakeDns({ 'intranet.test': ['10.0.0.5'] });
    const s = await site(() => ({ status: 302, location: 'http://intranet.test:8080/admin' }));
    const rec = await record(`http://127.0.0.1:${s.port}/`, { ...FAST, lookup: dns.lookup });
    assert.deepEqual(s.seen, ['/'], 'the hostile redirect was served once');
    assert.deepEqual(dns.asked, ['intranet.test'], 'the name was resolved, through the hook');
    const last = rec.redirects[rec.redirects.length - 1];
    assert.equal(last?.request.url, 'http://intranet.test:8080/admin');
    assert.equal(last?.response, undefined);
    assert.match(
      last?.error ?? '',
      /refused to connect to 10\.0\.0\.5: a private address from a loopback one/,
    );
    assert.deepEqual(rec.probes, {}, 'no probe went anywhere');
  });

  it('attack: redirect to the metadata service (http://169.254.169.254/) -> refused, no lookup, no connect', async () => {
    const dns = fakeDns({});
    const s = await site(() => ({ status: 301, location: 'http://169.254.169.254/latest/meta-data/' }));
    const rec = await record(`http://127.0.0.1:${s.port}/`, { ...FAST, lookup: dns.lookup });
    assert.equal(s.seen.length, 1);
    const last = rec.redirects[rec.redirects.length - 1];
    assert.match(last?.error ?? '', /refused to connect to 169\.254\.169\.254: a link-local address/);
    assert.deepEqual(dns.asked, []);
  });

  it('attack: IPv4-mapped IPv6 literal http://[::ffff:10.0.0.1]/ -> refused as private', async () => {
    const s = await site(() => ({ status: 307, location: 'http://[::ffff:10.0.0.1]:8080/' }));
    const rec = await record(`http://127.0.0.1:${s.port}/`, FAST);
    assert.equal(s.seen.length, 1);
    assert.match(rec.redirects.at(-1)?.error ?? '', /refused to connect to ::ffff:a00:1: a private address/);
  });

  it('attack: DNS rebinding: rebind.test resolves to 127.0.0.1, then to 10.0.0.5 for the next connection -> the second is refused', async () => {
    const dns = fakeDns({ 'rebind.test': ['127.0.0.1', '10.0.0.5'] });
    // Connection: close, so the redirect's request needs a new connection (and a new lookup).
    const s = await site((path) =>
      path === '/' ? { status: 302, location: '/next', close: true } : { status: 200 },
    );
    const rec = await record(`http://rebind.test:${s.port}/`, { ...FAST, lookup: dns.lookup });
    assert.deepEqual(s.seen, ['/'], 'the first answer came from the loopback site');
    assert.deepEqual(
      dns.asked,
      ['rebind.test', 'rebind.test'],
      'judged at each connection, not once per name',
    );
    assert.match(rec.redirects.at(-1)?.error ?? '', /rebind\.test: refused to connect to 10\.0\.0\.5/);
  });

  it('attack: the CLI: gatehouse check on such a site -> exit 1 with the reason on one line', async () => {
    const s = await site(() => ({ status: 302, location: 'http://10.1.2.3/' }));
    let err = '';
    const code = await checkCommand([`http://127.0.0.1:${s.port}/`], {
      cwd: process.cwd(),
      stdout: { write: () => true },
      stderr: { write: (x: string) => (err += x) },
      repeatDelayMs: 0,
    });
    assert.equal(code, 1);
    assert.equal(s.seen.length, 1);
    assert.match(
      err,
      /^gatehouse check: no final response: http:\/\/10\.1\.2\.3\/: refused to connect to 10\.1\.2\.3: a private address from a loopback one \(.*--allow-private lifts it\)\n$/,
    );
  });
});

describe('control: what keeps working', () => {
  it('control: a local development server checked directly, redirecting to another loopback port -> followed and probed', async () => {
    const target = await site(() => ({ status: 200 }));
    const s = await site(() => ({ status: 302, location: `http://localhost:${target.port}/` }));
    const dns = fakeDns({ localhost: ['127.0.0.1'] });
    const rec = await record(`http://127.0.0.1:${s.port}/`, { ...FAST, lookup: dns.lookup });
    assert.equal(rec.finalUrl, `http://localhost:${target.port}/`);
    assert.ok(target.seen.length > 5, 'the probes reached the final URL');
  });

  it('control: --allow-private is accepted by the CLI and a loopback check passes with it', async () => {
    const s = await site(() => ({ status: 200 }));
    const code = await checkCommand([`http://127.0.0.1:${s.port}/`, '--allow-private'], {
      cwd: process.cwd(),
      stdout: { write: () => true },
      stderr: { write: () => true },
      repeatDelayMs: 0,
    });
    assert.notEqual(code, 2, 'not a usage error');
    assert.ok(s.seen.length > 1);
  });
});
