// The directory listing page (static.directoryListing): pure, names in, HTML out. Every name is
// HTML-escaped in the text and percent-encoded in its link (a file may be called `<img onerror=...>`
// or `a"b`); links are relative, so the page works under any mount.
import { escapeHtml } from '../../http/problem.js';

export interface ListingEntry {
  readonly name: string;
  readonly folder: boolean;
}

/** At most this many entries are listed; the page says how many more there are. */
export const MAX_LISTED = 5000;

/** Folders first, then files, each by code point (the same order on every machine). */
function order(a: ListingEntry, b: ListingEntry): number {
  if (a.folder !== b.folder) return a.folder ? -1 : 1;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** The page for the folder at URL path `dirPath` (ending in `/`). */
export function renderListing(dirPath: string, entries: readonly ListingEntry[], more = 0): string {
  const title = `Index of ${escapeHtml(dirPath)}`;
  const rows = [...entries].sort(order).map((e) => {
    const href = encodeURIComponent(e.name) + (e.folder ? '/' : '');
    const text = escapeHtml(e.name) + (e.folder ? '/' : '');
    return `<li><a href="./${href}">${text}</a></li>`;
  });
  if (dirPath !== '/') rows.unshift('<li><a href="../">../</a></li>');
  const tail = more > 0 ? `<p>${more} more not listed.</p>` : '';
  return (
    `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title>` +
    '<meta name="viewport" content="width=device-width"></head>' +
    `<body><h1>${title}</h1><ul>${rows.join('')}</ul>${tail}</body></html>\n`
  );
}
