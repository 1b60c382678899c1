// What a method other than GET and HEAD gets from the static files, by what its path resolved to.
// The files answer GET, HEAD and OPTIONS (RFC 9110 §9.3); a mounted handler passes other methods on to
// the app (serve-static's rule), but never a path the files refuse.
import type { Resource } from './files.js';

export type OtherMethodAnswer =
  /** The files' own refusal, as for GET: 400 for a bad target, 404 for a hidden path. */
  | 'refuse'
  /** 405 with Allow (204 with Allow for OPTIONS). */
  | 'not-allowed'
  /** To the app's next middleware when mounted, else as 'not-allowed'. */
  | 'pass-on';

/**
 * `passOnFiles`: whether a path where something is on disk may be passed on (false when what comes
 * next is a static server of the same folder, which would serve the file to any method).
 */
export function otherMethodAnswer(r: Resource, passOnFiles: boolean): OtherMethodAnswer {
  switch (r.kind) {
    case 'bad':
    case 'hidden':
      return 'refuse';
    case 'missing':
      return r.onDisk && !passOnFiles ? 'not-allowed' : 'pass-on';
    case 'file':
    case 'redirect':
      return passOnFiles ? 'pass-on' : 'not-allowed';
  }
}
