// Who may read /metrics (issue 17 §5): loopback by default, `metrics.allow` otherwise, judged on the
// client address trustProxy yields. A forwarding header counts only from a trusted peer.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { get, makeSite, removeSite, startServer, type TestServer } from '../helpers/http.js';

describe('metrics access', () => {
  let dir: string;
  let loopbackOnly: TestServer;
  let elsewhere: TestServer;
  let behindProxy: TestServer;
  before(async () => {
    dir = makeSite({ 'a.txt': 'a' });
    loopbackOnly = await startServer(dir, { metrics: {} });
    // 192.0.2.0/24 is TEST-NET-1 (RFC 5737): the test's own 127.0.0.1 is not on the list.
    elsewhere = await startServer(dir, { metrics: { allow: ['192.0.2.1'] } });
    behindProxy = await startServer(dir, { metrics: { allow: ['192.0.2.1'] }, trustProxy: ['loopback'] });
  });
  after(async () => {
    await Promise.all([loopbackOnly.close(), elsewhere.close(), behindProxy.close()]);
    removeSite(dir);
  });

  it('loopback may read the metrics by default', async () => {
    assert.equal((await get(loopbackOnly.url, '/metrics')).status, 200);
  });

  it('attack: metrics from a non-allowed address -> 403', async () => {
    const r = await get(elsewhere.url, '/metrics');
    assert.equal(r.status, 403);
    assert.doesNotMatch(r.text, /process_cpu|gatehouse_requests/);
  });

  it('attack: X-Forwarded-For from an untrusted peer naming an allowed address -> 403', async () => {
    const spoofs: Record<string, string>[] = [
      { 'x-forwarded-for': '192.0.2.1' },
      { forwarded: 'for=192.0.2.1' },
      { 'x-real-ip': '192.0.2.1' },
    ];
    for (const headers of spoofs) {
      assert.equal((await get(elsewhere.url, '/metrics', { headers })).status, 403, JSON.stringify(headers));
    }
  });

  it('attack: allowed address spoofed left of the real client behind a trusted proxy -> 403', async () => {
    // The trusted proxy (loopback) appends the real client, 203.0.113.9; the client wrote 192.0.2.1.
    const r = await get(behindProxy.url, '/metrics', {
      headers: { 'x-forwarded-for': '192.0.2.1, 203.0.113.9' },
    });
    assert.equal(r.status, 403);
    // The same header from the trusted proxy naming the allowed client is believed.
    const ok = await get(behindProxy.url, '/metrics', { headers: { 'x-forwarded-for': '192.0.2.1' } });
    assert.equal(ok.status, 200);
  });

  it('attack: percent-encoded or dotted path to /metrics from a non-allowed address -> not served', async () => {
    for (const path of ['/%6detrics', '/%6Detrics', '/x/../metrics', '/./metrics', '/metrics?x=1']) {
      const r = await get(elsewhere.url, path);
      assert.notEqual(r.status, 200, path);
      assert.doesNotMatch(r.text, /process_cpu/, path);
    }
  });

  it('attack: other methods on /metrics do not return the metrics', async () => {
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const r = await get(loopbackOnly.url, '/metrics', { method });
      assert.notEqual(r.status, 200, method);
      assert.doesNotMatch(r.text, /process_cpu/, method);
    }
  });
});
