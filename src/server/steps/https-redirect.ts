// HTTP -> HTTPS for a plain-HTTP listener beside the HTTPS one (listen.redirectToHttps, and the
// listener of listen.httpPort). The decision lives in src/http/redirect.ts.
import { httpsRedirect } from '../../http/redirect.js';
import type { Step } from '../core/context.js';
import { ERRORS, sendError } from '../core/errors.js';
import type { Feature } from '../core/feature.js';
import type { StepContext } from '../node/types.js';
import { sendRedirect } from './redirects.js';

/** Where to send browsers: the HTTPS port (in the Location unless 443) and the hosts the site owns. */
export interface HttpsRedirectOptions {
  readonly httpsPort?: number | undefined;
  readonly hosts?: readonly string[] | undefined;
}

/**
 * HTTP -> HTTPS: every request gets 308 to `https://<host>[:httpsPort]<path>?<query>` (308 keeps the
 * method and body). Meant for a plain-HTTP listener beside the HTTPS one. The host comes from the
 * request (absolute-form target, else Host) and must be a valid host name or address: a missing,
 * repeated (RFC 9112 §3.2) or malformed Host gets 400. With `hosts`, only those names are
 * redirected (400 otherwise), so the step never points a client at a host the site does not own.
 */
export function createHttpsRedirect(o: HttpsRedirectOptions): Step {
  const hosts = o.hosts === undefined ? undefined : new Set(o.hosts.map((h) => h.toLowerCase()));
  return (req, res) => {
    let hostLines = 0;
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      if (req.rawHeaders[i]!.toLowerCase() === 'host') hostLines++;
    }
    if (hostLines > 1) {
      sendError(req, res, ERRORS.badRequest, 'The request has more than one Host header.');
      return true;
    }
    const d = httpsRedirect(req.url!, req.headers.host as string | undefined, o.httpsPort);
    if (d.kind === 'bad') {
      sendError(req, res, ERRORS.badRequest, d.reason);
      return true;
    }
    if (hosts !== undefined && !hosts.has(d.hostname)) {
      sendError(req, res, ERRORS.badRequest, 'This server does not answer for that host.');
      return true;
    }
    sendRedirect(res, 308, d.location, undefined);
    return true;
  };
}

/** HTTP -> HTTPS as a feature (core/feature.ts): a gate step that answers every request. */
export function create(options: HttpsRedirectOptions | undefined, _kernel: StepContext): Feature | undefined {
  return options && { gate: createHttpsRedirect(options) };
}
