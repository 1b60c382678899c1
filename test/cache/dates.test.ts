// HTTP-dates as the cache reads them: names in any case (RFC 9110 §5.6.7, RFC 9111 §4.2).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseCacheDate } from '../../src/cache/dates.js';
import { freshnessLifetimeSec } from '../../src/cache/freshness.js';

const MS = Date.UTC(2099, 0, 1);

describe('parseCacheDate', () => {
  const cases: [string, string | undefined, number | null][] = [
    ['IMF-fixdate as sent -> parsed', 'Thu, 01 Jan 2099 00:00:00 GMT', MS],
    ['all lowercase -> parsed', 'thu, 01 jan 2099 00:00:00 gmt', MS],
    ['all uppercase -> parsed', 'THU, 01 JAN 2099 00:00:00 GMT', MS],
    ['mixed case month -> parsed', 'Thu, 01 jAN 2099 00:00:00 Gmt', MS],
    ['asctime lowercase -> parsed', 'thu jan  1 00:00:00 2099', MS],
    ['rfc850 lowercase -> parsed', 'thursday, 01-jan-99 00:00:00 gmt', Date.UTC(1999, 0, 1)],
    ['unknown month in any case -> null', 'thu, 01 jun 2099 00:00:00 gmx', null],
    ['not a date -> null', 'soon', null],
    ['"0" -> null', '0', null],
    ['absent -> null', undefined, null],
  ];
  for (const [name, value, want] of cases) {
    it(name, () => assert.equal(parseCacheDate(value, Date.UTC(1999, 5, 1)), want));
  }
});

describe('Expires in lowercase gives freshness (§4.2.1)', () => {
  it('lowercase Expires minus Date', () => {
    const headers = { date: 'thu, 01 jan 2099 00:00:00 gmt', expires: 'thu, 01 jan 2099 00:01:40 gmt' };
    const stored = { status: 200, headers, requestTimeMs: MS, responseTimeMs: MS };
    assert.equal(freshnessLifetimeSec(stored, true), 100);
  });
});
