// What a step reads from the static handler's view of its root (static/files.ts FileView has this
// shape): the resource a request path names, from memory when the view holds it. Declared below the
// features, so the JSONP and canonical-path steps take the view without importing static/; the
// composition root hands them the static handler's.
import type { FileAccess } from './access.js';

/** A file the view holds, as far as a step reads it (static/files.ts FileResource has this shape). */
export interface ViewedFile {
  readonly kind: 'file';
  /** The path under the root. */
  readonly path: string;
  readonly absPath: string;
  /** Media type without parameters, e.g. application/json. */
  readonly mediaType: string;
  readonly lastModifiedMs: number | undefined;
  /** The cache policy of the file (Cache-Control, and the seconds for Expires). */
  readonly policy: { readonly cacheControl: string; readonly expiresSec: number | undefined };
  /** The identity representation: its entity-tag, and its bytes when held in memory. */
  readonly identity: { readonly etag: string; readonly body: Buffer | undefined };
}

/** What a request path names (static/files.ts Resource has this shape). */
export type ViewedResource =
  | ViewedFile
  /** A folder asked for without its slash: the static handler redirects to the slash form. */
  | { readonly kind: 'redirect' }
  | { readonly kind: 'missing' }
  | { readonly kind: 'bad'; readonly reason: string }
  /** A dot segment, Gatehouse's own files, or a path whose real location is outside the root. */
  | { readonly kind: 'hidden' };

/** The static handler's view of its root, as a step uses it. */
export interface FileLookup {
  /** The resource when the view holds it fresh, else undefined (then `get`). */
  peek(rawPath: string): ViewedResource | undefined;
  get(rawPath: string): Promise<ViewedResource>;
  /** Counts `bytes` a step keeps for `file` against the view's memory bound, with the file's entry. */
  charge(rawPath: string, file: ViewedFile, bytes: number): void;
  /** The file access the view reads through. */
  readonly access: FileAccess;
}
