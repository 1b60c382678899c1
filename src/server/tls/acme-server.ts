// What the server needs from ACME, in one piece: the manager, the HTTP-01 step for the plain-HTTP
// listener's `before` list, and a start that puts a self-signed fallback in place first (so HTTPS
// answers from the first connection) before the stored or newly issued certificate replaces it.
import { issueCertificate } from '../../certs/x509.js';
import type { Step } from '../node/types.js';
import type { Logger } from '../ops/log.js';
import { type AcmeManager, type CertificatePair, createAcmeManager } from './acme.js';
import { createAcmeChallengeStep } from './acme-step.js';
import type { AcmeOptions } from './options.js';

/** The fallback's lifetime: it is made again at every start, and only serves until ACME succeeds. */
const FALLBACK_LIFETIME_MS = 30 * 86_400_000;

export interface AcmeForServer {
  readonly manager: AcmeManager;
  /** For createRedirectListener's `before`: answers /.well-known/acme-challenge/<token>. */
  readonly steps: readonly Step[];
  /** Sets the self-signed fallback, then starts the manager (a stored certificate replaces it at once). */
  start(): Promise<void>;
  close(): void;
}

export function createAcmeForServer(
  acme: AcmeOptions,
  o: {
    logger: Logger;
    /** The TLS listener's setDefault: the default certificate for new connections. */
    setDefault: (pair: CertificatePair, source: string) => void;
    httpPort?: number | undefined;
  },
): AcmeForServer {
  const manager = createAcmeManager({
    ...acme,
    logger: o.logger,
    httpPort: o.httpPort,
    onCertificate: (pair) => o.setDefault(pair, `acme (${acme.domains.join(', ')})`),
  });
  return {
    manager,
    steps: [createAcmeChallengeStep(manager.challenges)],
    async start() {
      const nowMs = Date.now();
      const self = await issueCertificate({
        commonName: acme.domains[0] ?? 'localhost',
        hosts: acme.domains,
        notBefore: new Date(nowMs - 3_600_000),
        notAfter: new Date(nowMs + FALLBACK_LIFETIME_MS),
      });
      // Before the manager starts: it may hand over a stored certificate at once, which must win.
      o.setDefault({ cert: self.certPem, key: self.keyPem }, 'self-signed fallback (until ACME succeeds)');
      await manager.start();
    },
    close: () => manager.close(),
  };
}
