// 103 Early Hints (RFC 8297): which assets an HTML page references that are worth a preload, and to
// which requests a 103 may go. A tolerant HTML tokenizer over the first bytes of the page (comments,
// raw-text elements, attributes in any quoting and case), not a regex over the document. Pure: no I/O.
import { MIN_VERSION_CHARS, queryParam } from './asset-version.js';
import { isHashedName } from './hashed-name.js';

/** Bytes of a page scanned for hints: the head of a document, where its assets are named. */
export const EARLY_HINTS_SCAN_BYTES = 64 * 1024;
/** Default cap on the hints of one page. */
export const EARLY_HINTS_MAX = 16;

export type HintDestination = 'style' | 'script' | 'font' | 'image';

/** One asset worth a preload, resolved against the page and escaped for a Link field. */
export interface HintCandidate {
  /** Root-relative URL (path and query), safe inside `<...>` of a Link field value. */
  readonly url: string;
  /** The path part of `url`: what the static handler would look up. */
  readonly path: string;
  readonly rel: 'preload' | 'modulepreload';
  /** Fetch destination of a preload (`as`); undefined for modulepreload. */
  readonly as: HintDestination | undefined;
  /** CORS mode of the later fetch; a preload must match it or it is wasted. */
  readonly crossorigin: 'anonymous' | 'use-credentials' | undefined;
  /** hashed: the file name carries a hash; version: its `?v=` (value below) must still be verified. */
  readonly proof: 'hashed' | 'version';
  readonly version: string | undefined;
  /** Resolved against the page's directory: valid only when the page is served from that directory. */
  readonly relative: boolean;
}

export interface ScanOptions {
  /** The page's URL directory, escaped, starting and ending with `/` (`/docs/`). */
  readonly baseDir: string;
  /** Query parameter of verified cache busting (static.versionParam). */
  readonly versionParam: string;
  readonly max?: number;
  readonly scanBytes?: number;
}

/** Elements whose content is text, not markup (HTML §13.2.5.1 RAWTEXT/RCDATA/script data), or inert. */
const RAW_TEXT = new Set([
  'script',
  'style',
  'textarea',
  'title',
  'xmp',
  'iframe',
  'noembed',
  'noframes',
  'noscript',
  'template',
  'plaintext',
]);
const PRELOAD_AS = new Set<string>(['style', 'script', 'font', 'image']);
/** Classic script types (HTML §4.12.1: empty or a JavaScript MIME type essence). */
const JS_TYPE = /^(?:(?:text|application)\/(?:x-)?(?:java|ecma)script|text\/jscript|text\/livescript)$/;

function isSpace(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 12 || c === 13;
}

function isAlpha(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

export interface HtmlStartTag {
  readonly name: string;
  readonly attrs: Map<string, string>;
  /** Index just after the tag's `>`. */
  readonly end: number;
}

/** A start tag at `i` (just after `<`), or undefined when the document ends inside it. */
function readTag(s: string, i: number): HtmlStartTag | undefined {
  const n = s.length;
  let j = i;
  while (j < n && !isSpace(s.charCodeAt(j)) && s[j] !== '/' && s[j] !== '>') j++;
  const name = s.slice(i, j).toLowerCase();
  const attrs = new Map<string, string>();
  for (;;) {
    while (j < n && (isSpace(s.charCodeAt(j)) || s[j] === '/')) j++;
    if (j >= n) return undefined;
    if (s[j] === '>') return { name, attrs, end: j + 1 };
    const a = j++; // HTML §13.2.5.32: a leading `=` belongs to the name
    while (j < n && !isSpace(s.charCodeAt(j)) && s[j] !== '/' && s[j] !== '>' && s[j] !== '=') j++;
    const attr = s.slice(a, j).toLowerCase();
    while (j < n && isSpace(s.charCodeAt(j))) j++;
    let value = '';
    if (s[j] === '=') {
      j++;
      while (j < n && isSpace(s.charCodeAt(j))) j++;
      const q = s[j];
      if (q === '"' || q === "'") {
        const close = s.indexOf(q, j + 1);
        if (close === -1) return undefined;
        value = s.slice(j + 1, close);
        j = close + 1;
      } else {
        const v = j;
        while (j < n && !isSpace(s.charCodeAt(j)) && s[j] !== '>') j++;
        value = s.slice(v, j);
      }
    }
    // HTML §13.2.5.33: a repeated attribute is dropped; the first one counts.
    if (!attrs.has(attr)) attrs.set(attr, decodeEntities(value));
  }
}

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/**
 * The character references an attribute value holds in practice (`&amp;` in a query above all), read
 * as a browser reads them (HTML §13.2.5.73): a named one without its `;` is decoded only when it is
 * a legacy name (amp, lt, gt, quot) and the next character is not `=` or alphanumeric, so
 * `?a=1&ampb=2` keeps `&ampb`.
 */
function decodeEntities(v: string): string {
  if (!v.includes('&')) return v;
  return v.replace(
    /&(?:#[xX]([0-9a-fA-F]{1,6})|#([0-9]{1,7})|(amp|lt|gt|quot|apos))(;?)/g,
    (m, hex, dec, name, semi, offset: number) => {
      if (name !== undefined) {
        if (semi === '') {
          const next = v.charAt(offset + m.length);
          if (name === 'apos' || /[=A-Za-z0-9]/.test(next)) return m;
        }
        return NAMED[name as string] ?? m;
      }
      const cp = hex !== undefined ? Number.parseInt(hex as string, 16) : Number(dec);
      // Zero, surrogates and beyond U+10FFFF become U+FFFD (HTML §13.2.5.80).
      return cp === 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)
        ? '\ufffd'
        : String.fromCodePoint(cp);
    },
  );
}

/** Index after the end tag `</name` of a raw-text element opened before `from` (or the end). */
function skipRawText(s: string, lower: string, name: string, from: number): number {
  if (name === 'plaintext') return s.length;
  let at = from;
  for (;;) {
    const k = lower.indexOf(`</${name}`, at);
    if (k === -1) return s.length;
    const after = k + 2 + name.length;
    const c = s.charCodeAt(after);
    if (after >= s.length || isSpace(c) || c === 47 /* / */ || c === 62 /* > */) {
      const gt = s.indexOf('>', after);
      return gt === -1 ? s.length : gt + 1;
    }
    at = after;
  }
}

/** Calls `onTag` for every start tag of the document, skipping comments, end tags and raw text. */
export function forEachStartTag(s: string, onTag: (tag: HtmlStartTag) => boolean | undefined): void {
  const lower = s.toLowerCase();
  const n = s.length;
  let i = 0;
  while (i < n) {
    const lt = s.indexOf('<', i);
    if (lt === -1 || lt + 1 >= n) return;
    const c = s.charCodeAt(lt + 1);
    if (s.startsWith('!--', lt + 1)) {
      // HTML §13.2.5.43: `<!-->` and `<!--->` close at once.
      const close = s.indexOf('-->', lt + 4);
      const closeAbrupt = s.startsWith('>', lt + 4) ? lt + 5 : s.startsWith('->', lt + 4) ? lt + 6 : -1;
      i = closeAbrupt !== -1 ? closeAbrupt : close === -1 ? n : close + 3;
    } else if (c === 33 /* ! */ || c === 63 /* ? */ || (c === 47 /* / */ && !isAlpha(s.charCodeAt(lt + 2)))) {
      // Doctype and bogus comments end at the first `>`.
      const gt = s.indexOf('>', lt + 2);
      i = gt === -1 ? n : gt + 1;
    } else if (c === 47 /* / */) {
      // An end tag: its attributes (if any) are read and dropped, quotes included.
      const tag = readTag(s, lt + 2);
      i = tag === undefined ? n : tag.end;
    } else if (isAlpha(c)) {
      const tag = readTag(s, lt + 1);
      if (tag === undefined) return;
      if (onTag(tag) === false) return;
      i = RAW_TEXT.has(tag.name) ? skipRawText(s, lower, tag.name, tag.end) : tag.end;
    } else i = lt + 1;
  }
}

/** A URL attribute value stripped as the URL parser strips it (WHATWG URL: C0/space ends, tab/LF/CR inside). */
function cleanUrl(v: string): string {
  return v.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '').replace(/[\t\n\r]/g, '');
}

/** Dot segments removed (RFC 3986 §5.2.4), `%2e` read as a dot as the WHATWG URL parser does. */
function removeDotSegments(path: string): string {
  const out: string[] = [];
  const segs = path.split('/');
  for (let k = 1; k < segs.length; k++) {
    const seg = segs[k]!;
    const low = seg.toLowerCase();
    const last = k === segs.length - 1;
    if (low === '.' || low === '%2e') {
      if (last) out.push('');
    } else if (low === '..' || low === '.%2e' || low === '%2e.' || low === '%2e%2e') {
      out.pop();
      if (last) out.push('');
    } else out.push(seg);
  }
  return `/${out.join('/')}`;
}

const HEX = '0123456789ABCDEF';
const UTF8 = new TextEncoder();
/** What may stay as is inside `<...>` of a Link field: RFC 3986 characters minus `;` and `,`. */
const KEEP = /[A-Za-z0-9\-._~!$&'()*+=:@/?]/;

/**
 * Percent-encodes what could break a Link field value or its parser: `<`, `>`, `;`, `,`, quotes,
 * spaces, controls, non-ASCII (UTF-8, RFC 3986 §2.1), and a `%` not starting an escape.
 */
export function escapeLinkUrl(u: string): string {
  let out = '';
  for (let k = 0; k < u.length; k++) {
    const ch = u[k]!;
    if (KEEP.test(ch)) out += ch;
    else if (ch === '%' && /^[0-9A-Fa-f]{2}$/.test(u.slice(k + 1, k + 3))) out += ch;
    else {
      const cp = u.codePointAt(k)!;
      // A lone surrogate is not UTF-8-encodable; U+FFFD as the URL parser writes it.
      const isLone = cp >= 0xd800 && cp <= 0xdfff;
      const bytes = UTF8.encode(isLone ? '\ufffd' : String.fromCodePoint(cp));
      if (cp > 0xffff) k++;
      for (const b of bytes) out += `%${HEX[b >> 4]}${HEX[b & 15]}`;
    }
  }
  return out;
}

/** Same-origin relative or root-relative only: a scheme, `//` or a backslash could leave the origin. */
function localUrl(raw: string): string | undefined {
  const u = cleanUrl(raw);
  if (u === '' || u.includes('\\') || u.startsWith('//')) return undefined;
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(u)) return undefined; // https:, javascript:, data:, ...
  const hash = u.indexOf('#');
  return hash === -1 ? u : u.slice(0, hash);
}

interface Found {
  readonly href: string;
  readonly rel: 'preload' | 'modulepreload';
  readonly as: HintDestination | undefined;
  readonly crossorigin: HintCandidate['crossorigin'];
}

/** HTML §2.5.4 CORS settings attribute: absent -> none, `use-credentials`, anything else anonymous. */
function corsMode(v: string | undefined): HintCandidate['crossorigin'] {
  if (v === undefined) return undefined;
  return v.trim().toLowerCase() === 'use-credentials' ? 'use-credentials' : 'anonymous';
}

/** What one start tag asks the browser to fetch early, if anything. */
function fromTag(t: HtmlStartTag): Found | undefined {
  const href = t.name === 'script' ? t.attrs.get('src') : t.name === 'link' ? t.attrs.get('href') : undefined;
  if (href === undefined) return undefined;
  const cors = corsMode(t.attrs.get('crossorigin'));
  if (t.name === 'script') {
    if (t.attrs.has('nomodule')) return undefined; // never run by browsers that read 103
    const type = (t.attrs.get('type') ?? '').trim().toLowerCase();
    if (type === 'module') return { href, rel: 'modulepreload', as: undefined, crossorigin: cors };
    if (type !== '' && !JS_TYPE.test(type)) return undefined; // importmap, templates, JSON, ...
    return { href, rel: 'preload', as: 'script', crossorigin: cors };
  }
  const rels = (t.attrs.get('rel') ?? '').toLowerCase().split(/[\t\n\f\r ]+/);
  if (rels.includes('modulepreload')) return { href, rel: 'modulepreload', as: undefined, crossorigin: cors };
  if (rels.includes('stylesheet')) {
    // Alternate and disabled sheets are not fetched at once; a print sheet is low priority.
    if (rels.includes('alternate') || t.attrs.has('disabled')) return undefined;
    const media = t.attrs.get('media')?.trim().toLowerCase();
    if (media !== undefined && media !== '' && media !== 'all' && media !== 'screen') return undefined;
    return { href, rel: 'preload', as: 'style', crossorigin: cors };
  }
  if (rels.includes('preload')) {
    const as = (t.attrs.get('as') ?? '').trim().toLowerCase();
    if (!PRELOAD_AS.has(as)) return undefined;
    // A responsive image picks its URL from the viewport; the href alone may be the wrong one.
    if (as === 'image' && t.attrs.has('imagesrcset')) return undefined;
    // Fonts are always fetched in CORS mode (CSS Fonts §4.9); a preload without it is wasted.
    const mode = as === 'font' ? (cors ?? 'anonymous') : cors;
    return { href, rel: 'preload', as: as as HintDestination, crossorigin: mode };
  }
  return undefined;
}

/** The page's base: its directory, or a root-relative `<base href>`; undefined when a base leaves the origin. */
function pageBase(baseHref: string | undefined, dir: string): string | undefined {
  if (baseHref === undefined) return dir;
  const u = localUrl(baseHref);
  if (u === undefined || !u.startsWith('/')) return undefined;
  const q = u.indexOf('?');
  const p = removeDotSegments(escapeLinkUrl(q === -1 ? u : u.slice(0, q)));
  return p.slice(0, p.lastIndexOf('/') + 1);
}

/**
 * The preloadable hashed assets `html` references, in document order, deduplicated and capped at
 * `max`. Only same-origin URLs whose file name is hashed, or whose `?v=` awaits verification.
 */
export function scanEarlyHints(html: string | Uint8Array, o: ScanOptions): HintCandidate[] {
  const scanBytes = o.scanBytes ?? EARLY_HINTS_SCAN_BYTES;
  const max = o.max ?? EARLY_HINTS_MAX;
  const s =
    typeof html === 'string'
      ? html.slice(0, scanBytes)
      : new TextDecoder('utf-8').decode(html.subarray(0, scanBytes));
  const found: Found[] = [];
  let baseHref: string | undefined;
  forEachStartTag(s, (t) => {
    // HTML §4.2.3: the first base element with an href sets the document's base URL.
    if (t.name === 'base' && baseHref === undefined && t.attrs.has('href')) baseHref = t.attrs.get('href');
    const f = fromTag(t);
    if (f !== undefined) found.push(f);
    return found.length < 64 * max; // enough to fill the cap even after dedupe
  });
  const base = pageBase(baseHref, o.baseDir);
  if (base === undefined) return [];
  const out: HintCandidate[] = [];
  const seen = new Set<string>();
  for (const f of found) {
    if (out.length >= max) break;
    const c = candidate(f, base, baseHref === undefined, o.versionParam);
    if (c === undefined || seen.has(c.url)) continue;
    seen.add(c.url);
    out.push(c);
  }
  return out;
}

function candidate(
  f: Found,
  base: string,
  dependsOnPage: boolean,
  versionParam: string,
): HintCandidate | undefined {
  const u = localUrl(f.href);
  // A `%` that starts no escape: the browser sends it raw, which no Link value can say exactly.
  if (u === undefined || /%(?![0-9A-Fa-f]{2})/.test(u)) return undefined;
  const q = u.indexOf('?');
  const rawPath = q === -1 ? u : u.slice(0, q);
  const relative = !rawPath.startsWith('/');
  if (relative && rawPath === '') return undefined; // `?x` alone names the page itself
  const path = removeDotSegments(escapeLinkUrl(relative ? base + rawPath : rawPath));
  // `/d/..//host/x` is the same-origin path `//host/x`, but as a Link target it names another host
  // (RFC 3986 §4.2, a network-path reference): never hinted.
  if (path.startsWith('//')) return undefined;
  const query = q === -1 ? '' : escapeLinkUrl(u.slice(q + 1));
  const url = q === -1 ? path : `${path}?${query}`;
  const v = queryParam(url, versionParam);
  const hashed = isHashedName(path);
  if (!hashed && !(v.kind === 'one' && v.value.length >= MIN_VERSION_CHARS)) return undefined;
  return {
    url,
    path,
    rel: f.rel,
    as: f.as,
    crossorigin: f.crossorigin,
    proof: hashed ? 'hashed' : 'version',
    version: !hashed && v.kind === 'one' ? v.value : undefined,
    relative: relative && dependsOnPage,
  };
}

/** The Link field value of one hint (RFC 8288 §3): `</a-1234abcd.css>; rel=preload; as=style`. */
export function formatHintLink(c: HintCandidate): string {
  let v = `<${c.url}>; rel=${c.rel}`;
  if (c.as !== undefined) v += `; as=${c.as}`;
  if (c.crossorigin === 'anonymous') v += '; crossorigin';
  else if (c.crossorigin === 'use-credentials') v += '; crossorigin=use-credentials';
  return v;
}

export interface EarlyHintsRequest {
  readonly httpVersionMajor: number;
  readonly httpVersionMinor: number;
  readonly method: string;
  /** The status the response will have: a 103 precedes only a full 200. */
  readonly status: number;
  readonly secFetchMode: string | undefined;
  readonly secFetchDest: string | undefined;
  readonly expect: string | undefined;
}

export type EarlyHintsDecision =
  | { readonly kind: 'send' }
  | { readonly kind: 'skip'; readonly reason: 'method' | 'status' | 'http/1.0' | 'no 1xx signal' };

const SEND: EarlyHintsDecision = { kind: 'send' };

/**
 * Whether a 103 may precede this response. HTTP/2 clients handle interim responses by design
 * (RFC 9113 §8.1); HTTP/1.0 clients never get one (RFC 9110 §15.2). An HTTP/1.1 client gets one only
 * when it shows it reads 1xx: a browser navigation (`Sec-Fetch-Mode: navigate` or
 * `Sec-Fetch-Dest: document`: every browser that sends Fetch Metadata parses 1xx) or `Expect:
 * 100-continue` (it waits for a 1xx). A plain script client may treat a 103 as the final response.
 */
export function earlyHintsEligible(r: EarlyHintsRequest): EarlyHintsDecision {
  // HEAD gains nothing from preloads; 304/412/206 are not the page the hints describe.
  if (r.method !== 'GET') return { kind: 'skip', reason: 'method' };
  if (r.status !== 200) return { kind: 'skip', reason: 'status' };
  if (r.httpVersionMajor >= 2) return SEND;
  if (r.httpVersionMajor < 1 || (r.httpVersionMajor === 1 && r.httpVersionMinor < 1)) {
    return { kind: 'skip', reason: 'http/1.0' };
  }
  if (r.secFetchMode?.trim().toLowerCase() === 'navigate') return SEND;
  if (r.secFetchDest?.trim().toLowerCase() === 'document') return SEND;
  if (r.expect !== undefined && /(?:^|,)\s*100-continue\s*(?:$|,)/i.test(r.expect)) return SEND;
  return { kind: 'skip', reason: 'no 1xx signal' };
}
