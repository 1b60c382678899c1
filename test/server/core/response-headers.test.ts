// Pending policy headers merged into whatever head a handler writes.
// matrix: http1 h2 h1-tls adapters (the static, policy, proxy and cache suites run on every protocol and adapter)
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import {
  addDefaultHeader,
  addResponseHeader,
  addResponseVary,
} from '../../../src/server/core/response-headers.js';
import { get } from '../../helpers/http.js';

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void) {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, close: () => new Promise((r) => server.close(r)) };
}

const cases: [string, (res: ServerResponse) => void, Record<string, string | undefined>][] = [
  [
    'added headers join a writeHead object; Vary is merged, never replaced (RFC 9110 §12.5.5)',
    (res) => {
      addResponseHeader(res, 'Access-Control-Allow-Origin', 'https://a.example');
      addResponseVary(res, 'Origin');
      res.writeHead(200, { 'Content-Type': 'text/plain', Vary: 'Accept-Encoding' });
      res.end('x');
    },
    {
      'access-control-allow-origin': 'https://a.example',
      vary: 'Accept-Encoding, Origin',
      'content-type': 'text/plain',
    },
  ],
  [
    'a strong header beats the handler value whatever its casing',
    (res) => {
      addResponseHeader(res, 'x-frame-options', 'DENY');
      res.writeHead(200, { 'X-Frame-Options': 'SAMEORIGIN' });
      res.end();
    },
    { 'x-frame-options': 'DENY' },
  ],
  [
    'a default header yields to the handler value',
    (res) => {
      addDefaultHeader(res, 'referrer-policy', 'no-referrer');
      addDefaultHeader(res, 'x-extra', '1');
      res.writeHead(200, { 'Referrer-Policy': 'origin' });
      res.end();
    },
    { 'referrer-policy': 'origin', 'x-extra': '1' },
  ],
  [
    'setHeader plus end() (implicit head) keeps them too',
    (res) => {
      addResponseHeader(res, 'x-a', '1');
      addResponseVary(res, 'Origin');
      res.setHeader('Vary', 'Accept');
      res.statusCode = 404;
      res.end('nope');
    },
    { 'x-a': '1', vary: 'Accept, Origin' },
  ],
  [
    'a flat header list is merged like an object: ours win, Vary merged, repeated lines kept',
    (res) => {
      addResponseHeader(res, 'Access-Control-Allow-Origin', 'https://a.example');
      addResponseVary(res, 'Origin');
      res.writeHead(200, [
        'vary',
        'Accept-Encoding',
        'access-control-allow-origin',
        '*',
        'x-line',
        'one',
        'x-line',
        'two',
      ]);
      res.end('x');
    },
    {
      'access-control-allow-origin': 'https://a.example',
      vary: 'Accept-Encoding, Origin',
      'x-line': 'one, two',
    },
  ],
  [
    'a list of pairs is merged the same way',
    (res) => {
      addResponseVary(res, 'Origin');
      res.writeHead(200, [
        ['Vary', 'Accept'],
        ['X-A', '1'],
      ] as unknown as string[]);
      res.end('x');
    },
    { vary: 'Accept, Origin', 'x-a': '1' },
  ],
  [
    'writeHead with a reason phrase and no object',
    (res) => {
      addResponseHeader(res, 'x-a', '1');
      res.writeHead(204, 'Nothing');
      res.end();
    },
    { 'x-a': '1' },
  ],
];

describe('pending response headers', () => {
  for (const [name, handler, want] of cases) {
    it(name, async () => {
      const s = await serve((_req, res) => handler(res));
      try {
        const r = await get(s.url, '/');
        for (const [k, v] of Object.entries(want)) assert.equal(r.headers[k], v, k);
      } finally {
        await s.close();
      }
    });
  }

  it('more than 30 added headers still all arrive', async () => {
    const s = await serve((_req, res) => {
      for (let i = 0; i < 40; i++) addDefaultHeader(res, `x-h${i}`, String(i));
      res.writeHead(200, { 'x-h3': 'handler' });
      res.end();
    });
    try {
      const r = await get(s.url, '/');
      assert.equal(r.headers['x-h39'], '39');
      assert.equal(r.headers['x-h3'], 'handler');
    } finally {
      await s.close();
    }
  });
});
