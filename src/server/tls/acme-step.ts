// The HTTP-01 answer as a request step for the plain-HTTP listener (listen.httpPort), placed before
// the https redirect: a challenge path is answered here (RFC 8555 §8.3), anything else goes on.

import { ERRORS, sendError } from '../core/errors.js';
import type { Step } from '../node/types.js';
import { type AcmeChallenges, answerAcmeChallenge } from './acme-challenge.js';

export function createAcmeChallengeStep(challenges: AcmeChallenges): Step {
  return (req, res) => {
    const a = answerAcmeChallenge(challenges, req.method ?? 'GET', req.url ?? '/');
    if (a === undefined) return false;
    if (a.kind === 'answer') {
      res.writeHead(200, {
        'content-type': a.contentType,
        'content-length': Buffer.byteLength(a.body),
        // A token is answered only while its challenge is pending: never from a cache.
        'cache-control': 'no-store',
      });
      res.end(req.method === 'HEAD' ? undefined : a.body);
    } else if (a.kind === 'method-not-allowed') {
      sendError(req, res, ERRORS.methodNotAllowed, 'ACME challenges are read with GET.', { allow: a.allow });
    } else {
      sendError(req, res, ERRORS.notFound, 'No such ACME challenge.');
    }
    return true;
  };
}
