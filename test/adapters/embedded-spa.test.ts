// Gatehouse mounted with static.spa in a real Express 5 app: a page path that is passed on because the
// request is not a navigation carries Vary: Accept, since the same URL answers a navigation with the page
// (RFC 9110 §12.5.5), as standalone Gatehouse's 404 does.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import express from 'express';
import { gatehouse } from '../../src/adapters/express.js';
import { get, makeSite, removeSite } from '../helpers/http.js';

describe('embedded SPA: what is passed on varies on Accept', () => {
  let dir: string;
  let server: Server;
  let base: string;
  let passedOn = 0;
  before(async () => {
    dir = makeSite({ 'index.html': '<!doctype html><title>app</title>' });
    const mw = gatehouse({ root: dir, log: { format: 'off' }, static: { spa: true } });
    const app = express();
    app.use(mw);
    app.get('/users/:id', (_req, res) => {
      passedOn++;
      res.json({ id: 1 });
    });
    server = mw.attach(createServer(app));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await new Promise<void>((r) => server.close(() => r()));
    removeSite(dir);
  });

  it('a navigation gets the page; a fetch of the same URL reaches the app, with Vary: Accept', async () => {
    const nav = await get(base, '/users/7', { headers: { accept: 'text/html' } });
    assert.match(nav.text, /<title>app/);
    assert.match(String(nav.headers.vary), /Accept\b/);
    const api = await get(base, '/users/7', { headers: { accept: 'application/json' } });
    assert.equal(api.status, 200);
    assert.equal(passedOn, 1);
    assert.match(String(api.headers.vary), /(^|, *)Accept(,|$)/);
  });
});
