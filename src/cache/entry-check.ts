// Whether an entry a store read back (from Redis, from a disk file) may be served: stores outside this
// process can be written by others, so nothing read from them is trusted. Pure: the stores
// call it on their read path and treat a problem as a miss.
import { isFieldName, isFieldValue } from '../http/fields.js';
import { heldProblem } from './pieces.js';

/**
 * Several Set-Cookie lines of one stored response are kept apart with LF (the proxy's HeaderMap
 * convention, RFC 9110 §5.3 does not allow joining them with commas); each line is a field value.
 */
const LINE_SEPARATED = 'set-cookie';

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The first field that cannot be sent as it is stored, described, or undefined when all can. */
function fieldsProblem(headers: unknown): string | undefined {
  if (!isRecord(headers)) return 'headers are not a map';
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    // RFC 9110 §5.1: a field name is a token (lowercase as the stores keep them).
    if (!isFieldName(name) || name !== name.toLowerCase()) return `field name ${JSON.stringify(name)}`;
    if (typeof value !== 'string') return `field ${name} is not a string`;
    // RFC 9110 §5.5: no CR, LF, NUL or other controls (they would split or reset the response).
    const ok =
      name === LINE_SEPARATED ? value.split('\n').every((line) => isFieldValue(line)) : isFieldValue(value);
    if (!ok) return `field ${name} has a character not allowed in a field value`;
  }
  return undefined;
}

const isTime = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v);

/**
 * Why an entry's metadata and body length must not be served (a one-line reason), or undefined when
 * they may. `meta` is whatever the store parsed (EntryMeta when it is well-formed). Checks: a final
 * status a cache may hold (RFC 9110 §15: 200-599; a 1xx such as 101 is never a stored response and
 * would leave the client waiting), field names and values as RFC 9110 §5.1 / §5.5 allow, the shapes
 * the cache decisions read, and `bodyBytes` within `maxEntryBytes`.
 */
export function storedEntryProblem(
  meta: unknown,
  bodyBytes: number,
  maxEntryBytes: number,
): string | undefined {
  if (!Number.isSafeInteger(bodyBytes) || bodyBytes < 0) return `body length ${bodyBytes}`;
  if (bodyBytes > maxEntryBytes) return `body of ${bodyBytes} bytes is over maxEntryBytes (${maxEntryBytes})`;
  if (!isRecord(meta) || !isRecord(meta.response)) return 'metadata is not an entry';
  const { response } = meta;
  const status = response.status;
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 200 || status > 599)
    return `status ${JSON.stringify(status)}`;
  if (!isTime(response.requestTimeMs) || !isTime(response.responseTimeMs)) return 'exchange times';
  const fields = fieldsProblem(response.headers);
  if (fields !== undefined) return fields;
  if (typeof meta.varyKey !== 'string') return 'secondary key';
  // Request fields, only compared (never sent): strings suffice.
  if (!isRecord(meta.varyHeaders) || !Object.values(meta.varyHeaders).every((v) => typeof v === 'string'))
    return 'vary headers';
  if (meta.discardAfterMs !== undefined && !isTime(meta.discardAfterMs)) return 'discardAfterMs';
  if (meta.markedStale !== undefined && meta.markedStale !== true) return 'markedStale';
  if (meta.tags !== undefined && !(Array.isArray(meta.tags) && meta.tags.every((t) => typeof t === 'string')))
    return 'tags';
  // A partial entry's pieces must describe its body exactly (they index into it when served).
  if (meta.partial !== undefined) {
    const why = heldProblem(meta.partial, bodyBytes);
    if (why !== undefined) return `partial: ${why}`;
    if (status !== 206) return 'partial entry without status 206';
  } else if (status === 206) return 'status 206 without pieces';
  return undefined;
}
