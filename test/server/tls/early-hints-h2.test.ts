// 103 Early Hints over HTTP/2 (node:http2 client against Gatehouse's TLS listener on 127.0.0.1:0): the
// 103 HEADERS frame arrives before the 200 and lists the page's hashed assets; none when switched off,
// for HEAD, for a 304 or for a non-HTML file.
import assert from 'node:assert/strict';
import { type ClientHttp2Session, connect, type IncomingHttpHeaders } from 'node:http2';
import { after, before, describe, it } from 'node:test';
import { makeSite, removeSite, startServer, type TestServer } from '../../helpers/http.js';
import { type TestTlsFiles, testTls } from '../../helpers/tls.js';

const CSS = '/assets/main-3f2a9c1b.css';
const FONT = '/fonts/inter-9b8c7d6e.woff2';
const PAGE = `<!doctype html><head><link rel=stylesheet href="${CSS}"><link rel=preload as=font href="${FONT}"></head><p>hi</p>`;

interface Answer {
  /** Every HEADERS block in arrival order: 1xx interim ones, then the final one. */
  heads: IncomingHttpHeaders[];
  body: string;
}

function request(
  session: ClientHttp2Session,
  path: string,
  headers: Record<string, string> = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const heads: IncomingHttpHeaders[] = [];
    const req = session.request({ ':path': path, ...headers });
    req.on('headers', (h) => heads.push(h)); // interim (1xx) HEADERS frames
    req.on('response', (h) => heads.push(h));
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      body += c;
    });
    req.on('end', () => resolve({ heads, body }));
    req.on('error', reject);
    req.end();
  });
}

describe('103 Early Hints over HTTP/2', () => {
  let tls: TestTlsFiles;
  let dir: string;
  let on: TestServer;
  let off: TestServer;
  let sessions: ClientHttp2Session[] = [];
  const session = (s: TestServer) => {
    const c = connect(s.url, { ca: tls.caPem });
    sessions.push(c);
    return c;
  };
  before(async () => {
    dir = makeSite({ 'index.html': PAGE, 'app.js': 'console.log(1)', [CSS.slice(1)]: 'body{}' });
    tls = await testTls();
    const files = { cert: tls.cert, key: tls.key };
    on = await startServer(dir, { tls: files });
    off = await startServer(dir, { tls: files, static: { earlyHints: false } });
  });
  after(async () => {
    for (const s of sessions) s.close();
    sessions = [];
    await on.close();
    await off.close();
    removeSite(dir);
  });

  it('GET of an HTML page: a 103 HEADERS frame with the Link values, then the 200', async () => {
    const a = await request(session(on), '/');
    assert.deepEqual(
      a.heads.map((h) => h[':status']),
      [103, 200],
    );
    assert.equal(
      a.heads[0]!.link,
      `<${CSS}>; rel=preload; as=style, <${FONT}>; rel=preload; as=font; crossorigin`,
    );
    assert.equal(a.heads[1]!.link, undefined, 'the 200 does not repeat them');
    assert.ok(a.body.includes('<p>hi</p>'));
  });

  it('no Sec-Fetch headers needed on HTTP/2 (every client reads interim HEADERS)', async () => {
    const a = await request(session(on), '/index.html', { accept: '*/*' });
    assert.equal(a.heads[0]![':status'], 103);
  });

  it('static.earlyHints false: only the 200', async () => {
    const a = await request(session(off), '/');
    assert.deepEqual(
      a.heads.map((h) => h[':status']),
      [200],
    );
  });

  it('HEAD: only the 200', async () => {
    const a = await request(session(on), '/', { ':method': 'HEAD' });
    assert.deepEqual(
      a.heads.map((h) => h[':status']),
      [200],
    );
  });

  it('304: no 103', async () => {
    const s = session(on);
    const first = await request(s, '/');
    const etag = first.heads.at(-1)!.etag as string;
    const a = await request(s, '/', { 'if-none-match': etag });
    assert.deepEqual(
      a.heads.map((h) => h[':status']),
      [304],
    );
  });

  it('a non-HTML file: no 103', async () => {
    const a = await request(session(on), '/app.js');
    assert.deepEqual(
      a.heads.map((h) => h[':status']),
      [200],
    );
  });
});
