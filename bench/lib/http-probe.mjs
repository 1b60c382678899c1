// One real request with node:http (no keep-alive) to check a server's status code and body length
// before it is timed, and to fetch validators such as the ETag for the 304 scenario.
import http from 'node:http';

/** @returns {Promise<{ status: number, headers: import('node:http').IncomingHttpHeaders, rawHeaders: string[], bodyLength: number }>} */
export function probe({ port, path, headers = {}, method = 'GET', timeoutMs = 5000 }) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method, headers, agent: false }, (res) => {
      let bodyLength = 0;
      res.on('data', (chunk) => {
        bodyLength += chunk.length;
      });
      res.once('end', () =>
        resolve({ status: res.statusCode, headers: res.headers, rawHeaders: res.rawHeaders, bodyLength }),
      );
      res.once('error', reject);
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no response within ${timeoutMs} ms`)));
    req.once('error', reject);
    req.end();
  });
}
