// What `gatehouse check --verbose` lists as passed, and the JSON report's `probes`: pure, from Recordings.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { passedChecks, probeRuns } from '../../src/inspect/checks/passed.js';
import { buildReport, renderText } from '../../src/inspect/report.js';
import type { Recording } from '../../src/inspect/types.js';
import { exchange, recording } from '../helpers/recording.js';

const PAGE = 'https://site.example/';
const ids = (rec: Recording) => passedChecks(rec).map((p) => p.id);

describe('passedChecks: each probe that got what the RFC asks for', () => {
  const cases: [condition: string, rec: Recording, id: string, listed: boolean][] = [
    [
      'If-None-Match -> 304',
      recording({ probes: { 'inm-match': { status: 304 } } }),
      'validators.inm-304',
      true,
    ],
    [
      'If-None-Match -> 200 (ignored)',
      recording({ probes: { 'inm-match': { status: 200 } } }),
      'validators.inm-304',
      false,
    ],
    ['If-Modified-Since -> 304', recording({ probes: { ims: { status: 304 } } }), 'validators.ims-304', true],
    ['Range -> 206', recording({ probes: { range: { status: 206 } } }), 'validators.range-206', true],
    [
      'Range -> 200 (no ranges)',
      recording({ probes: { range: { status: 200 } } }),
      'validators.range-206',
      false,
    ],
    [
      'stale If-Range -> 200',
      recording({ probes: { 'if-range-mismatch': { status: 200 } } }),
      'validators.if-range-stale-200',
      true,
    ],
    [
      'the same ETag twice',
      recording({ probes: { primary: { headers: { etag: '"a"' } }, repeat: { headers: { etag: '"a"' } } } }),
      'validators.etag-stable',
      true,
    ],
    [
      'a changing ETag',
      recording({ probes: { primary: { headers: { etag: '"a"' } }, repeat: { headers: { etag: '"b"' } } } }),
      'validators.etag-stable',
      false,
    ],
    [
      'br asked, br sent with Vary',
      recording({
        probes: { 'coding-br': { headers: { 'content-encoding': 'br', vary: 'Accept-Encoding' } } },
      }),
      'coding.br',
      true,
    ],
    ['br asked, identity sent', recording({ probes: { 'coding-br': { headers: {} } } }), 'coding.br', false],
    ['a 200 page', recording(), 'status.ok', true],
    ['a 404 page', recording({ probes: { primary: { status: 404 } } }), 'status.ok', false],
  ];
  for (const [condition, rec, id, listed] of cases) {
    it(`${condition} -> ${id} ${listed ? 'listed' : 'not listed'}`, () => {
      assert.equal(ids(rec).includes(id), listed, ids(rec).join(' '));
    });
  }

  it('the asset probes: the made-up one 404, a hashed script a year, a script answered as HTML not listed', () => {
    const rec = recording({ url: PAGE, probes: { primary: { headers: { 'content-type': 'text/html' } } } });
    const js = { 'content-type': 'text/javascript', 'cache-control': 'public, max-age=31536000, immutable' };
    rec.assets = [
      { kind: 'made-up', exchange: exchange({ url: `${PAGE}assets/index-deadbeef.js`, status: 404 }) },
      { kind: 'script', exchange: exchange({ url: `${PAGE}assets/app-3f2a9c1b.js`, headers: js }) },
      {
        kind: 'script',
        exchange: exchange({ url: `${PAGE}assets/x.js`, headers: { 'content-type': 'text/html' } }),
      },
    ];
    const got = passedChecks(rec).filter((p) => p.id !== 'status.ok');
    assert.deepEqual(
      got.map((p) => [p.id, p.message]),
      [
        [
          'status.missing-asset-404',
          'a made-up hashed asset URL (/assets/index-deadbeef.js) answered 404, not the page',
        ],
        ['status.asset-200', "the page's script /assets/app-3f2a9c1b.js: 200 text/javascript"],
        [
          'caching.hashed-asset-year',
          "the page's script /assets/app-3f2a9c1b.js has a content hash and is fresh for a year",
        ],
      ],
    );
  });
});

describe('renderText --verbose and probeRuns', () => {
  const rec = recording({
    probes: { primary: {}, 'inm-match': { status: 304 }, range: { error: 'ECONNRESET' } },
  });
  it('passes appear only with verbose, under their area', () => {
    const report = buildReport(rec, []);
    assert.doesNotMatch(renderText(report), /pass/);
    const text = renderText(report, { color: false, verbose: true });
    assert.match(
      text,
      /\nValidators\n {2}pass {2}If-None-Match with the ETag: 304 Not Modified \[validators\.inm-304\]\n/,
    );
  });
  it('every request: the hops, then the probes with their status or error', () => {
    assert.deepEqual(
      probeRuns(rec).map((r) => [r.name, r.status, r.error]),
      [
        ['hop-1', 200, undefined],
        ['primary', 200, undefined],
        ['inm-match', 304, undefined],
        ['range', null, 'ECONNRESET'],
      ],
    );
  });
});
