// Problem details (RFC 9457) and HTML escaping for error pages.

/** RFC 9457 §3.1 members; extension members (§3.2) ride along. */
export interface ProblemDetails {
  /** A URI reference naming the problem type; `about:blank` when absent (§3.1.1, §4.2.1). */
  type?: string;
  /** Short, human-readable summary of the problem type (§3.1.3). */
  title: string;
  /** The HTTP status code (§3.1.2). */
  status: number;
  /** Explanation specific to this occurrence (§3.1.4). */
  detail?: string;
  /** A URI reference for this occurrence (§3.1.5). */
  instance?: string;
  [extension: string]: unknown;
}

/** Characters escaped beyond what JSON requires, so the text is inert if a client sniffs it as HTML. */
const JSON_UNSAFE = /[<>&\u2028\u2029]/g;

function escapeJsonChar(ch: string): string {
  return '\\u' + ch.charCodeAt(0).toString(16).padStart(4, '0');
}

/**
 * The body of an `application/problem+json` response (RFC 9457 §3). Members come in a stable order:
 * type, title, status, detail, instance, then extensions; undefined members are left out.
 * `<`, `>`, `&`, U+2028 and U+2029 are written as \u escapes (still the same JSON value).
 * Never throws: extensions JSON cannot carry (a BigInt, a cycle) are dropped.
 */
export function problemJson(p: ProblemDetails): string {
  const { type, title, status, detail, instance, ...extensions } = p;
  const core = { type: type ?? 'about:blank', title, status, detail, instance };
  let text: string;
  try {
    text = JSON.stringify({ ...core, ...extensions });
  } catch {
    text = JSON.stringify(core);
  }
  return text.replace(JSON_UNSAFE, escapeJsonChar);
}

/** Escapes `& < > " '` for HTML text and attribute values. Returns `s` itself when nothing needs escaping. */
export function escapeHtml(s: string): string {
  const len = s.length;
  let out = '';
  let segStart = 0;
  for (let i = 0; i < len; i++) {
    let rep: string;
    switch (s.charCodeAt(i)) {
      case 0x26:
        rep = '&amp;';
        break;
      case 0x3c:
        rep = '&lt;';
        break;
      case 0x3e:
        rep = '&gt;';
        break;
      case 0x22:
        rep = '&quot;';
        break;
      case 0x27:
        rep = '&#39;';
        break;
      default:
        continue;
    }
    out += s.slice(segStart, i) + rep;
    segStart = i + 1;
  }
  return segStart === 0 ? s : out + s.slice(segStart);
}
