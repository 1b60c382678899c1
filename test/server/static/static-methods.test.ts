// What a method other than GET/HEAD gets from the static files (src/server/static/methods.ts), by what
// its path resolved to and by what comes after a mounted handler.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FileResource, Resource } from '../../../src/server/static/files.js';
import { type OtherMethodAnswer, otherMethodAnswer } from '../../../src/server/static/methods.js';

const file = { kind: 'file' } as FileResource;

describe('otherMethodAnswer', () => {
  const rows: [name: string, r: Resource, passOnFiles: boolean, want: OtherMethodAnswer][] = [
    ['bad target, app next -> refuse', { kind: 'bad', reason: 'NUL' }, true, 'refuse'],
    ['bad target, static server next -> refuse', { kind: 'bad', reason: 'NUL' }, false, 'refuse'],
    ['hidden path, app next -> refuse', { kind: 'hidden' }, true, 'refuse'],
    ['hidden path, static server next -> refuse', { kind: 'hidden' }, false, 'refuse'],
    ['file, app next -> pass on (serve-static)', file, true, 'pass-on'],
    ['file, static server next -> 405', file, false, 'not-allowed'],
    [
      'folder redirect, app next -> pass on',
      { kind: 'redirect', location: '/d/', fingerprint: '' },
      true,
      'pass-on',
    ],
    [
      'folder redirect, static server next -> 405',
      { kind: 'redirect', location: '/d/', fingerprint: '' },
      false,
      'not-allowed',
    ],
    [
      'nothing on disk, app next -> pass on',
      { kind: 'missing', fingerprint: '', onDisk: false },
      true,
      'pass-on',
    ],
    [
      'nothing on disk, static server next -> pass on',
      { kind: 'missing', fingerprint: '', onDisk: false },
      false,
      'pass-on',
    ],
    [
      'no file but something on disk, app next -> pass on',
      { kind: 'missing', fingerprint: '', onDisk: true },
      true,
      'pass-on',
    ],
    [
      'no file but something on disk, static server next -> 405',
      { kind: 'missing', fingerprint: '', onDisk: true },
      false,
      'not-allowed',
    ],
  ];
  for (const [name, r, passOnFiles, want] of rows)
    it(name, () => assert.equal(otherMethodAnswer(r, passOnFiles), want));
});
