// Field names and values as a sender must generate them (RFC 9110 §5.1, §5.5).
import { isFieldValueChar } from './chars.js';
import { isToken } from './lists.js';

/** RFC 9110 §5.1: a field name is a token. */
export function isFieldName(s: string): boolean {
  return isToken(s);
}

/**
 * RFC 9110 §5.5: field-vchar, SP and HTAB only. CR, LF and NUL are never allowed (a line break
 * would end the field: response splitting); characters above U+00FF have no octet.
 */
export function isFieldValue(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (!isFieldValueChar(s.charCodeAt(i))) return false;
  return true;
}
