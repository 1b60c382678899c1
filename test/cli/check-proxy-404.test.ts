// gatehouse check on a 404 that an upstream answered through Gatehouse's proxy: the finding says the
// proxy strips its prefix by default and how to keep it. A real Gatehouse with a proxy route on
// 127.0.0.1 in front of a real upstream that serves only /api/... (as one behind Vite's proxy would).
import assert from 'node:assert/strict';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { checkCommand } from '../../src/cli/check.js';
import { createServer } from '../../src/index.js';
import { makeSite, removeSite } from '../helpers/http.js';

let upstream: Server;
const seen: string[] = [];
let gh: ReturnType<typeof createServer>;
let base = '';
let site = '';

before(async () => {
  upstream = createHttpServer((req, res) => {
    seen.push(req.url!);
    const found = req.url === '/api/users';
    res.writeHead(found ? 200 : 404, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(found ? '[]' : '{"error":"not found"}');
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const up = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  site = makeSite({ 'index.html': '<!doctype html><title>x</title>' });
  gh = createServer({
    root: site,
    listen: { host: '127.0.0.1', port: 0 },
    log: { format: 'off' },
    proxy: [
      { prefix: '/api', upstream: up },
      { prefix: '/kept', upstream: `${up}/api`, stripPrefix: true },
    ],
  });
  base = `http://127.0.0.1:${(await gh.listen()).port}`;
});
after(async () => {
  await gh.close();
  await new Promise<void>((resolve) => upstream.close(() => resolve()));
  removeSite(site);
});

async function findings(url: string) {
  let out = '';
  const code = await checkCommand([url, '--json'], {
    cwd: site,
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: () => {} },
    repeatDelayMs: 0,
  });
  const json = JSON.parse(out) as {
    status: number;
    findings: { id: string; message: string; evidence: string }[];
  };
  return { code, status: json.status, findings: json.findings };
}

describe('gatehouse check: a 404 from the upstream behind the proxy', () => {
  it('the prefix was stripped (the upstream got /users) -> the warning names stripPrefix', async () => {
    const r = await findings(`${base}/api/users`);
    assert.equal(r.status, 404);
    assert.ok(seen.includes('/users'), seen.join(' '));
    const f = r.findings.find((x) => x.id === 'status.client-error');
    assert.ok(f, r.findings.map((x) => x.id).join(' '));
    assert.match(f.message, /strips its prefix by default .*"stripPrefix": false/);
    assert.match(f.evidence, /via: 1\.1 gatehouse/);
    assert.equal(r.code, 0, 'a warning, not an error');
  });

  it('the same upstream reached with its path -> 200, no such finding', async () => {
    const r = await findings(`${base}/kept/users`);
    assert.equal(r.status, 200);
    assert.equal(
      r.findings.find((x) => x.id === 'status.client-error'),
      undefined,
    );
  });

  it("a 404 of Gatehouse's own static files -> the plain warning, no proxy advice", async () => {
    const r = await findings(`${base}/missing`);
    assert.equal(r.status, 404);
    const f = r.findings.find((x) => x.id === 'status.client-error');
    assert.ok(f);
    assert.doesNotMatch(f.message, /stripPrefix/);
  });
});
