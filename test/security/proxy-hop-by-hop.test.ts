// Attack: a client lists fields in Connection to strip what the proxy must send (RFC 9110
// §7.6.1 lets it drop its own hop-by-hop fields, not the proxy's): Host always goes upstream,
// X-Forwarded-* and Via are regenerated, and Upgrade/Connection never pass on a plain request.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { httpUpstream, proxyTo, rawClient } from '../helpers/proxy-attack.js';

async function upstreamHeaders(request: string) {
  const up = await httpUpstream((_req, res) => res.end('ok'));
  const px = await proxyTo(up.url);
  try {
    const c = rawClient(px.server.port, request);
    await c.closed;
    assert.match(c.text(), /^HTTP\/1\.1 200 /);
    assert.equal(up.seen.length, 1);
    return up.seen[0]!.headers;
  } finally {
    await px.close();
    await up.close();
  }
}

describe('proxy: hop-by-hop fields', () => {
  it('attack: Connection: close, host -> Host still reaches the upstream', async () => {
    const h = await upstreamHeaders(
      'GET /api/x HTTP/1.1\r\nHost: public.example\r\nConnection: close, host\r\n\r\n',
    );
    assert.equal(h.host, 'public.example');
  });

  it('attack: Connection lists X-Forwarded-*, Via, Forwarded -> regenerated, never the client values', async () => {
    const h = await upstreamHeaders(
      'GET /api/x HTTP/1.1\r\nHost: public.example\r\n' +
        'Connection: close, x-forwarded-for, x-forwarded-host, x-forwarded-proto, via\r\n' +
        'X-Forwarded-For: 6.6.6.6\r\nX-Forwarded-Host: evil.example\r\nX-Forwarded-Proto: https\r\nVia: 1.1 spoof\r\n\r\n',
    );
    assert.equal(h['x-forwarded-for'], '127.0.0.1');
    assert.equal(h['x-forwarded-host'], 'public.example');
    assert.equal(h['x-forwarded-proto'], 'http');
    assert.match(String(h.via), /1\.1 gatehouse$/);
  });

  it('attack: Upgrade: h2c -> the upstream never sees Upgrade, HTTP2-Settings or an upgrade Connection', async () => {
    const up = await httpUpstream((_req, res) => res.end('ok'));
    const px = await proxyTo(up.url);
    try {
      const c = rawClient(
        px.server.port,
        'GET /api/x HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings, close\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n',
      );
      await c.closed;
      // Answered as a plain request, or refused: either way nothing of the upgrade goes upstream.
      for (const r of up.seen) {
        assert.equal(r.headers.upgrade, undefined);
        assert.equal(r.headers['http2-settings'], undefined);
        assert.doesNotMatch(String(r.headers.connection ?? ''), /upgrade/i);
      }
      assert.doesNotMatch(c.text(), /^HTTP\/1\.1 101/);
    } finally {
      await px.close();
      await up.close();
    }
  });
});
