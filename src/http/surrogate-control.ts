// Surrogate-Control (W3C Edge Architecture Specification 1.0, §2.2; targeting §2.3).
//   Surrogate-Control = 1#( control-directive [ ";" device-token ] )
//   control-directive = "no-store" | "no-store-remote" | "max-age" "=" delta-seconds [ "+" delta-seconds ]
//                     | "content" "=" <"> 1#capability <"> | extension-directive
import { parseDeltaSeconds } from './cache-control.js';
import {
  COMMA,
  DQUOTE,
  EQUALS,
  isOws,
  isTchar,
  nextComma,
  SEMI,
  skipOws,
  skipQuoted,
  trimOwsEnd,
} from './chars.js';
import { isToken, unquote } from './lists.js';

/** One Surrogate-Control member. */
export interface SurrogateDirective {
  /** Lowercase name: like Cache-Control directives, names are case-insensitive. */
  readonly name: string;
  /** The argument as written (a quoted-string keeps its quotes), or true when there is none. */
  readonly raw: string | true;
  /** The argument with a quoted-string unquoted, or true when there is none. */
  readonly value: string | true;
  /** The device token after ";" as written, or null: the directive applies to every surrogate (§2.3). */
  readonly target: string | null;
}

/**
 * Parses Surrogate-Control (Edge Architecture §2.2, §2.3): `name[=token|quoted-string][;device-token]`,
 * comma-separated. OWS may surround ";" but not "=" (as in parseCacheControl). Malformed members (no
 * name, a bad argument, an empty or second device token, trailing junk) are skipped; the others are
 * returned in order, duplicates included. Never throws.
 */
export function parseSurrogateControl(value: string): SurrogateDirective[] {
  const out: SurrogateDirective[] = [];
  const len = value.length;
  let i = 0;
  while (i < len) {
    const c = value.charCodeAt(i);
    if (c === COMMA || isOws(c)) {
      i++;
      continue;
    }
    const nameStart = i;
    while (i < len && isTchar(value.charCodeAt(i))) i++;
    const nameEnd = i;
    let ok = nameEnd > nameStart;
    let raw: string | true = true;
    let arg: string | true = true;
    if (ok && i < len && value.charCodeAt(i) === EQUALS) {
      i++;
      if (i < len && value.charCodeAt(i) === DQUOTE) {
        const q = skipQuoted(value, i, len);
        const unquoted = q > 0 ? unquote(value.slice(i, q)) : null;
        if (unquoted === null) ok = false;
        else {
          raw = value.slice(i, q);
          arg = unquoted;
          i = q;
        }
      } else {
        const argStart = i;
        while (i < len && isTchar(value.charCodeAt(i))) i++;
        if (i > argStart) raw = arg = value.slice(argStart, i);
        else ok = false;
      }
    }
    // §2.3: an optional ";" device-token names the one surrogate the directive is aimed at.
    let k = skipOws(value, i, len);
    let target: string | null = null;
    if (ok && k < len && value.charCodeAt(k) === SEMI) {
      const tokenStart = skipOws(value, k + 1, len);
      k = tokenStart;
      while (k < len && isTchar(value.charCodeAt(k))) k++;
      if (k > tokenStart) target = value.slice(tokenStart, k);
      else ok = false;
      k = skipOws(value, k, len);
    }
    if (k < len && value.charCodeAt(k) !== COMMA) ok = false; // the member must end here
    if (ok) {
      out.push({ name: value.slice(nameStart, nameEnd).toLowerCase(), raw, value: arg, target });
    }
    i = nextComma(value, k, len);
  }
  return out;
}

/**
 * The argument of Surrogate-Control max-age (Edge Architecture §2.2.3): `N` or `N+M`, where N is the
 * freshness lifetime and M the extra seconds a stale response may still be served. Both are
 * delta-seconds and saturate at 2^31 (RFC 9111 §1.2.2). Null when malformed.
 */
export function parseSurrogateMaxAge(arg: string): { maxAgeSec: number; staleSec: number | null } | null {
  const plus = arg.indexOf('+');
  if (plus < 0) {
    const maxAgeSec = parseDeltaSeconds(arg);
    return maxAgeSec === null ? null : { maxAgeSec, staleSec: null };
  }
  const maxAgeSec = parseDeltaSeconds(arg.slice(0, plus));
  const staleSec = parseDeltaSeconds(arg.slice(plus + 1)); // a second "+" is not a digit: null
  return maxAgeSec === null || staleSec === null ? null : { maxAgeSec, staleSec };
}

/**
 * The device token of one Surrogate-Control member (a list element, e.g. from splitList): the token
 * after the first ";" outside a quoted-string, OWS-trimmed (§2.3). Null when there is none or it is
 * not a token. Looks only at the target, so it also finds it on a member whose directive is malformed.
 */
export function surrogateMemberTarget(member: string): string | null {
  const len = member.length;
  for (let k = 0; k < len; k++) {
    const c = member.charCodeAt(k);
    if (c === DQUOTE) {
      const q = skipQuoted(member, k, len);
      if (q < 0) return null;
      k = q - 1;
    } else if (c === SEMI) {
      const start = skipOws(member, k + 1, len);
      const target = member.slice(start, trimOwsEnd(member, start, len));
      return isToken(target) ? target : null;
    }
  }
  return null;
}
