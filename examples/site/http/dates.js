// HTTP-date parsing and formatting (RFC 9110 §5.6.7). No clock: the caller passes `nowMs` when a
// decision needs "now".
const DAY_MS = 86_400_000;
/** Three-letter day names, Sunday first (index = day of week). */
const DAY_NAMES = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
/** RFC 850 long day names (RFC 9110 §5.6.7 day-name-l), same order. */
const DAY_NAMES_LONG = [
    'Sunday',
    'Monday',
    'Tuesday',
    'Wednesday',
    'Thursday',
    'Friday',
    'Saturday',
];
const MONTH_NAMES = [
    'Jan',
    'Feb',
    'Mar',
    'Apr',
    'May',
    'Jun',
    'Jul',
    'Aug',
    'Sep',
    'Oct',
    'Nov',
    'Dec',
];
/** "00".."99" so formatting never pads at run time. */
const PAD2 = [];
for (let n = 0; n < 100; n++)
    PAD2.push(n < 10 ? '0' + n : String(n));
/** Key of a three-letter name: its three code units packed in one number. */
function key3(s, i) {
    return (s.charCodeAt(i) << 16) | (s.charCodeAt(i + 1) << 8) | s.charCodeAt(i + 2);
}
/** Month number (1-12) by packed name; names are case-sensitive (RFC 9110 §5.6.7 %s"Jan" ...). */
const MONTH_BY_KEY = new Map(MONTH_NAMES.map((m, i) => [key3(m, 0), i + 1]));
const DAY_KEYS = new Set(DAY_NAMES.map((d) => key3(d, 0)));
function isLeapYear(y) {
    return y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
}
function daysInMonth(y, m) {
    if (m === 2)
        return isLeapYear(y) ? 29 : 28;
    return m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31;
}
/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
function daysFromCivil(y, m, d) {
    if (m <= 2)
        y -= 1;
    const era = Math.floor(y / 400);
    const yoe = y - era * 400;
    const mp = m > 2 ? m - 3 : m + 9;
    const doy = Math.floor((153 * mp + 2) / 5) + d - 1;
    const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
    return era * 146097 + doe - 719468;
}
/** Scratch for civilFromDays, so formatting allocates only its result string. */
const civil = { y: 0, m: 0, d: 0 };
/** Inverse of daysFromCivil; writes into `civil`. */
function civilFromDays(z) {
    z += 719468;
    const era = Math.floor(z / 146097);
    const doe = z - era * 146097;
    const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
    const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
    const mp = Math.floor((5 * doy + 2) / 153);
    const m = mp < 10 ? mp + 3 : mp - 9;
    civil.d = doy - Math.floor((153 * mp + 2) / 5) + 1;
    civil.m = m;
    civil.y = yoe + era * 400 + (m <= 2 ? 1 : 0);
}
/** Two ASCII digits at i as a number, or -1. */
function digits2(s, i) {
    const a = s.charCodeAt(i) - 0x30;
    const b = s.charCodeAt(i + 1) - 0x30;
    if (a < 0 || a > 9 || b < 0 || b > 9)
        return -1;
    return a * 10 + b;
}
function digits4(s, i) {
    const hi = digits2(s, i);
    const lo = digits2(s, i + 2);
    return hi < 0 || lo < 0 ? -1 : hi * 100 + lo;
}
/**
 * `hh:mm:ss` at i as seconds of the day, or -1. RFC 9110 §5.6.7 hour/minute/second are 2DIGIT;
 * we accept 00-23, 00-59, 00-59. A leap second (60) is rejected: it has no POSIX timestamp.
 */
function timeOfDay(s, i) {
    if (s.charCodeAt(i + 2) !== 0x3a || s.charCodeAt(i + 5) !== 0x3a)
        return -1;
    const h = digits2(s, i);
    const m = digits2(s, i + 3);
    const sec = digits2(s, i + 6);
    if (h < 0 || h > 23 || m < 0 || m > 59 || sec < 0 || sec > 59)
        return -1;
    return h * 3600 + m * 60 + sec;
}
/** ms since the epoch, or null when the day does not exist in that month (e.g. Feb 30). */
function toMs(y, m, d, secOfDay) {
    if (d < 1 || d > daysInMonth(y, m))
        return null;
    return daysFromCivil(y, m, d) * DAY_MS + secOfDay * 1000;
}
/**
 * IMF-fixdate, the preferred format (RFC 9110 §5.6.7): `Sun, 06 Nov 1994 08:49:37 GMT`, 29 chars
 * starting at i.
 */
function parseImfFixdate(s, i) {
    if (!DAY_KEYS.has(key3(s, i)))
        return null;
    if (s.charCodeAt(i + 4) !== 0x20 || s.charCodeAt(i + 7) !== 0x20 || s.charCodeAt(i + 11) !== 0x20)
        return null;
    if (s.charCodeAt(i + 16) !== 0x20 || s.charCodeAt(i + 25) !== 0x20)
        return null;
    if (s.charCodeAt(i + 26) !== 0x47 || s.charCodeAt(i + 27) !== 0x4d || s.charCodeAt(i + 28) !== 0x54)
        return null; // %s"GMT"
    const d = digits2(s, i + 5);
    const m = MONTH_BY_KEY.get(key3(s, i + 8));
    const y = digits4(s, i + 12);
    const t = timeOfDay(s, i + 17);
    if (d < 0 || m === undefined || y < 0 || t < 0)
        return null;
    return toMs(y, m, d, t);
}
/** asctime-date (RFC 9110 §5.6.7): `Sun Nov  6 08:49:37 1994`, 24 chars starting at i. */
function parseAsctime(s, i) {
    if (!DAY_KEYS.has(key3(s, i)))
        return null;
    if (s.charCodeAt(i + 3) !== 0x20 || s.charCodeAt(i + 7) !== 0x20)
        return null;
    if (s.charCodeAt(i + 10) !== 0x20 || s.charCodeAt(i + 19) !== 0x20)
        return null;
    const m = MONTH_BY_KEY.get(key3(s, i + 4));
    // date3 = month SP ( 2DIGIT / ( SP DIGIT ) )
    let d;
    if (s.charCodeAt(i + 8) === 0x20) {
        const c = s.charCodeAt(i + 9) - 0x30;
        d = c >= 0 && c <= 9 ? c : -1;
    }
    else {
        d = digits2(s, i + 8);
    }
    const t = timeOfDay(s, i + 11);
    const y = digits4(s, i + 20);
    if (d < 0 || m === undefined || y < 0 || t < 0)
        return null;
    return toMs(y, m, d, t);
}
/**
 * Obsolete RFC 850 date (RFC 9110 §5.6.7): `Sunday, 06-Nov-94 08:49:37 GMT`, from i to end.
 * The two-digit year is resolved by resolveTwoDigitYear.
 */
function parseRfc850(s, i, end, nowMs) {
    const nameLen = end - i - 24;
    let known = false;
    for (const name of DAY_NAMES_LONG) {
        if (name.length === nameLen && s.startsWith(name, i)) {
            known = true;
            break;
        }
    }
    if (!known)
        return null;
    const p = i + nameLen;
    if (s.charCodeAt(p) !== 0x2c || s.charCodeAt(p + 1) !== 0x20)
        return null;
    if (s.charCodeAt(p + 4) !== 0x2d || s.charCodeAt(p + 8) !== 0x2d || s.charCodeAt(p + 11) !== 0x20)
        return null;
    if (s.charCodeAt(p + 20) !== 0x20)
        return null;
    if (s.charCodeAt(p + 21) !== 0x47 || s.charCodeAt(p + 22) !== 0x4d || s.charCodeAt(p + 23) !== 0x54)
        return null;
    const d = digits2(s, p + 2);
    const m = MONTH_BY_KEY.get(key3(s, p + 5));
    const yy = digits2(s, p + 9);
    const t = timeOfDay(s, p + 12);
    if (d < 0 || m === undefined || yy < 0 || t < 0)
        return null;
    const y = resolveTwoDigitYear(yy, m, d, t, nowMs);
    return toMs(y, m, d, t);
}
/**
 * RFC 9110 §5.6.7: a two-digit year that appears to be more than 50 years in the future is the most
 * recent past year with the same last two digits. With `nowMs` we pick the latest year with those
 * digits that is not more than 50 years after now. Without a clock we use the fixed window
 * 00-69 -> 20xx, 70-99 -> 19xx (the POSIX strptime convention).
 */
function resolveTwoDigitYear(yy, m, d, secOfDay, nowMs) {
    if (nowMs === undefined || !Number.isFinite(nowMs))
        return yy < 70 ? 2000 + yy : 1900 + yy;
    const nowDays = Math.floor(nowMs / DAY_MS);
    civilFromDays(nowDays);
    const limitYear = civil.y + 50;
    const limitMs = daysFromCivil(limitYear, civil.m, civil.d) * DAY_MS + (nowMs - nowDays * DAY_MS);
    let y = limitYear - ((((limitYear - yy) % 100) + 100) % 100);
    // Compare the instant itself; an impossible day (Feb 29) rolls over to Mar 1 here, which is
    // harmless: toMs rejects it afterwards.
    if (daysFromCivil(y, m, d) * DAY_MS + secOfDay * 1000 > limitMs)
        y -= 100;
    return y;
}
/**
 * Parses an HTTP-date (RFC 9110 §5.6.7) into ms since the epoch: IMF-fixdate, or the obsolete
 * RFC 850 and asctime formats. Names are case-sensitive as the grammar says (%s"Mon", %s"GMT").
 * The day name must be a real day name but is not checked against the date (it is redundant;
 * RFC 9110 does not ask recipients to verify it). Surrounding OWS is allowed. `nowMs` only matters
 * for RFC 850 two-digit years. Returns null for anything else; never throws.
 */
export function parseHttpDate(value, nowMs) {
    if (typeof value !== 'string')
        return null;
    // Clients echo our Last-Modified back in If-Modified-Since, so the same text arrives again and again.
    if (value === memoText)
        return memoMs;
    let start = 0;
    let end = value.length;
    while (start < end && (value.charCodeAt(start) === 0x20 || value.charCodeAt(start) === 0x09))
        start++;
    while (end > start && (value.charCodeAt(end - 1) === 0x20 || value.charCodeAt(end - 1) === 0x09))
        end--;
    const len = end - start;
    if (len === 29 && value.charCodeAt(start + 3) === 0x2c)
        return memo(value, parseImfFixdate(value, start));
    if (len === 24)
        return memo(value, parseAsctime(value, start));
    if (len >= 30 && len <= 33)
        return parseRfc850(value, start, end, nowMs); // depends on nowMs: not memoised
    return null;
}
/** One-entry memo of parseHttpDate for results that do not depend on `nowMs`. */
let memoText;
let memoMs = null;
function memo(text, ms) {
    if (ms !== null) {
        memoText = text;
        memoMs = ms;
    }
    return ms;
}
/** IMF-fixdate can only carry years 0000-9999 (RFC 9110 §5.6.7 year = 4DIGIT). */
const MIN_FORMAT_MS = daysFromCivil(0, 1, 1) * DAY_MS;
const MAX_FORMAT_MS = daysFromCivil(10000, 1, 1) * DAY_MS;
let cachedSec = Number.NaN;
let cachedText = '';
/**
 * Formats ms since the epoch as an IMF-fixdate (RFC 9110 §5.6.7), truncated to whole seconds:
 * `Sun, 06 Nov 1994 08:49:37 GMT`. The last result is memoised, so a Date header formatted many
 * times within one second costs a comparison. Throws RangeError for a non-finite time or a year
 * outside 0000-9999 (not representable).
 */
export function formatHttpDate(ms) {
    const sec = Math.floor(ms / 1000);
    if (sec === cachedSec)
        return cachedText;
    if (!(ms >= MIN_FORMAT_MS && ms < MAX_FORMAT_MS)) {
        throw new RangeError(`formatHttpDate: ${ms} is not a time an HTTP-date can carry`);
    }
    const days = Math.floor(sec / 86400);
    let rest = sec - days * 86400;
    civilFromDays(days);
    const hh = Math.floor(rest / 3600);
    rest -= hh * 3600;
    const mm = Math.floor(rest / 60);
    const ss = rest - mm * 60;
    const y = civil.y;
    const text = DAY_NAMES[(((days + 4) % 7) + 7) % 7] + // 1970-01-01 was a Thursday
        ', ' +
        PAD2[civil.d] +
        ' ' +
        MONTH_NAMES[civil.m - 1] +
        ' ' +
        PAD2[Math.floor(y / 100)] +
        PAD2[y % 100] +
        ' ' +
        PAD2[hh] +
        ':' +
        PAD2[mm] +
        ':' +
        PAD2[ss] +
        ' GMT';
    cachedSec = sec;
    cachedText = text;
    return text;
}
