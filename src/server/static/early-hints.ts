// 103 Early Hints for HTML pages (RFC 8297): the hints of a file version are computed once (scan of
// the first 64 KB, `?v=` verified against the file view) and kept beside that FileResource, so they
// change exactly when the view replaces it (new ETag). Per request: the eligibility decision and a
// lookup. The pure parts live in http/early-hints.ts.
import { versionMatches } from '../../http/asset-version.js';
import {
  EARLY_HINTS_SCAN_BYTES,
  earlyHintsEligible,
  escapeLinkUrl,
  formatHintLink,
  type HintCandidate,
  scanEarlyHints,
} from '../../http/early-hints.js';
import { targetPath } from '../../http/request-path.js';
import type { ExchangeRequest, ResponseSink } from '../core/exchange.js';
import type { FileResource, FileView, StaticOptions } from './files.js';

/** The Link values of one page version. */
interface PageHints {
  /** The page's URL directory the relative hints were resolved against. */
  readonly dir: string;
  /** Every hint: for a request whose path is in `dir`. */
  readonly all: readonly string[];
  /** Hints that do not depend on the request path (SPA fallback served at another path). */
  readonly rootOnly: readonly string[];
}

const NONE: PageHints = { dir: '/', all: [], rootOnly: [] };

/** Heap of one PageHints besides its strings (object, two arrays, the WeakMap slot), rounded up. */
const HINTS_BYTES = 256;

/** What a page's hints hold, counted against static.memoryCacheBytes with the page's entry. */
function hintsBytes(h: PageHints): number {
  let chars = h.dir.length;
  for (const v of h.all) chars += v.length;
  // rootOnly holds other strings made by the same formatHintLink calls.
  for (const v of h.rootOnly) chars += v.length;
  return HINTS_BYTES + 2 * chars;
}

export interface EarlyHints {
  /**
   * A promise while this page's hints are being computed for a request that may get them. `rawPath`:
   * the file view's key of `file`, which the hints are counted against (FileView.charge).
   */
  wait(req: ExchangeRequest, file: FileResource, rawPath: string): Promise<unknown> | undefined;
  /** Writes the 103 before a full 200 of an HTML page, when the request can use it. */
  send(req: ExchangeRequest, res: ResponseSink, file: FileResource): void;
}

function isHtml(file: FileResource): boolean {
  return file.mediaType === 'text/html';
}

/** The escaped URL directory of a file path the view resolved (`/docs/index.html` -> `/docs/`). */
function urlDir(path: string): string {
  const dir = path.slice(0, path.lastIndexOf('/') + 1);
  return escapeLinkUrl(dir.replaceAll('%', '%25'));
}

async function headBytes(files: FileView, file: FileResource): Promise<Uint8Array> {
  const body = file.identity.body;
  if (body !== undefined) return body.subarray(0, EARLY_HINTS_SCAN_BYTES);
  const fh = await files.access.open(file.absPath);
  try {
    const buf = Buffer.alloc(Math.min(EARLY_HINTS_SCAN_BYTES, file.identity.size));
    const bytesRead = await fh.read(buf, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

/** A `?v=` hint survives only when its value is a prefix of the target file's content hash. */
async function verified(files: FileView, c: HintCandidate): Promise<boolean> {
  if (c.proof === 'hashed') return true;
  const r = await files.get(c.path);
  return r.kind === 'file' && r.contentHash !== undefined && versionMatches(c.version ?? '', r.contentHash);
}

async function compute(files: FileView, opts: StaticOptions, file: FileResource): Promise<PageHints> {
  const dir = urlDir(file.path);
  const found = scanEarlyHints(await headBytes(files, file), {
    baseDir: dir,
    versionParam: opts.versionParam,
    max: opts.earlyHints.max,
  });
  const ok = await Promise.all(found.map((c) => verified(files, c).catch(() => false)));
  const kept = found.filter((_, k) => ok[k]);
  return {
    dir,
    all: kept.map(formatHintLink),
    rootOnly: kept.filter((c) => !c.relative).map(formatHintLink),
  };
}

/** The early-hints hook of the static handler; undefined when static.earlyHints is off. */
export function createEarlyHints(
  files: FileView,
  opts: StaticOptions,
  onError: (err: unknown, req: ExchangeRequest) => void,
): EarlyHints | undefined {
  if (!opts.earlyHints.enabled || opts.earlyHints.max === 0) return undefined;
  // Keyed by the resource object: a changed file is a new FileResource, so stale hints just fall away.
  const pages = new WeakMap<FileResource, PageHints | Promise<PageHints>>();

  const decide = (req: ExchangeRequest) =>
    earlyHintsEligible({
      httpVersionMajor: req.httpVersionMajor,
      httpVersionMinor: req.httpVersionMinor,
      method: req.method!,
      status: 200,
      secFetchMode: req.headers['sec-fetch-mode'] as string | undefined,
      secFetchDest: req.headers['sec-fetch-dest'] as string | undefined,
      expect: req.headers.expect as string | undefined,
    }).kind === 'send';

  return {
    wait(req, file, rawPath) {
      if (!isHtml(file)) return undefined;
      const known = pages.get(file);
      if ((known !== undefined && !(known instanceof Promise)) || !decide(req)) return undefined;
      if (known !== undefined) return known;
      const p = compute(files, opts, file).then(
        (h) => {
          pages.set(file, h);
          files.charge(rawPath, file, hintsBytes(h));
          return h;
        },
        (err) => {
          onError(err, req);
          pages.set(file, NONE);
          return NONE;
        },
      );
      pages.set(file, p);
      return p;
    },
    send(req, res, file) {
      if (!isHtml(file)) return;
      const h = pages.get(file);
      if (h === undefined || h instanceof Promise || h.all.length === 0 || !decide(req)) return;
      // Relative hints hold only for a request in the page's own directory (not an SPA fallback).
      const path = targetPath(req.url!) ?? '';
      const inDir = path.startsWith(h.dir) && path.indexOf('/', h.dir.length) === -1;
      const link = inDir ? h.all : h.rootOnly;
      // A transport that cannot send a 103 has no writeEarlyHints: the 200 alone goes out.
      if (link.length > 0) res.writeEarlyHints?.({ link: link as string[] });
    },
  };
}
