// HTTP-dates as the cache reads them (Expires, Date, Last-Modified). RFC 9110 §5.6.7: "Recipients of a
// timestamp value in rfc850-date format ... ", and it points to RFC 9111 §4.2 for caches, which are
// to read dates leniently: day and month names and GMT are matched case-insensitively here.
import { parseHttpDate } from '../http/dates.js';
/** parseHttpDate, also accepting names in any case (`thu, 01 jan 2099 00:00:00 gmt`). */
export function parseCacheDate(value, nowMs) {
    const strict = parseHttpDate(value, nowMs);
    if (strict !== null || typeof value !== 'string' || value.length > 64)
        return strict;
    const canonical = value.replace(/[A-Za-z]+/g, (w) => w.length === 3 && w.toUpperCase() === 'GMT' ? 'GMT' : w[0].toUpperCase() + w.slice(1).toLowerCase());
    return canonical === value ? null : parseHttpDate(canonical, nowMs);
}
