import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatHttpDate, parseHttpDate } from '../../src/http/dates.js';

const NOV_6_1994 = 784111777000; // Sun, 06 Nov 1994 08:49:37 GMT (the RFC 9110 §5.6.7 example)
const utc = (y: number, mo: number, d: number, h = 0, mi = 0, s = 0) => Date.UTC(y, mo - 1, d, h, mi, s);
const YEAR_0 = -62167219200000; // 0000-01-01T00:00:00Z (Date.UTC would read year 0 as 1900)
const NOW_2024 = utc(2024, 6, 1, 12, 0, 0);

describe('parseHttpDate', () => {
  const cases: [string, string | null | undefined, number | null, number?][] = [
    // The three formats of RFC 9110 §5.6.7
    ['IMF-fixdate (RFC 9110 §5.6.7 preferred format)', 'Sun, 06 Nov 1994 08:49:37 GMT', NOV_6_1994],
    ['obsolete RFC 850 date (RFC 9110 §5.6.7)', 'Sunday, 06-Nov-94 08:49:37 GMT', NOV_6_1994],
    [
      'obsolete asctime date with SP-padded day (RFC 9110 §5.6.7 date3)',
      'Sun Nov  6 08:49:37 1994',
      NOV_6_1994,
    ],
    [
      'asctime with a two-digit day (RFC 9110 §5.6.7 date3 2DIGIT)',
      'Wed Nov 16 08:49:37 1994',
      utc(1994, 11, 16, 8, 49, 37),
    ],
    ['asctime with a zero-padded day (RFC 9110 §5.6.7 date3 2DIGIT)', 'Sun Nov 06 08:49:37 1994', NOV_6_1994],
    [
      'RFC 850 with the longest day name (RFC 9110 §5.6.7 day-name-l)',
      'Wednesday, 09-Nov-94 08:49:37 GMT',
      utc(1994, 11, 9, 8, 49, 37),
    ],
    ['surrounding OWS is tolerated (RFC 9110 §5.6.3)', '  Sun, 06 Nov 1994 08:49:37 GMT\t', NOV_6_1994],
    ['the epoch (RFC 9110 §5.6.7)', 'Thu, 01 Jan 1970 00:00:00 GMT', 0],
    ['before the epoch (RFC 9110 §5.6.7 year = 4DIGIT)', 'Wed, 31 Dec 1969 23:59:59 GMT', -1000],
    [
      'last representable second (RFC 9110 §5.6.7 year = 4DIGIT)',
      'Fri, 31 Dec 9999 23:59:59 GMT',
      utc(9999, 12, 31, 23, 59, 59),
    ],
    [
      'day name that disagrees with the date is accepted (RFC 9110 §5.6.7: redundant)',
      'Mon, 06 Nov 1994 08:49:37 GMT',
      NOV_6_1994,
    ],
    // Two-digit years (RFC 9110 §5.6.7)
    [
      'RFC 850 year 69 without a clock -> 2069 (fixed window)',
      'Monday, 01-Jan-69 00:00:00 GMT',
      utc(2069, 1, 1),
    ],
    ['RFC 850 year 70 without a clock -> 1970 (fixed window)', 'Thursday, 01-Jan-70 00:00:00 GMT', 0],
    [
      'RFC 850 year 00 without a clock -> 2000 (fixed window)',
      'Saturday, 01-Jan-00 00:00:00 GMT',
      utc(2000, 1, 1),
    ],
    [
      'RFC 850 year 74 in 2024, within 50 years -> 2074 (RFC 9110 §5.6.7)',
      'Monday, 01-Jan-74 00:00:00 GMT',
      utc(2074, 1, 1),
      NOW_2024,
    ],
    [
      'RFC 850 year 74 in 2024, Dec is > 50 years ahead -> 1974 (RFC 9110 §5.6.7)',
      'Sunday, 01-Dec-74 00:00:00 GMT',
      utc(1974, 12, 1),
      NOW_2024,
    ],
    [
      'RFC 850 year 75 in 2024 -> 1975 (RFC 9110 §5.6.7 most recent past year)',
      'Wednesday, 01-Jan-75 00:00:00 GMT',
      utc(1975, 1, 1),
      NOW_2024,
    ],
    [
      'RFC 850 year 05 in 2090 -> 2105, not > 50 years ahead (RFC 9110 §5.6.7)',
      'Thursday, 01-Jan-05 00:00:00 GMT',
      utc(2105, 1, 1),
      utc(2090, 1, 1),
    ],
    [
      'RFC 850 year 24 in 2024 -> 2024 (RFC 9110 §5.6.7)',
      'Saturday, 01-Jun-24 11:00:00 GMT',
      utc(2024, 6, 1, 11),
      NOW_2024,
    ],
    // Calendar validation
    ['Feb 29 in a leap year (Gregorian calendar)', 'Tue, 29 Feb 2000 00:00:00 GMT', utc(2000, 2, 29)],
    ['Feb 29 in 1900 is invalid (not a leap year)', 'Thu, 29 Feb 1900 00:00:00 GMT', null],
    ['Feb 30 is invalid', 'Fri, 30 Feb 2024 00:00:00 GMT', null],
    ['Apr 31 is invalid', 'Wed, 31 Apr 2024 00:00:00 GMT', null],
    ['day 00 is invalid', 'Mon, 00 Jan 2024 00:00:00 GMT', null],
    ['day 32 is invalid', 'Mon, 32 Jan 2024 00:00:00 GMT', null],
    [
      'RFC 850 Feb 29 of a leap year resolved from two digits',
      'Tuesday, 29-Feb-00 00:00:00 GMT',
      utc(2000, 2, 29),
    ],
    ['RFC 850 Feb 29 of a non-leap year is invalid', 'Sunday, 29-Feb-01 00:00:00 GMT', null],
    ['asctime Feb 30 is invalid', 'Fri Feb 30 00:00:00 2024', null],
    ['hour 24 is invalid (RFC 9110 §5.6.7 hour 00-23)', 'Sun, 06 Nov 1994 24:00:00 GMT', null],
    ['minute 60 is invalid (RFC 9110 §5.6.7)', 'Sun, 06 Nov 1994 08:60:00 GMT', null],
    ['second 60 (leap second) is rejected: no POSIX time', 'Sun, 06 Nov 1994 08:49:60 GMT', null],
    // Syntax
    ['lowercase day name (RFC 9110 §5.6.7 %s"Sun" is case-sensitive)', 'sun, 06 Nov 1994 08:49:37 GMT', null],
    ['uppercase month name (RFC 9110 §5.6.7 %s"Nov")', 'Sun, 06 NOV 1994 08:49:37 GMT', null],
    ['zone other than GMT (RFC 9110 §5.6.7 %s"GMT")', 'Sun, 06 Nov 1994 08:49:37 UTC', null],
    ['lowercase gmt (RFC 9110 §5.6.7 %s"GMT")', 'Sun, 06 Nov 1994 08:49:37 gmt', null],
    ['unknown month', 'Sun, 06 Foo 1994 08:49:37 GMT', null],
    ['unknown day name', 'Xyz, 06 Nov 1994 08:49:37 GMT', null],
    ['long day name in an IMF-fixdate', 'Sunday, 06 Nov 1994 08:49:37 GMT', null],
    ['short day name in an RFC 850 date', 'Sun, 06-Nov-94 08:49:37 GMT', null],
    ['single-digit day in an IMF-fixdate', 'Sun, 6 Nov 1994 08:49:37 GMT', null],
    ['two-digit year in an IMF-fixdate', 'Sun, 06 Nov 94 08:49:37 GMT', null],
    ['asctime with a GMT suffix', 'Sun Nov  6 08:49:37 1994 GMT', null],
    ['ISO 8601 is not an HTTP-date', '1994-11-06T08:49:37Z', null],
    ['a number is not an HTTP-date', '784111777', null],
    [
      'a list of two dates (RFC 9110 §13.1.4: ignore)',
      'Sun, 06 Nov 1994 08:49:37 GMT, Sun, 06 Nov 1994 08:49:37 GMT',
      null,
    ],
    ['non-digits in the time', 'Sun, 06 Nov 1994 08:4a:37 GMT', null],
    ['wrong separator in the time', 'Sun, 06 Nov 1994 08.49.37 GMT', null],
    ['empty string', '', null],
    ['undefined', undefined, null],
    ['null', null, null],
  ];
  for (const [name, input, expected, nowMs] of cases) {
    it(name, () => assert.equal(parseHttpDate(input, nowMs), expected));
  }

  it('the one-entry memo never returns a stale result', () => {
    const a = 'Sun, 06 Nov 1994 08:49:37 GMT';
    const b = 'Sun Nov  6 08:49:38 1994';
    for (let k = 0; k < 3; k++) {
      assert.equal(parseHttpDate(a), NOV_6_1994);
      assert.equal(parseHttpDate(b), NOV_6_1994 + 1000);
      assert.equal(parseHttpDate('Sun, 06 Nov 1994 08:49:60 GMT'), null);
      assert.equal(parseHttpDate(a.toLowerCase()), null);
    }
  });

  it('RFC 850 dates are not memoised across different nowMs (RFC 9110 §5.6.7)', () => {
    const v = 'Sunday, 01-Dec-74 00:00:00 GMT';
    assert.equal(parseHttpDate(v, utc(2024, 12, 2)), utc(2074, 12, 1));
    assert.equal(parseHttpDate(v, NOW_2024), utc(1974, 12, 1));
    assert.equal(parseHttpDate(v, utc(2024, 12, 2)), utc(2074, 12, 1));
  });

  it('never throws on non-string input smuggled past the types', () => {
    assert.equal(parseHttpDate(42 as unknown as string), null);
  });
});

describe('formatHttpDate', () => {
  const cases: [string, number, string][] = [
    ['the RFC 9110 §5.6.7 example', NOV_6_1994, 'Sun, 06 Nov 1994 08:49:37 GMT'],
    [
      'milliseconds are truncated to seconds (RFC 9110 §5.6.7)',
      NOV_6_1994 + 999,
      'Sun, 06 Nov 1994 08:49:37 GMT',
    ],
    ['the epoch', 0, 'Thu, 01 Jan 1970 00:00:00 GMT'],
    ['before the epoch rounds down, not toward zero', -1, 'Wed, 31 Dec 1969 23:59:59 GMT'],
    ['a leap day', utc(2024, 2, 29, 23, 59, 59), 'Thu, 29 Feb 2024 23:59:59 GMT'],
    [
      'year 0000 is padded to 4 digits (RFC 9110 §5.6.7 year = 4DIGIT)',
      YEAR_0,
      'Sat, 01 Jan 0000 00:00:00 GMT',
    ],
    ['year 9999', utc(9999, 12, 31, 23, 59, 59), 'Fri, 31 Dec 9999 23:59:59 GMT'],
  ];
  for (const [name, ms, expected] of cases) {
    it(name, () => assert.equal(formatHttpDate(ms), expected));
  }

  it('agrees with Date#toUTCString for 1970-2100', () => {
    for (let ms = 0; ms < utc(2100, 1, 1); ms += 86_399_937 * 7) {
      assert.equal(formatHttpDate(ms), new Date(ms).toUTCString());
    }
  });

  it('memoises per second without mixing up alternating values', () => {
    assert.equal(formatHttpDate(1000), 'Thu, 01 Jan 1970 00:00:01 GMT');
    assert.equal(formatHttpDate(2000), 'Thu, 01 Jan 1970 00:00:02 GMT');
    assert.equal(formatHttpDate(1999), 'Thu, 01 Jan 1970 00:00:01 GMT');
  });

  const throwing: [string, number][] = [
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['year 10000 (RFC 9110 §5.6.7 year = 4DIGIT)', utc(10000, 1, 1)],
    ['negative years', YEAR_0 - 1],
  ];
  for (const [name, ms] of throwing) {
    it(`throws RangeError for ${name}`, () => assert.throws(() => formatHttpDate(ms), RangeError));
  }
});
