import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseSubprotocolOffer, relayedCloseCode } from '../../src/http/websocket-relay.js';

describe('parseSubprotocolOffer (RFC 6455 §4.1)', () => {
  const cases: [string, string | undefined, ReturnType<typeof parseSubprotocolOffer>][] = [
    ['absent -> nothing offered', undefined, { kind: 'offered', protocols: [] }],
    ['one token', 'chat', { kind: 'offered', protocols: ['chat'] }],
    ['a list keeps the client order', 'b, a,c', { kind: 'offered', protocols: ['b', 'a', 'c'] }],
    ['empty -> malformed', '', { kind: 'malformed' }],
    ['only commas -> malformed', ' , ', { kind: 'malformed' }],
    ['a space inside a value -> malformed', 'a b', { kind: 'malformed' }],
    ['a repeat -> malformed', 'a, a', { kind: 'malformed' }],
  ];
  for (const [name, field, want] of cases)
    it(name, () => assert.deepEqual(parseSubprotocolOffer(field), want));
});

describe('relayedCloseCode (RFC 6455 §7.4)', () => {
  const cases: [string, number, boolean, number | undefined][] = [
    ['1000 passes to the client', 1000, false, 1000],
    ['1001 passes to the upstream', 1001, true, 1001],
    ['an application code passes', 4001, false, 4001],
    ['1008 passes', 1008, true, 1008],
    ['1005 (no status) -> a Close without one', 1005, false, undefined],
    ['the upstream vanished (1006) -> 1011 for the client', 1006, false, 1011],
    ['the client vanished (1006) -> 1001 for the upstream', 1006, true, 1001],
    ['1015 (TLS) is never sent -> 1011', 1015, false, 1011],
    ['a reserved code (1004) is never sent', 1004, false, 1011],
    ['an extension range code (2000) is never sent', 2000, true, 1001],
  ];
  for (const [name, code, up, want] of cases) it(name, () => assert.equal(relayedCloseCode(code, up), want));
});
