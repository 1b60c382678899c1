// tls.ciphers and tls.minVersion: the RFC 9325 default, names checked against OpenSSL's, and HTTP/2's
// blocklist (RFC 9113 §9.2.2, Appendix A) refused at load while tls.http2 is on.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, parseConfig } from '../../src/config/load.js';
import { blockedForHttp2, DEFAULT_CIPHERS } from '../../src/server/tls/ciphers.js';

describe('tls.ciphers', () => {
  it('defaults to forward-secret AEAD suites for ECDSA and RSA keys and the TLS 1.3 ones, none blocked for HTTP/2', () => {
    const c = parseConfig({ tls: { dev: true } });
    assert.deepEqual(c.tls?.ciphers, [...DEFAULT_CIPHERS]);
    assert.equal(c.tls?.minVersion, 'TLSv1.2');
    for (const name of DEFAULT_CIPHERS) {
      assert.equal(blockedForHttp2(name), false, name);
      assert.match(name, /^(TLS_|ECDHE-(ECDSA|RSA)-)/);
      assert.match(name, /GCM|CHACHA20/);
    }
  });

  const table: [string, string, boolean][] = [
    ['TLS 1.3 suite', 'TLS_AES_128_GCM_SHA256', false],
    ['ECDHE with AES-GCM', 'ECDHE-RSA-AES256-GCM-SHA384', false],
    ['ECDHE with ChaCha20-Poly1305', 'ECDHE-ECDSA-CHACHA20-POLY1305', false],
    ['DHE with AES-GCM', 'DHE-RSA-AES128-GCM-SHA256', false],
    ['ECDHE with AES-CCM', 'ECDHE-ECDSA-AES128-CCM', false],
    ['RSA key exchange, CBC', 'AES128-SHA', true],
    ['RSA key exchange, AES-GCM (no forward secrecy)', 'AES128-GCM-SHA256', true],
    ['ECDHE with CBC', 'ECDHE-RSA-AES128-SHA', true],
    ['ECDHE with CBC, SHA-2 MAC', 'ECDHE-ECDSA-AES256-SHA384', true],
    ['DHE with CBC', 'DHE-RSA-AES256-SHA256', true],
    ['PSK with AES-GCM (no ephemeral key)', 'PSK-AES128-GCM-SHA256', true],
    ['lower case is the same suite', 'aes128-sha', true],
  ];
  for (const [why, name, blocked] of table) {
    it(`${why}: ${name} -> ${blocked ? 'on' : 'off'} HTTP/2's blocklist`, () => {
      assert.equal(blockedForHttp2(name), blocked);
    });
  }

  const bad: [string, unknown, RegExp][] = [
    [
      'a blocklisted suite with http2 on',
      { dev: true, ciphers: ['ECDHE-RSA-AES128-GCM-SHA256', 'AES128-SHA'] },
      /^config: tls\.ciphers\[1\]: AES128-SHA is on HTTP\/2's blocklist .*set tls\.http2: false$/,
    ],
    [
      'an OpenSSL expression, not a name',
      { dev: true, ciphers: ['HIGH:!aNULL'] },
      /^config: tls\.ciphers\[0\]: not a cipher suite name OpenSSL knows/,
    ],
    [
      'an unknown name',
      { dev: true, ciphers: ['ECDHE-RSA-ROT13'] },
      /^config: tls\.ciphers\[0\]: not a cipher/,
    ],
    ['an empty list', { dev: true, ciphers: [] }, /^config: tls\.ciphers: /],
    [
      'only TLS 1.3 suites with minVersion TLSv1.2',
      { dev: true, ciphers: ['TLS_AES_128_GCM_SHA256'] },
      /^config: tls\.ciphers: lists no TLS 1\.2 suite.*minVersion: TLSv1\.3$/,
    ],
  ];
  for (const [name, tls, msg] of bad) {
    it(`${name} -> ConfigError naming the key`, () => {
      assert.throws(
        () => parseConfig({ tls } as Parameters<typeof parseConfig>[0]),
        (err: unknown) => err instanceof ConfigError && msg.test(err.message),
      );
    });
  }

  it('a CBC suite loads with http2 off (HTTP/1.1 only), and only TLS 1.3 suites with minVersion TLSv1.3', () => {
    const h1 = parseConfig({ tls: { dev: true, http2: false, ciphers: ['ECDHE-RSA-AES128-SHA'] } });
    assert.deepEqual(h1.tls?.ciphers, ['ECDHE-RSA-AES128-SHA']);
    const only13 = parseConfig({
      tls: { dev: true, minVersion: 'TLSv1.3', ciphers: ['TLS_CHACHA20_POLY1305_SHA256'] },
    });
    assert.deepEqual(only13.tls?.ciphers, ['TLS_CHACHA20_POLY1305_SHA256']);
  });
});
