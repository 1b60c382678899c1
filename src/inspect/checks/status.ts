// Status and assets: the final URL's status (5xx an error, 4xx a warning), and the SPA
// fallback mistake: a script, stylesheet or hashed asset URL answered 200 text/html (a `try_files`
// fallback to index.html), which breaks every tab still running the previous deploy.
import { isHashedName } from '../../http/hashed-name.js';
import { evidenceOf, field } from '../exchange.js';
import type { AssetProbe, Finding, RecordedResponse, Recording, Severity } from '../types.js';
import { mediaTypeOf, quoteValue } from './caching.js';

function finding(id: string, severity: Severity, message: string, evidence: string, rfc: string): Finding {
  return { id: `status.${id}`, area: 'status', severity, message, evidence, rfc };
}

const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);

/** A path a browser loads as a script or stylesheet, or a content-hashed file name. */
export function looksLikeAsset(path: string): boolean {
  return isHashedName(path) || /\.(?:m?js|css)$/i.test(path);
}

function pathOf(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return '';
  }
}

/** RFC 9110 §15.5, §15.6: the final URL answered 4xx or 5xx. */
function finalStatus(r: RecordedResponse): Finding[] {
  const ev = `status ${r.status}`;
  if (r.status >= 500) {
    const msg = `the URL answers ${r.status}: the site (or the upstream behind a proxy) is failing`;
    return [finding('server-error', 'error', msg, ev, 'RFC 9110 §15.6')];
  }
  if (r.status === 404) {
    const via = field(r.headers, 'via');
    if (via !== undefined) {
      const msg = viaGatehouse(via)
        ? "the URL answers 404 from the upstream behind Gatehouse's proxy: the proxy strips its prefix by" +
          ' default (/api/x reaches the upstream as /x); if the upstream expects the prefix, set' +
          ' "stripPrefix": false on the route (gatehouse serve prints each mapping at start)'
        : `the URL answers 404 through a proxy: check whether the proxy keeps or strips the path's prefix`;
      return [finding('client-error', 'warning', msg, `${ev}; via: ${via}`, 'RFC 9110 §7.6.3, §15.5.5')];
    }
  }
  if (r.status >= 400) {
    const msg = `the URL answers ${r.status}, not a success: check the path and the server's routes`;
    return [finding('client-error', 'warning', msg, ev, 'RFC 9110 §15.5')];
  }
  return [];
}

/** The pseudonym Gatehouse's proxy puts in Via (server/proxy/state.ts VIA_NAME). */
const GATEHOUSE_VIA = 'gatehouse';

/** RFC 9110 §7.6.3: Via lists `protocol received-by [comment]` per hop. */
function viaGatehouse(via: string): boolean {
  return via.split(',').some((hop) => hop.trim().split(/\s+/)[1]?.toLowerCase() === GATEHOUSE_VIA);
}

/** A 2xx text/html answer where a script, stylesheet or hashed asset was asked for. */
function htmlForAsset(r: RecordedResponse | undefined): boolean {
  return r !== undefined && r.status >= 200 && r.status < 300 && HTML_TYPES.has(mediaTypeOf(r.headers));
}

const WHAT: Readonly<Record<AssetProbe['kind'], string>> = {
  'made-up': 'a made-up hashed asset URL (it should be 404)',
  script: 'a script the page references',
  stylesheet: 'a stylesheet the page references',
  font: 'a font the page preloads',
};

const FALLBACK_FIX =
  'a fallback to index.html answers asset URLs, so a tab from the previous deploy gets HTML for its old' +
  ' chunks and breaks: answer 404 for missing files under the asset paths (fallback only for page routes)';

function assetFallbacks(rec: Recording): Finding[] {
  const out: Finding[] = [];
  const primary = rec.probes.primary?.response;
  const primaryPath = pathOf(rec.finalUrl);
  if (looksLikeAsset(primaryPath) && htmlForAsset(primary)) {
    out.push(
      finding(
        'asset-html-fallback',
        'error',
        `${quoteValue(primaryPath)} looks like an asset but answered ${primary!.status} text/html: ${FALLBACK_FIX}`,
        `GET ${quoteValue(primaryPath)} -> ${primary!.status}; ${evidenceOf(primary!.headers, 'content-type')}`,
        'RFC 9110 §8.3',
      ),
    );
  }
  for (const a of rec.assets ?? []) {
    const r = a.exchange.response;
    if (!htmlForAsset(r)) continue;
    const path = quoteValue(pathOf(a.exchange.request.url));
    out.push(
      finding(
        'asset-html-fallback',
        'error',
        `${path}, ${WHAT[a.kind]}, answered ${r!.status} text/html: ${FALLBACK_FIX}`,
        `GET ${path} -> ${r!.status}; ${evidenceOf(r!.headers, 'content-type')}`,
        'RFC 9110 §8.3',
      ),
    );
  }
  return out;
}

export function checkStatus(rec: Recording): Finding[] {
  const primary = rec.probes.primary?.response;
  if (primary === undefined) return [];
  return [...finalStatus(primary), ...assetFallbacks(rec)];
}
