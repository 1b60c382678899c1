// Shared by the inspector's area tests (test/inspect/): the seeded hostile-site fuzz helpers.
import assert from 'node:assert/strict';
import type { Finding } from '../../src/inspect/types.js';
import type { Gen } from './random.js';
import type { ExchangeSpec } from './recording.js';

/** Fuzz helpers over one area's PIECES (the text a hostile or broken site might send there). */
export function hostileFuzz(pieces: readonly string[]) {
  /** A field value: pieces, or any text a parser would let through (no CR, LF or NUL). */
  const hostileValue = (g: Gen): string =>
    g.chance(0.7) ? g.string(pieces, 6) : g.anyString(24).replace(/[\r\n\0]/g, '');

  function hostileExchange(g: Gen, names: readonly string[], url: string): ExchangeSpec {
    const headers: [string, string][] = [];
    for (const name of names) if (g.chance(0.6)) headers.push([name, hostileValue(g)]);
    if (g.chance(0.2)) headers.push([g.pick(names), hostileValue(g)]); // a repeated field line
    return {
      url,
      status: g.pick([200, 204, 206, 301, 302, 303, 304, 307, 308, 400, 404, 405, 500, 599]),
      headers,
      body: g.string(pieces, 6),
      requestHeaders: headers.length > 0 && g.chance(0.5) ? [headers[0]!] : [],
    };
  }

  return { hostileValue, hostileExchange };
}

/** Every finding is of `area`, its id in that area, message and evidence one line each. */
export function assertWellFormed(findings: readonly Finding[], area: string): void {
  for (const f of findings) {
    assert.equal(f.area, area);
    assert.ok(f.id.startsWith(`${area}.`), f.id);
    assert.doesNotMatch(f.message, /[\r\n]/);
    assert.doesNotMatch(f.evidence, /[\r\n]/);
  }
}
