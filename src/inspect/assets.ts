// Which asset URLs the SPA probes request: a made-up hashed asset next to the page's real assets, and
// the same-origin scripts, stylesheets and fonts the page references. Pure: the page's first bytes in,
// URLs out; live.ts sends them and the status checks judge the answers.
import { mediaTypeOf } from './checks/caching.js';
import { field } from './exchange.js';
import type { AssetProbeKind, RecordedResponse } from './types.js';

/** At most this many referenced scripts, stylesheets and fonts are requested. */
export const MAX_REFERENCED_ASSETS = 6;
/** The made-up file name: hashed by the rule of src/http/hashed-name.ts, and never a real build's. */
export const MADE_UP_ASSET = 'index-deadbeef.js';

const TAG = /<(script|link)\b([^>]*)>/gi;

/** An attribute's value in a start tag (quoted or not), or undefined. */
function attribute(attrs: string, name: string): string | undefined {
  const m = new RegExp(`(?:^|\\s)${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s"'>]+))`, 'i').exec(attrs);
  return m === null ? undefined : (m[1] ?? m[2] ?? m[3]);
}

/**
 * What a `<script>` or `<link>` start tag makes the browser load: a script (`src`, `modulepreload`,
 * `preload as=script`), a stylesheet (`stylesheet`, `preload as=style`) or a font (`preload as=font`).
 */
function referenceOf(
  tag: string,
  attrs: string,
): { kind: AssetProbeKind; ref: string | undefined } | undefined {
  if (tag === 'script') return { kind: 'script', ref: attribute(attrs, 'src') };
  const rel = attribute(attrs, 'rel')?.toLowerCase().split(/\s+/) ?? [];
  const href = attribute(attrs, 'href');
  if (rel.includes('stylesheet')) return { kind: 'stylesheet', ref: href };
  if (rel.includes('modulepreload')) return { kind: 'script', ref: href };
  if (!rel.includes('preload')) return undefined;
  const as = attribute(attrs, 'as')?.toLowerCase();
  const kind =
    as === 'script' ? 'script' : as === 'style' ? 'stylesheet' : as === 'font' ? 'font' : undefined;
  return kind === undefined ? undefined : { kind, ref: href };
}

/** The same-origin scripts, stylesheets and fonts in `html`, in document order, without repeats. */
export function referencedAssets(html: string, base: URL): { kind: AssetProbeKind; url: URL }[] {
  const out: { kind: AssetProbeKind; url: URL }[] = [];
  const seen = new Set<string>();
  for (const m of html.matchAll(TAG)) {
    const found = referenceOf(m[1]!.toLowerCase(), m[2] ?? '');
    const ref = found?.ref;
    if (found === undefined || ref === undefined || ref.trim() === '') continue;
    let url: URL;
    try {
      url = new URL(ref.trim(), base);
    } catch {
      continue;
    }
    url.hash = '';
    // Cross-origin assets (a CDN) are another site's business; the user's headers never go there either.
    if (url.origin !== base.origin || seen.has(url.href)) continue;
    seen.add(url.href);
    out.push({ kind: found.kind, url });
  }
  return out;
}

/**
 * The asset probes for a page: none unless the primary answer is 2xx HTML; else the made-up hashed
 * asset in the folder of the page's first referenced asset (else /assets/), then up to
 * MAX_REFERENCED_ASSETS referenced ones.
 */
export function assetTargets(
  page: URL,
  primary: RecordedResponse,
  identity: RecordedResponse | undefined,
): { kind: AssetProbeKind; url: URL }[] {
  const type = mediaTypeOf(primary.headers);
  if (primary.status < 200 || primary.status > 299) return [];
  if (type !== 'text/html' && type !== 'application/xhtml+xml') return [];
  // The references are read from an uncoded body: the identity probe's, else the primary's when uncoded.
  const plain = [identity, primary].find(
    (r) => r !== undefined && r.status === 200 && field(r.headers, 'content-encoding') === undefined,
  );
  const refs = plain === undefined ? [] : referencedAssets(plain.bodySample, page);
  const first = refs[0]?.url;
  const dir = first === undefined ? '/assets/' : first.pathname.slice(0, first.pathname.lastIndexOf('/') + 1);
  const madeUp = new URL(`${dir}${MADE_UP_ASSET}`, page.origin);
  return [{ kind: 'made-up', url: madeUp }, ...refs.slice(0, MAX_REFERENCED_ASSETS)];
}
