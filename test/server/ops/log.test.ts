// Access log lines: the readable format, and what each request's record holds (bytes sent on the
// connection, head included; the proxy cache's Cache-Status), checked against real sockets.
// matrix: http1 h2 h1-tls adapters (the static, policy, proxy and cache suites run on every protocol and adapter)
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseConfig, toServerOptions } from '../../../src/config/load.js';
import { createGatehouse, type Gatehouse } from '../../../src/server/app/gatehouse.js';
import { type Logger, prettyLine } from '../../../src/server/ops/log.js';
import { makeSite, raw, rawStatus, removeSite } from '../../helpers/http.js';
import { type Origin, origin, text } from '../../helpers/origin.js';
import { waitUntil } from '../../helpers/wait.js';

describe('prettyLine', () => {
  const time = Date.UTC(2026, 10, 21, 12, 0, 1);
  const cases: [string, Parameters<typeof prettyLine>[0], string][] = [
    [
      'a request',
      { time, method: 'GET', url: '/a', status: 200, bytes: 1300, ms: 0.42 },
      '12:00:01 GET /a 200 1.3 kB 0.4 ms\n',
    ],
    [
      'small and unknown sizes',
      { time, method: 'GET', url: '/b', status: 404, bytes: 12, ms: 1 },
      '12:00:01 GET /b 404 12 B 1.0 ms\n',
    ],
    ['no size', { time, method: 'HEAD', url: '/c', status: 499, ms: 2 }, '12:00:01 HEAD /c 499 - 2.0 ms\n'],
    [
      'a cache answer',
      { time, method: 'GET', url: '/d', status: 200, bytes: 10, ms: 0.1, cache: 'gatehouse; hit; ttl=5' },
      '12:00:01 GET /d 200 10 B 0.1 ms [gatehouse; hit; ttl=5]\n',
    ],
    ['a message', { time, level: 40, msg: 'slow' }, '12:00:01 WARN slow\n'],
    [
      'an error',
      { time, level: 50, msg: 'failed', err: { message: 'boom' } },
      '12:00:01 ERROR failed: boom\n',
    ],
  ];
  for (const [name, line, want] of cases) it(name, () => assert.equal(prettyLine(line), want));
});

describe('access log records', () => {
  let up: Origin;
  let site: string;
  let app: Gatehouse;
  let port: number;
  const records: Record<string, unknown>[] = [];
  const logger: Logger = {
    info: (o) => void (typeof o === 'object' && records.push(o as Record<string, unknown>)),
    warn() {},
    error() {},
    isLevelEnabled: () => true,
  };
  /** The record of the request for `url`, once its response has closed. */
  const recordOf = (url: string) =>
    waitUntil(`a log record for ${url}`, () => records.find((x) => x.url === url));
  /** One request on its own connection; the whole response as received. */
  const fetchRaw = (path: string, extra = '') =>
    raw(port, `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${extra}Connection: close\r\n\r\n`);

  before(async () => {
    up = await origin({
      '/api/data': (_q, s, n) => text(s, 200, { 'cache-control': 'max-age=60' }, `data ${n}`),
    });
    site = makeSite({ 'index.html': '<!doctype html><title>x</title>', 'a.txt': 'hello log' });
    const c = parseConfig({
      root: site,
      listen: { host: '127.0.0.1', port: 0 },
      proxy: [{ prefix: '/api', upstream: up.url, stripPrefix: false, cache: { enabled: true } }],
    });
    app = createGatehouse(toServerOptions(c), { logger });
    port = (await app.listen()).port;
  });
  after(async () => {
    await app.close();
    await up.close();
    removeSite(site);
  });

  it('bytes are what the connection carried for the response, head included', async () => {
    const got = await fetchRaw('/a.txt');
    assert.equal(rawStatus(got), 200);
    const r = await recordOf('/a.txt');
    assert.equal(r.bytes, Buffer.byteLength(got, 'latin1'));
    assert.equal(r.status, 200);
    assert.equal(r.method, 'GET');
    assert.equal(r.cache, undefined);
  });

  it('an error answer is counted too', async () => {
    const got = await fetchRaw('/missing.txt', 'Accept: application/json\r\n');
    assert.equal(rawStatus(got), 404);
    assert.equal((await recordOf('/missing.txt')).bytes, Buffer.byteLength(got, 'latin1'));
  });

  it('a proxy cache answer carries its Cache-Status, miss and hit alike', async () => {
    const miss = await fetchRaw('/api/data');
    const status = (text: string) => /\r\ncache-status: ([^\r]*)/i.exec(text)?.[1];
    assert.match(String(status(miss)), /fwd=uri-miss/);
    assert.equal((await recordOf('/api/data')).cache, status(miss));
    records.length = 0;
    for (let i = 0; i < 2; i++) {
      const hit = await fetchRaw('/api/data');
      assert.match(String(status(hit)), /; hit/);
      const r = await recordOf('/api/data');
      assert.equal(r.cache, status(hit));
      assert.equal(r.bytes, Buffer.byteLength(hit, 'latin1'));
      records.length = 0;
    }
  });

  it('only-if-cached with nothing stored: 504 with its Cache-Status', async () => {
    const got = await fetchRaw('/api/none', 'Cache-Control: only-if-cached\r\n');
    assert.equal(rawStatus(got), 504);
    assert.equal((await recordOf('/api/none')).cache, 'gatehouse; detail=only-if-cached');
  });
});
