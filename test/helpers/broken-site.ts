// A deliberately broken node:http site for `gatehouse check` (issue 16): one path per mistake the
// issue names, and a few more. BROKEN_PATHS says what each path gets wrong; the live test checks the
// recording captures it, the area tables check the finding fires.
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';

/** Path (with its query where the mistake needs one) -> what is wrong there. */
export const BROKEN_PATHS = {
  '/html-cached-a-year': 'an HTML page with Cache-Control: public, max-age=31536000',
  '/assets/app.3f9a1c2b7d.js': 'a hashed asset name served Cache-Control: no-cache',
  '/etag-per-request': 'a strong ETag that changes on every request while the body stays the same',
  '/304-drops-validators': 'a 304 to a matching If-None-Match without ETag, Cache-Control or Date',
  '/cors-star-credentials': 'Access-Control-Allow-Origin: * with Access-Control-Allow-Credentials: true',
  '/cors-reflect': 'reflects any Origin (credentials too) without Vary: Origin; preflight answers 403',
  '/jsonp?callback=handle': 'JSONP reflecting the callback raw, application/json, no nosniff',
  '/gzip-no-vary': 'gzip when asked, without Vary: Accept-Encoding, same ETag on every coding',
  '/loop-a': 'a redirect loop: /loop-a -> /loop-b -> /loop-a (302s)',
  '/moved': 'a 301 to a 302: /moved -> /moved-again -> /landing',
  '/endless/1': 'an endless redirect chain: /endless/N -> /endless/N+1 (302s)',
  '/weak-etag-ranges': 'a weak ETag on a resource that sends Accept-Ranges: bytes',
  '/wrong-content-range': 'Range: bytes=0-9 answered 206 with Content-Range: bytes 0-99/N',
  '/if-range-ignored': 'a 206 even when If-Range names another representation',
  '/inm-always-304': 'a 304 for any If-None-Match, the wrong tag too; If-Modified-Since ignored (200)',
  '/api-shared-cookie': 'JSON with Cache-Control: public, max-age=600 and Set-Cookie',
  '/cache-conflicts': 'Cache-Control: no-store, max-age=600 beside Pragma: no-cache, no Date, bad Expires',
  '/uncompressed-css': 'a 20 kB stylesheet never compressed',
  '/leaky-html':
    'HTML without nosniff, Referrer-Policy or frame protection, Server and X-Powered-By versions',
  '/upstream-dead': 'a 502 Bad Gateway (a proxy to a dead upstream)',
  '/missing': 'a 404 Not Found',
  '/outage-cached-a-year': 'a 404 with Cache-Control: public, max-age=31536000, immutable',
  '/spa/':
    'an SPA whose fallback answers any missing file under /spa/ (assets too) with index.html, 200 text/html',
  '/html-just-deployed': 'HTML without Cache-Control, Last-Modified 40 s ago (heuristic lifetime 4 s)',
} as const;

export type BrokenPath = keyof typeof BROKEN_PATHS;

const HTML = '<!doctype html><title>broken</title><p>A page.</p>\n';
const SPA_HTML =
  '<!doctype html><title>spa</title><script type="module" src="/spa/assets/index-3f2a9c1b.js"></script>\n';
const TEXT = 'the same body on every request\n'.repeat(8);
const CSS = `${'body { margin: 0; padding: 0; color: #222; }\n'.repeat(450)}`;
const GZIPPED_CSS = gzipSync(CSS);
const JSON_BODY = JSON.stringify({ items: [1, 2, 3], note: 'the same data every time' });
const LAST_MODIFIED = 'Tue, 01 Sep 2026 10:00:00 GMT';
const strongTag = (body: string) => `"${createHash('sha256').update(body).digest('hex').slice(0, 16)}"`;

function send(
  res: ServerResponse,
  status: number,
  headers: Record<string, string | string[]>,
  body: string | Buffer = '',
): void {
  res.writeHead(status, headers);
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

function accepts(req: IncomingMessage, coding: string): boolean {
  return String(req.headers['accept-encoding'] ?? '').includes(coding);
}

/** One handler per path; a counter per path makes the per-request ETag. */
function handler(): (req: IncomingMessage, res: ServerResponse) => void {
  let etagCounter = 0;
  return (req, res) => {
    const url = new URL(req.url ?? '/', 'http://broken.test');
    const path = url.pathname;
    const range = req.headers.range;
    const inm = req.headers['if-none-match'];
    switch (path) {
      case '/html-cached-a-year':
        return send(
          res,
          200,
          { 'content-type': 'text/html', 'cache-control': 'public, max-age=31536000' },
          HTML,
        );
      case '/assets/app.3f9a1c2b7d.js':
        return send(res, 200, { 'content-type': 'text/javascript', 'cache-control': 'no-cache' }, 'x();\n');
      case '/etag-per-request':
        etagCounter++;
        return send(res, 200, { 'content-type': 'text/plain', etag: `"v${etagCounter}"` }, TEXT);
      case '/304-drops-validators': {
        const tag = strongTag(TEXT);
        if (inm === tag) {
          res.sendDate = false;
          return send(res, 304, {});
        }
        return send(
          res,
          200,
          { 'content-type': 'text/plain', etag: tag, 'cache-control': 'max-age=60' },
          TEXT,
        );
      }
      case '/cors-star-credentials':
        return send(
          res,
          200,
          {
            'content-type': 'application/json',
            'access-control-allow-origin': '*',
            'access-control-allow-credentials': 'true',
          },
          JSON_BODY,
        );
      case '/cors-reflect': {
        const origin = req.headers.origin;
        if (req.method === 'OPTIONS') return send(res, 403, { 'content-type': 'text/plain' }, 'no');
        const cors: Record<string, string> =
          origin === undefined
            ? {}
            : { 'access-control-allow-origin': origin, 'access-control-allow-credentials': 'true' };
        return send(res, 200, { 'content-type': 'application/json', ...cors }, JSON_BODY);
      }
      case '/jsonp': {
        const cb = url.searchParams.get('callback') ?? 'callback';
        return send(res, 200, { 'content-type': 'application/json' }, `${cb}(${JSON_BODY});`);
      }
      case '/gzip-no-vary': {
        const tag = strongTag(CSS);
        const headers = { 'content-type': 'text/css', etag: tag, 'cache-control': 'max-age=60' };
        if (accepts(req, 'gzip'))
          return send(res, 200, { ...headers, 'content-encoding': 'gzip' }, GZIPPED_CSS);
        return send(res, 200, headers, CSS);
      }
      case '/loop-a':
        return send(res, 302, { location: '/loop-b' });
      case '/loop-b':
        return send(res, 302, { location: '/loop-a' });
      case '/moved':
        return send(res, 301, { location: '/moved-again' });
      case '/moved-again':
        return send(res, 302, { location: '/landing' });
      case '/landing':
        return send(res, 200, { 'content-type': 'text/plain', 'cache-control': 'max-age=60' }, 'landed\n');
      case '/weak-etag-ranges':
        return rangeCapable(res, range, TEXT, { etag: 'W/"weak-1"', 'accept-ranges': 'bytes' });
      case '/wrong-content-range':
        if (range === 'bytes=0-9') {
          return send(res, 206, { 'content-range': `bytes 0-99/${TEXT.length}` }, TEXT.slice(0, 10));
        }
        return send(res, 200, { 'content-type': 'text/plain', 'accept-ranges': 'bytes' }, TEXT);
      case '/if-range-ignored':
        return rangeCapable(res, range, TEXT, { etag: strongTag(TEXT), 'accept-ranges': 'bytes' });
      case '/inm-always-304':
        if (inm !== undefined)
          return send(res, 304, { etag: strongTag(TEXT), 'cache-control': 'max-age=60' });
        return send(
          res,
          200,
          { 'content-type': 'text/plain', etag: strongTag(TEXT), 'last-modified': LAST_MODIFIED },
          TEXT,
        );
      case '/api-shared-cookie':
        return send(
          res,
          200,
          {
            'content-type': 'application/json',
            'cache-control': 'public, max-age=600',
            'set-cookie': 'session=abc123; Path=/; HttpOnly',
          },
          JSON_BODY,
        );
      case '/cache-conflicts':
        res.sendDate = false;
        return send(
          res,
          200,
          {
            'content-type': 'text/plain',
            'cache-control': 'no-store, max-age=600',
            pragma: 'no-cache',
            expires: 'soon',
          },
          TEXT,
        );
      case '/uncompressed-css':
        return send(res, 200, { 'content-type': 'text/css', 'cache-control': 'max-age=60' }, CSS);
      case '/leaky-html':
        return send(
          res,
          200,
          {
            'content-type': 'text/html',
            server: 'Apache/2.4.1 (Unix) OpenSSL/1.0.1',
            'x-powered-by': 'PHP/5.3.3',
          },
          HTML,
        );
      case '/upstream-dead':
        return send(res, 502, { 'content-type': 'text/plain' }, 'Bad Gateway\n');
      case '/missing':
        return send(res, 404, { 'content-type': 'text/plain', 'cache-control': 'no-store' }, 'not found\n');
      case '/outage-cached-a-year':
        return send(
          res,
          404,
          { 'content-type': 'text/plain', 'cache-control': 'public, max-age=31536000, immutable' },
          'not found\n',
        );
      case '/spa/assets/index-3f2a9c1b.js':
        return send(
          res,
          200,
          { 'content-type': 'text/javascript', 'cache-control': 'public, max-age=31536000, immutable' },
          'boot();\n',
        );
      case '/html-just-deployed':
        return send(
          res,
          200,
          { 'content-type': 'text/html', 'last-modified': new Date(Date.now() - 40_000).toUTCString() },
          HTML,
        );
      default:
        // try_files $uri /spa/index.html: every miss under /spa/, asset URLs too, gets the page.
        if (path.startsWith('/spa/')) {
          return send(res, 200, { 'content-type': 'text/html', 'cache-control': 'no-cache' }, SPA_HTML);
        }
        if (/^\/endless\/\d+$/.test(path)) {
          return send(res, 302, { location: `/endless/${Number(path.slice(9)) + 1}` });
        }
        return send(res, 404, { 'content-type': 'text/plain' }, 'not found\n');
    }
  };
}

/** 206 for `bytes=0-9` whatever If-Range says (the mistake of /if-range-ignored; right for the others). */
function rangeCapable(
  res: ServerResponse,
  range: string | undefined,
  body: string,
  headers: Record<string, string>,
): void {
  if (range === 'bytes=0-9') {
    send(
      res,
      206,
      { ...headers, 'content-type': 'text/plain', 'content-range': `bytes 0-9/${body.length}` },
      body.slice(0, 10),
    );
    return;
  }
  send(res, 200, { ...headers, 'content-type': 'text/plain' }, body);
}

export interface BrokenSite {
  /** http://127.0.0.1:PORT (no trailing slash). */
  base: string;
  url(path: BrokenPath | string): string;
  /** TCP connections accepted so far (connection reuse). */
  connections(): number;
  close(): Promise<void>;
}

/** Starts the broken site on 127.0.0.1:0. */
export async function startBrokenSite(): Promise<BrokenSite> {
  const server: Server = createServer(handler());
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    url: (path) => `${base}${path}`,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
