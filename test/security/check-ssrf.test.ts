// Attack: gatehouse check used as a library inside a service, pointed at a site whose redirects lead
// into the service's own network (server-side request forgery, issue 25 §5): a name that resolves to a
// private address, the cloud metadata address, a name that resolves to loopback once and to a private
// address the next time (DNS rebinding), a name that resolves to a public and a private address at
// once. The sites are real servers on 127.0.0.1:0; private addresses come only from a `lookup` hook,
// and the decision is made before any connect, so no socket is ever opened to a non-loopback address
// (where a test lets a "public" address through, interceptConnects connects it to loopback instead).
import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, isIP, type LookupFunction, Socket } from 'node:net';
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

/**
 * A lookup hook over a table of names: each name gives its answers in turn (the last one repeats); an
 * answer is one address or a list of them (what `all: true` returns; the first one otherwise).
 */
function fakeDns(table: Record<string, (string | string[])[]>) {
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
    const answer = list[Math.min(n, list.length - 1)]!;
    const all = (Array.isArray(answer) ? answer : [answer]).map((address) => ({
      address,
      family: address.includes(':') ? 6 : 4,
    }));
    if (options.all === true) callback(null, all);
    else callback(null, all[0]!.address, all[0]!.family);
  };
  return { lookup, asked };
}

const isLoopback = (address: string) => address === '::1' || /^127\./.test(address);

/**
 * Intercepts every socket connect of this process where it takes its addresses: the lookup hook's
 * answer (after the guard) is recorded, a "public" address of `stand_ins` is swapped for the loopback
 * address of the site that plays it, and any other non-loopback address, looked up or literal, fails
 * the connect before it starts. So no packet leaves loopback, whatever the guard lets through.
 */
function interceptConnects(standIns: Record<string, string>) {
  /** Every address a socket was handed to connect to, in order. */
  const handed: string[] = [];
  const original = Socket.prototype.connect;
  const wrapped = new WeakSet<LookupFunction>();
  const refuse = (address: string) =>
    Object.assign(new Error(`test: no connect to ${address} (not loopback)`), { code: 'ETESTREFUSED' });
  Socket.prototype.connect = function (this: Socket, ...args: unknown[]) {
    // net.createConnection passes its normalized [options, listener] as the first argument.
    const first = args[0];
    const o = (Array.isArray(first) ? first[0] : first) as
      | { host?: string; lookup?: LookupFunction }
      | undefined;
    if (o !== null && typeof o === 'object') {
      if (o.host !== undefined && isIP(o.host) !== 0) {
        handed.push(o.host);
        if (!isLoopback(o.host)) throw refuse(o.host);
      }
      const lookup = o.lookup;
      if (lookup !== undefined && !wrapped.has(lookup)) {
        const hook: LookupFunction = (hostname, options, callback) =>
          lookup(hostname, options, (err, address, family) => {
            if (err !== null) return callback(err, address, family);
            const list: LookupAddress[] = Array.isArray(address)
              ? address
              : [{ address, family: family ?? 4 }];
            const out: LookupAddress[] = [];
            for (const a of list) {
              handed.push(a.address);
              const to = standIns[a.address] ?? (isLoopback(a.address) ? a.address : undefined);
              if (to === undefined) return callback(refuse(a.address), '', undefined);
              out.push({ address: to, family: isIP(to) });
            }
            if (Array.isArray(address)) callback(null, out);
            else callback(null, out[0]!.address, out[0]!.family);
          });
        wrapped.add(hook);
        o.lookup = hook;
      }
    }
    return original.apply(this, args as Parameters<typeof original>);
  } as typeof original;
  return { handed, restore: () => void (Socket.prototype.connect = original) };
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

describe('attack: a name that resolves to a public and a private address', () => {
  // 93.184.216.34 plays the public site (the interceptor connects it to the loopback site instead).
  const PUBLIC = '93.184.216.34';
  const PRIVATE = '10.0.0.5';
  for (const answer of [
    [PUBLIC, PRIVATE],
    [PRIVATE, PUBLIC],
  ]) {
    it(`attack: a public site redirects to mixed.test, which resolves to ${answer.join(' and ')} -> the socket is handed ${PUBLIC} only, never ${PRIVATE}`, async () => {
      let port = 0;
      const s = await site((path) =>
        path === '/' ? { status: 302, location: `http://mixed.test:${port}/next` } : { status: 200 },
      );
      port = s.port;
      const dns = fakeDns({ 'site.test': [PUBLIC], 'mixed.test': [answer] });
      const net = interceptConnects({ [PUBLIC]: '127.0.0.1' });
      let rec: Awaited<ReturnType<typeof record>>;
      try {
        rec = await record(`http://site.test:${port}/`, { ...FAST, lookup: dns.lookup });
      } finally {
        net.restore();
      }
      // The private address of the same answer was never given to a socket; the public one was.
      assert.deepEqual(
        net.handed.filter((a) => a !== PUBLIC),
        [],
        `addresses handed to sockets: ${net.handed.join(' ')}`,
      );
      // mixed.test was resolved (another origin, a new connection) and its check went on to the
      // public address: the redirect and the probes reached the site through it.
      assert.ok(dns.asked.includes('mixed.test'), dns.asked.join(' '));
      assert.ok(net.handed.length >= 2, net.handed.join(' '));
      assert.equal(rec.redirects.at(-1)?.error, undefined);
      assert.equal(rec.finalUrl, `http://mixed.test:${port}/next`);
      assert.deepEqual(s.seen.slice(0, 2), ['/', '/next']);
      assert.ok(s.seen.length > 2, 'the probes reached the final URL');
    });
  }
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
