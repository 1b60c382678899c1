// Media types for files, and which of them are worth compressing.
import { lookup } from 'mrmime';

export interface MediaInfo {
  /** type/subtype, lowercase, no parameters */
  readonly mediaType: string;
  /** the full Content-Type field value */
  readonly contentType: string;
  readonly compressible: boolean;
}

const TEXTUAL = new Set([
  'application/javascript',
  'application/json',
  'application/manifest+json',
  'application/ld+json',
  'application/xml',
  'application/xhtml+xml',
  'application/rss+xml',
  'application/atom+xml',
  'image/svg+xml',
]);

// Already-compressed fonts (woff, woff2) and images are left alone; ttf/otf/eot and wasm compress well.
const COMPRESSIBLE_BINARY = new Set([
  'application/wasm',
  'font/ttf',
  'font/otf',
  'application/vnd.ms-fontobject',
]);

export function mediaInfo(path: string): MediaInfo {
  const dot = path.lastIndexOf('.');
  const slash = path.lastIndexOf('/');
  const ext = dot > slash ? path.slice(dot + 1).toLowerCase() : '';
  const mediaType = (ext && lookup(ext)) || 'application/octet-stream';
  const textual = mediaType.startsWith('text/') || TEXTUAL.has(mediaType);
  return {
    mediaType,
    contentType: textual ? `${mediaType}; charset=utf-8` : mediaType,
    compressible: textual || COMPRESSIBLE_BINARY.has(mediaType),
  };
}
