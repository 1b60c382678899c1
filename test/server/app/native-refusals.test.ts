// What Bun.serve and Deno.serve cannot do with TLS is refused by key, naming the server; tls.http3 is
// refused where there is no HTTP/3 (Node, Deno). Table-driven over nativeRefusals and http3Refusal.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig, toServerOptions } from '../../../src/config/load.js';
import { http3Refusal, nativeRefusals } from '../../../src/server/app/native.js';

const options = (tls: Record<string, unknown>) =>
  toServerOptions(
    parseConfig({ root: '/srv', tls: { cert: '/c.pem', key: '/k.pem', watch: false, ...tls } }),
  );

const sni = { 'a.test': { cert: '/a.pem', key: '/a.key' } };

const CASES: { name: string; tls: Record<string, unknown>; bun: RegExp | null; deno: RegExp | null }[] = [
  { name: 'files, watch off', tls: {}, bun: null, deno: null },
  { name: 'sni names', tls: { sni }, bun: null, deno: /^tls\.sni: Deno\.serve takes one certificate/ },
  {
    name: 'watch set in the config',
    tls: { watch: true },
    bun: process.platform === 'linux' ? null : /^tls\.watch: Bun\.serve cannot swap/,
    deno: /^tls\.watch: Deno\.serve cannot swap certificates .*reusePort/,
  },
  { name: 'ca', tls: { ca: '/ca.pem' }, bun: /^tls\.ca: Bun\.serve/, deno: /^tls\.ca: Deno\.serve/ },
  {
    name: 'minVersion TLSv1.3',
    tls: { minVersion: 'TLSv1.3' },
    bun: null,
    deno: /^tls\.minVersion: Deno\.serve/,
  },
  { name: 'http2 off', tls: { http2: false }, bun: null, deno: /^tls\.http2: Deno\.serve always offers h2/ },
  {
    name: 'one TLS 1.3 suite of three',
    tls: { ciphers: ['TLS_AES_128_GCM_SHA256', 'ECDHE-ECDSA-AES128-GCM-SHA256'] },
    bun: /^tls\.ciphers: Bun\.serve \(BoringSSL\)/,
    deno: /^tls\.ciphers: Deno\.serve/,
  },
  {
    name: 'shared ticket key file',
    tls: { sessionTickets: { keyFile: '/t.key' } },
    bun: /^tls\.sessionTickets: Bun\.serve/,
    deno: /^tls\.sessionTickets: Deno\.serve/,
  },
  { name: 'http3', tls: { http3: true }, bun: null, deno: /^tls\.http3: Deno\.serve has no HTTP\/3/ },
];

describe('nativeRefusals: TLS on Bun.serve and Deno.serve', () => {
  for (const c of CASES)
    for (const runtime of ['bun', 'deno'] as const)
      it(`${c.name} on ${runtime} -> ${c[runtime] ?? 'served'}`, () => {
        const out = nativeRefusals(options(c.tls), runtime);
        const want = c[runtime];
        if (want === null) assert.deepEqual(out, []);
        else assert.ok(out.length === 1 && want.test(out[0]!), out.join('; '));
      });

  it('acme and dev: the Node transport only, on both', () => {
    const acme = toServerOptions(
      parseConfig({
        root: '/srv',
        listen: { httpPort: 80 },
        tls: { watch: false, acme: { email: 'a@b.c', domains: ['a.test'], storage: '/s' } },
      }),
    );
    const dev = toServerOptions(parseConfig({ root: '/srv', tls: { dev: true, watch: false } }));
    for (const runtime of ['bun', 'deno'] as const) {
      assert.match(nativeRefusals(acme, runtime).join(), /^tls\.acme: .* on the Node transport only/);
      assert.match(nativeRefusals(dev, runtime).join(), /^tls\.dev: .* on the Node transport only/);
    }
  });
});

describe('tls.watch left to its default', () => {
  it('no refusal on either: Bun swaps servers, Deno serves without watching', () => {
    const o = toServerOptions(parseConfig({ root: '/srv', tls: { cert: '/c.pem', key: '/k.pem' } }));
    assert.equal(o.tls?.watch, true);
    assert.equal(o.tls?.watchDefaulted, true);
    for (const runtime of ['bun', 'deno'] as const) assert.deepEqual(nativeRefusals(o, runtime), []);
  });
});

describe('http3Refusal', () => {
  it('Node: no QUIC in official builds; Bun: none; off: none', () => {
    assert.match(http3Refusal(options({ http3: true }), 'node')!, /^tls\.http3: HTTP\/3 needs QUIC/);
    assert.equal(http3Refusal(options({ http3: true }), 'bun'), undefined);
    assert.equal(http3Refusal(options({}), 'node'), undefined);
  });
});
