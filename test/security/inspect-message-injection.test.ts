// The site under test chooses its header values, and the inspector quotes some of them in finding
// messages that a terminal prints. A value must not move the cursor or recolour the report (a C1 CSI,
// 0x9b, arrives as one latin1 header byte) and must not flood it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkCaching } from '../../src/inspect/checks/caching.js';
import { checkCoding } from '../../src/inspect/checks/coding.js';
import { checkSecurity } from '../../src/inspect/checks/security.js';
import type { Finding, Recording } from '../../src/inspect/types.js';
import { NOW_MS, recording } from '../helpers/recording.js';

const DATE = new Date(NOW_MS).toUTCString();
const CSI = '\u009b';
const LONG = 'x'.repeat(8192);
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const MAX_MESSAGE_CHARS = 400;

function codedAs(coding: string, etag = '"a"'): Recording {
  return recording({
    probes: {
      'coding-identity': { requestHeaders: { 'accept-encoding': 'identity' }, headers: { date: DATE, etag } },
      'coding-gzip': {
        requestHeaders: { 'accept-encoding': 'gzip' },
        headers: { date: DATE, etag, 'content-encoding': coding, 'last-modified': DATE },
      },
    },
  });
}

function assertTame(findings: Finding[], id: string): void {
  const f = findings.find((x) => x.id === id);
  assert.ok(f, `expected ${id}`);
  assert.doesNotMatch(f.message, CONTROL);
  assert.ok(f.message.length <= MAX_MESSAGE_CHARS, `${f.message.length} chars`);
}

describe('hostile header values quoted in finding messages', () => {
  it('attack: C1 CSI (0x9b) in Content-Encoding -> no control character in the message', () => {
    const findings = checkCoding(codedAs(`${CSI}31mbr`));
    assertTame(findings, 'coding.unrequested-coding');
    assertTame(findings, 'coding.missing-vary');
  });

  it('attack: 8 KiB Content-Encoding -> the message stays one short line', () => {
    assertTame(checkCoding(codedAs(LONG)), 'coding.unrequested-coding');
  });

  it('attack: 8 KiB strong ETag shared by two codings -> the message stays short', () => {
    assertTame(checkCoding(codedAs('gzip', `"${LONG}"`)), 'coding.same-etag');
  });

  it('attack: C1 CSI in the media type of uncompressed text -> no control character', () => {
    const headers = { date: DATE, 'content-type': `text/${CSI}2Jplain` };
    const rec = recording({
      probes: { 'coding-gzip': { requestHeaders: { 'accept-encoding': 'gzip' }, headers, bodyBytes: 5000 } },
    });
    assertTame(checkCoding(rec), 'coding.text-uncompressed');
  });

  it('attack: 8 KiB hashed path -> the message stays short', () => {
    const rec = recording({
      finalUrl: `https://site.example/${LONG}/app-3f2a9c1b.js`,
      probes: { primary: { headers: { date: DATE, 'cache-control': 'no-cache' } } },
    });
    assertTame(checkCaching(rec), 'caching.hashed-no-cache');
  });

  it('attack: HSTS directive name of 8 KiB, twice -> the message stays short', () => {
    const rec = recording({
      url: 'https://site.example/',
      probes: { primary: { headers: { 'strict-transport-security': `max-age=1; ${LONG}; ${LONG}` } } },
    });
    assertTame(checkSecurity(rec), 'security.hsts-invalid');
  });
});
