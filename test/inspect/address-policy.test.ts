// The address rules of gatehouse check (issue 25 §5): the class of an address, and whether a check may
// connect to it given what it connected to before. Pure, table-style; no sockets.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type AddressClass,
  type AddressState,
  admitAddress,
  classifyAddress,
  noteAddress,
} from '../../src/inspect/address-policy.js';

describe('classifyAddress', () => {
  const table: [string, AddressClass][] = [
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['0.0.0.0', 'loopback'],
    ['::', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['10.0.0.5', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['fd00::1', 'private'],
    ['fec0::1', 'private'],
    ['::ffff:10.1.2.3', 'private'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['172.32.0.1', 'public'],
    ['172.15.255.255', 'public'],
    ['100.128.0.1', 'public'],
    ['8.8.8.8', 'public'],
    ['203.0.113.7', 'public'],
    ['2001:db8::1', 'public'],
    ['not an address', 'loopback'],
  ];
  for (const [address, want] of table) {
    it(`${address} -> ${want}`, () => assert.equal(classifyAddress(address), want));
  }
});

describe('admitAddress', () => {
  /** The classes connected to in order; the last one is judged. */
  const table: [string, AddressClass[], boolean, 'admit' | 'refuse'][] = [
    ['the URL given on loopback (a local development server)', ['loopback'], false, 'admit'],
    ['the URL given on a private address', ['private'], false, 'admit'],
    ['the URL given on a public address', ['public'], false, 'admit'],
    ['public -> public', ['public', 'public'], false, 'admit'],
    ['public -> private', ['public', 'private'], false, 'refuse'],
    ['public -> loopback', ['public', 'loopback'], false, 'refuse'],
    ['public -> link-local (metadata service)', ['public', 'link-local'], false, 'refuse'],
    ['loopback -> loopback', ['loopback', 'loopback'], false, 'admit'],
    ['loopback -> public', ['loopback', 'public'], false, 'admit'],
    ['loopback -> public -> loopback', ['loopback', 'public', 'loopback'], false, 'refuse'],
    ['loopback -> private', ['loopback', 'private'], false, 'refuse'],
    ['loopback -> link-local', ['loopback', 'link-local'], false, 'refuse'],
    ['private -> private', ['private', 'private'], false, 'admit'],
    ['private -> loopback', ['private', 'loopback'], false, 'refuse'],
    ['--allow-private: public -> private', ['public', 'private'], true, 'admit'],
    ['--allow-private: public -> link-local', ['public', 'link-local'], true, 'admit'],
    ['--allow-private: loopback -> private', ['loopback', 'private'], true, 'admit'],
  ];
  for (const [name, classes, allowPrivate, want] of table) {
    it(`${name} -> ${want}`, () => {
      const state: AddressState = { start: undefined, publicSeen: false };
      for (const cls of classes.slice(0, -1)) {
        assert.equal(admitAddress(state, cls, allowPrivate).kind, 'admit');
        noteAddress(state, cls);
      }
      assert.equal(admitAddress(state, classes[classes.length - 1] as AddressClass, allowPrivate).kind, want);
    });
  }
});
