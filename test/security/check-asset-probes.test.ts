// Attack: a hostile page steers gatehouse check's SPA asset probes (issue 26) at another service. The
// page references scripts and stylesheets on other origins (another port on loopback here, an intranet
// host in real life); the check requests same-origin references only, so the other service sees nothing.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { record } from '../../src/inspect/live.js';

let page: Server;
let victim: Server;
let pageUrl = '';
const victimPaths: string[] = [];
const pagePaths: string[] = [];

async function listen(s: Server): Promise<number> {
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return (s.address() as AddressInfo).port;
}

before(async () => {
  victim = createServer((req, res) => {
    victimPaths.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'text/javascript' });
    res.end('x();\n');
  });
  const victimPort = await listen(victim);
  const other = `http://127.0.0.1:${victimPort}`;
  page = createServer((req, res) => {
    pagePaths.push(req.url ?? '');
    if (req.url !== '/') {
      res.writeHead(404, { 'content-type': 'text/plain' });
      return res.end('no\n');
    }
    res.writeHead(200, { 'content-type': 'text/html', 'cache-control': 'no-cache' });
    res.end(
      `<!doctype html><script src="${other}/admin/delete-everything.js"></script>` +
        `<link rel="stylesheet" href="//127.0.0.1:${victimPort}/internal.css"><script src="/own-3f2a9c1b.js"></script>`,
    );
  });
  pageUrl = `http://127.0.0.1:${await listen(page)}/`;
});
after(async () => {
  page.closeAllConnections();
  victim.closeAllConnections();
  await Promise.all([new Promise((r) => page.close(r)), new Promise((r) => victim.close(r))]);
});

describe('attack: asset references to another origin', () => {
  it('attack: a page references scripts and stylesheets on another service -> never requested; its own asset is', async () => {
    const rec = await record(pageUrl, { repeatDelayMs: 0 });
    // The attack reached the check: the page with the hostile references was served and read.
    assert.equal(rec.probes.primary?.response?.status, 200);
    assert.match(rec.probes.primary?.response?.bodySample ?? '', /delete-everything/);
    assert.deepEqual(victimPaths, [], 'the other origin got no request');
    const probed = (rec.assets ?? []).map((a) => new URL(a.exchange.request.url).pathname);
    assert.deepEqual(probed, ['/index-deadbeef.js', '/own-3f2a9c1b.js']);
    assert.ok(pagePaths.includes('/own-3f2a9c1b.js'));
  });
});
