// End to end: a Gatehouse with tls.acme and listen.httpPort against pebble. HTTPS answers at once
// with a fallback certificate, then with the one pebble issued (HTTP-01 answered by the server's own
// plain-HTTP listener), without a restart.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect, type PeerCertificate } from 'node:tls';
import { parseConfig, toServerOptions } from '../../../src/config/load.js';
import { createGatehouse, type Gatehouse } from '../../../src/server/app/gatehouse.js';
import { tempStorage } from '../../helpers/acme.js';
import { makeSite, removeSite } from '../../helpers/http.js';
import { type Pebble, startPebble } from '../../helpers/pebble.js';
import { waitUntil } from '../../helpers/wait.js';

const NAME = 'e2e.gatehouse.test';

/** The certificate served to `servername`, and whether it verifies against `ca` for that name. */
function served(port: number, ca: string): Promise<{ peer: PeerCertificate; trusted: boolean }> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port, servername: NAME, ca, rejectUnauthorized: false }, () => {
      const peer = s.getPeerCertificate();
      const trusted = s.authorized;
      s.end();
      resolve({ peer, trusted });
    });
    s.on('error', reject);
  });
}

// createGatehouse runs the manager for tls.acme (tls/acme-server.ts): onCertificate -> setDefault, the
// HTTP-01 step in the plain-HTTP listener's `before`, a self-signed fallback until the first certificate.

describe('acme end to end: createGatehouse with tls.acme against pebble', () => {
  let pebble: Pebble;
  let app: Gatehouse | undefined;
  let site: string;
  const storage = tempStorage();
  before(async () => {
    pebble = await startPebble();
    site = makeSite({ 'index.html': 'home' });
  });
  after(async () => {
    await app?.close();
    await pebble?.stop();
    removeSite(site);
  });
  const start = async () => {
    app = createGatehouse(
      toServerOptions(
        parseConfig({
          root: site,
          log: { format: 'off' },
          listen: { host: '127.0.0.1', port: 0, httpPort: pebble.httpPort },
          tls: {
            acme: {
              email: 'ops@gatehouse.test',
              domains: [NAME],
              directory: pebble.directory,
              directoryCa: pebble.directoryCa,
              storage,
            },
          },
        }),
      ),
    );
    return (await app.listen()).port;
  };

  it('HTTPS first serves a self-signed fallback, then the pebble-issued certificate', async () => {
    const port = await start();
    const root = await pebble.rootPem();
    const first = await served(port, root);
    assert.equal(first.trusted, false, 'the fallback is not pebble-issued');
    const issued = await waitUntil(
      'HTTPS serves the pebble-issued certificate',
      async () => {
        const s = await served(port, root);
        return s.trusted ? s : undefined;
      },
      { deadlineMs: 60_000, intervalMs: 50 },
    );
    assert.match(issued.peer.subjectaltname ?? '', /DNS:e2e\.gatehouse\.test/);
    assert.notEqual(issued.peer.fingerprint256, first.peer.fingerprint256);
  });

  it('a restart on the same storage serves the stored certificate from the first connection', async () => {
    await app?.close();
    const port = await start();
    assert.equal((await served(port, await pebble.rootPem())).trusted, true);
  });
});
