// ACME test helpers: a logger that keeps its lines, a manager against pebble with test-sized waits,
// and a TLS handshake that checks a served certificate against pebble's root.
import { mkdtempSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { connect } from 'node:tls';
import {
  type AcmeManager,
  type AcmeManagerOptions,
  type CertificatePair,
  createAcmeManager,
} from '../../src/server/tls/acme.js';
import { type MemoryLogger, memoryLogger } from './log.js';
import { type ChallengeResponder, type Pebble, startChallengeResponder, startPebble } from './pebble.js';

export { type LogLine, type MemoryLogger, memoryLogger } from './log.js';

export function tempStorage(): string {
  return join(mkdtempSync(join(tmpdir(), 'gatehouse-acme-')), 'storage');
}

export interface TestManager {
  manager: AcmeManager;
  logger: MemoryLogger;
  /** Every pair handed to onCertificate, in order. */
  pairs: CertificatePair[];
}

/** A manager with millisecond waits: backoff 40 ms .. 400 ms, polls 50 .. 300 ms, no jitter surprise. */
export function testManager(
  o: Partial<AcmeManagerOptions> & Pick<AcmeManagerOptions, 'directory' | 'storage' | 'domains'>,
): TestManager {
  const logger = memoryLogger();
  const pairs: CertificatePair[] = [];
  const manager = createAcmeManager({
    email: 'ops@gatehouse.test',
    renewAtFraction: 2 / 3,
    retry: { baseMs: 40, maxMs: 400 },
    poll: { minMs: 50, maxMs: 300 },
    requestTimeoutMs: 10_000,
    logger,
    onCertificate: (p) => pairs.push(p),
    ...o,
  });
  return { manager, logger, pairs };
}

/**
 * For a describe block: pebble and a challenge responder on its HTTP-01 port (started before, stopped
 * after), and `make`, a test manager against them whose challenges the responder answers; every
 * manager made is closed after.
 */
export function pebbleSuite(pebbleOptions?: Parameters<typeof startPebble>[0]): {
  readonly pebble: Pebble;
  readonly responder: ChallengeResponder;
  /** Defaults: pebble's directory, its directoryCa and HTTP-01 port; `o` overrides them. */
  make(o: Partial<AcmeManagerOptions> & Pick<AcmeManagerOptions, 'storage' | 'domains'>): TestManager;
} {
  let pebble: Pebble | undefined;
  let responder: ChallengeResponder | undefined;
  const managers: TestManager[] = [];
  before(async () => {
    pebble = await startPebble(pebbleOptions);
    responder = await startChallengeResponder(pebble.httpPort);
  });
  after(async () => {
    for (const m of managers) m.manager.close();
    await responder?.close();
    await pebble?.stop();
  });
  return {
    get pebble() {
      return pebble!;
    },
    get responder() {
      return responder!;
    },
    make(o) {
      const m = testManager({
        directory: pebble!.directory,
        directoryCa: pebble!.directoryCa,
        httpPort: pebble!.httpPort,
        ...o,
      });
      managers.push(m);
      responder!.tables.add(m.manager.challenges);
      return m;
    },
  };
}

/**
 * Serves `pair` on an https server on 127.0.0.1:0 and shakes hands as `servername`, trusting only
 * `ca`: resolves with the peer certificate when the chain verifies and the name matches, else rejects.
 */
export async function handshake(
  pair: CertificatePair,
  servername: string,
  ca: string,
): Promise<{ fingerprint256: string; validToMs: number }> {
  const server = createHttpsServer({ cert: pair.cert, key: pair.key }, (_req, res) => res.end('ok'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  try {
    return await new Promise((resolve, reject) => {
      const s = connect({ host: '127.0.0.1', port, servername, ca }, () => {
        const peer = s.getPeerCertificate();
        s.end();
        resolve({ fingerprint256: peer.fingerprint256, validToMs: Date.parse(peer.valid_to) });
      });
      s.on('error', reject);
    });
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
}
