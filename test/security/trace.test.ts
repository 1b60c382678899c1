// Attack: TRACE through the proxy echoes the request, cookies and credentials included, from the
// upstream (RFC 9110 §9.3.8: such fields should be excluded). It gets 405 with Allow and never
// reaches the upstream, unless proxy[].allowTrace is set.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { get } from '../helpers/http.js';
import { httpUpstream, proxyTo } from '../helpers/proxy-attack.js';

describe('proxy: TRACE', () => {
  it('attack: TRACE with cookies -> 405 with Allow, never forwarded', async () => {
    const up = await httpUpstream((req, res) => res.end(JSON.stringify(req.headers)));
    const px = await proxyTo(up.url);
    try {
      const r = await get(px.server.url, '/api/x', {
        method: 'TRACE',
        headers: { cookie: 'session=secret' },
      });
      assert.equal(r.status, 405);
      assert.ok(r.headers.allow, 'Allow is sent with 405 (RFC 9110 §15.5.6)');
      assert.doesNotMatch(r.headers.allow!, /TRACE/);
      assert.doesNotMatch(r.text, /secret/);
      assert.equal(up.seen.length, 0);
    } finally {
      await px.close();
      await up.close();
    }
  });

  it('allowTrace: true -> TRACE is forwarded', async () => {
    const up = await httpUpstream((req, res) => res.end(req.method));
    const px = await proxyTo(up.url, { allowTrace: true });
    try {
      const r = await get(px.server.url, '/api/x', { method: 'TRACE' });
      assert.equal(r.status, 200);
      assert.equal(r.text, 'TRACE');
    } finally {
      await px.close();
      await up.close();
    }
  });
});
