import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { negotiateEncoding, prefersHtml } from '../../src/http/negotiate.js';

const BR_GZIP = ['br', 'gzip'] as const;

describe('negotiateEncoding (RFC 9110 §12.5.3)', () => {
  const cases: [string, string | undefined, readonly string[], string | null][] = [
    // [name, Accept-Encoding, available (server order), expected]
    ['absent header -> identity (we compress only for clients that ask)', undefined, BR_GZIP, 'identity'],
    ['empty header -> identity (RFC 9110 §12.5.3: no coding wanted)', '', BR_GZIP, 'identity'],
    ['Chrome value, server prefers br', 'gzip, deflate, br, zstd', BR_GZIP, 'br'],
    ['Safari value, server prefers br', 'gzip, deflate, br', BR_GZIP, 'br'],
    ['browser value, zstd available first', 'gzip, deflate, br, zstd', ['zstd', 'br', 'gzip'], 'zstd'],
    ['browser value, only gzip available', 'gzip, deflate, br', ['gzip'], 'gzip'],
    ['browser value, nothing available -> identity', 'gzip, deflate, br', [], 'identity'],
    ['ties go to server order (no q-values)', 'gzip, br', BR_GZIP, 'br'],
    ['ties go to server order, other order', 'br, gzip', ['gzip', 'br'], 'gzip'],
    ['higher q wins over server order (RFC 9110 §12.4.2)', 'gzip;q=1, br;q=0.5', BR_GZIP, 'gzip'],
    ['q=0 refuses a coding (RFC 9110 §12.5.3)', 'br;q=0, gzip', BR_GZIP, 'gzip'],
    ['every offered coding refused -> identity', 'br;q=0, gzip;q=0', BR_GZIP, 'identity'],
    ['q=0.000 is still zero (RFC 9110 §12.4.2)', 'gzip;q=0.000', ['gzip'], 'identity'],
    ['unlisted coding is not acceptable (RFC 9110 §12.5.3)', 'deflate', BR_GZIP, 'identity'],
    ['"*" matches any unlisted coding (RFC 9110 §12.5.3)', '*', BR_GZIP, 'br'],
    ['"*" with a refused coding', '*;q=0.5, br;q=0', BR_GZIP, 'gzip'],
    ['"*;q=0" refuses everything incl. identity -> null (RFC 9110 §12.5.3)', '*;q=0', BR_GZIP, null],
    ['"*;q=0" with identity listed -> identity (RFC 9110 §12.5.3)', '*;q=0, identity', BR_GZIP, 'identity'],
    ['"*;q=0" but gzip listed -> gzip', '*;q=0, gzip', BR_GZIP, 'gzip'],
    ['"identity;q=0" and nothing else acceptable -> null (RFC 9110 §12.5.3)', 'identity;q=0', BR_GZIP, null],
    ['"identity;q=0" with gzip acceptable -> gzip', 'identity;q=0, gzip', BR_GZIP, 'gzip'],
    ['"identity;q=0" and no codings available -> null', 'identity;q=0', [], null],
    [
      'identity with a higher q beats a coding (RFC 9110 §12.4.2)',
      'gzip;q=0.5, identity',
      BR_GZIP,
      'identity',
    ],
    ['identity loses a tie with a coding', 'gzip;q=0.5, identity;q=0.5', BR_GZIP, 'gzip'],
    [
      'identity loses a tie even when listed first by the server',
      'gzip, identity',
      ['identity', 'gzip'],
      'gzip',
    ],
    ['"*" ties: identity comes last', '*', ['identity', 'gzip'], 'gzip'],
    [
      'identity in available can be chosen when codings are refused',
      'gzip;q=0',
      ['gzip', 'identity'],
      'identity',
    ],
    ['coding names are case-insensitive (RFC 9110 §8.4.1)', 'GZIP, Br;q=0.1', BR_GZIP, 'gzip'],
    ['available names are matched case-insensitively and returned lowercase', 'br', ['BR'], 'br'],
    ['x-gzip is gzip (RFC 9110 §8.4.1.3)', 'x-gzip', BR_GZIP, 'gzip'],
    ['"Q" parameter name is case-insensitive (RFC 9110 §5.6.6)', 'gzip;Q=0.5, br;Q=0.4', BR_GZIP, 'gzip'],
    ['OWS around ";" (RFC 9110 §12.4.2 weight = OWS ";" OWS)', 'gzip ; q=0.5, br;q=0.4', BR_GZIP, 'gzip'],
    ['q above 1 is invalid: member ignored (RFC 9110 §12.4.2)', 'br;q=2, gzip;q=0.1', BR_GZIP, 'gzip'],
    ['four decimals is invalid: member ignored', 'br;q=0.0001', BR_GZIP, 'identity'],
    ['1.001 is invalid: member ignored', 'br;q=1.001', BR_GZIP, 'identity'],
    ['q=1.000 is valid', 'br;q=1.000', BR_GZIP, 'br'],
    ['q=0. is valid zero', 'br;q=0., gzip', BR_GZIP, 'gzip'],
    ['q=.5 is invalid: member ignored', 'br;q=.5', BR_GZIP, 'identity'],
    ['empty q is invalid: member ignored', 'br;q=', BR_GZIP, 'identity'],
    ['spaces around "=" are invalid: member ignored (RFC 9110 §5.6.6)', 'br;q = 0.5', BR_GZIP, 'identity'],
    ['junk after the coding: member ignored', 'br junk, gzip;q=0.1', BR_GZIP, 'gzip'],
    ['invalid qvalue does not refuse: "br;q=x" ignored, "*" applies', 'br;q=x, *;q=0.5', BR_GZIP, 'br'],
    ['first of duplicate members counts', 'gzip;q=0, gzip', ['gzip'], 'identity'],
    ['unknown parameter is tolerated', 'br;foo=bar', BR_GZIP, 'br'],
    ['media ranges are not codings', 'text/html, gzip;q=0.1', BR_GZIP, 'gzip'],
    ['empty members are ignored (RFC 9110 §5.6.1.2)', ', ,gzip,', BR_GZIP, 'gzip'],
  ];
  for (const [name, header, available, expected] of cases) {
    it(name, () => assert.equal(negotiateEncoding(header, available), expected));
  }
});

describe('prefersHtml (RFC 9110 §12.5.1)', () => {
  const cases: [string, string | undefined, boolean][] = [
    ['absent Accept', undefined, false],
    [
      'browser navigation',
      'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8',
      true,
    ],
    ['just text/html', 'text/html', true],
    ['fetch default */* does not count', '*/*', false],
    ['text/* does not count', 'text/*', false],
    ['JSON client', 'application/json', false],
    ['problem+json client', 'application/problem+json, application/json;q=0.9', false],
    ['text/html;q=0 is a refusal (RFC 9110 §12.4.2)', 'text/html;q=0, */*', false],
    ['media types are case-insensitive (RFC 9110 §8.3.1)', 'TEXT/HTML', true],
    ['listed later with a low q', 'application/json, text/html;q=0.1', true],
    ['with media-type parameters before q (RFC 9110 §12.5.1)', 'text/html;level=1;q=0.5', true],
    ['with OWS (RFC 9110 §5.6.1)', ' application/json ,  text/html ', true],
    ['invalid qvalue: member ignored (RFC 9110 §12.4.2)', 'text/html;q=x', false],
    ['a longer subtype is not text/html', 'text/htmlx', false],
    ['empty Accept', '', false],
  ];
  for (const [name, accept, expected] of cases) {
    it(name, () => assert.equal(prefersHtml(accept), expected));
  }
});
