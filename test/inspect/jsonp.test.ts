import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkJsonp } from '../../src/inspect/checks/jsonp.js';
import { HOSTILE_CALLBACK, type ProbeName } from '../../src/inspect/types.js';
import {
  assertWellFormed,
  type FiresAndQuiet,
  firesAndQuietTests,
  hostileFuzz,
  type Probes,
  withProbes,
} from '../helpers/inspect-cases.js';
import { forAll, ITERATIONS } from '../helpers/random.js';
import { type ExchangeSpec, recording } from '../helpers/recording.js';

const URL_CB = 'https://site.example/api/data?callback=handle';
const SCRIPT = { 'Content-Type': 'text/javascript; charset=utf-8', 'X-Content-Type-Options': 'nosniff' };
const HOSTILE_URL = `https://site.example/api/data?callback=${encodeURIComponent(HOSTILE_CALLBACK)}`;

/** What Gatehouse sends: the script for a valid callback, 400 problem+json for the hostile one. */
const GOOD: Partial<Record<ProbeName, ExchangeSpec>> = {
  primary: { url: URL_CB, headers: SCRIPT, body: '/**/ handle({"a":1});' },
  'jsonp-hostile': {
    url: HOSTILE_URL,
    status: 400,
    headers: { 'Content-Type': 'application/problem+json', 'X-Content-Type-Options': 'nosniff' },
    body: '{"title":"Bad Request","detail":"it must be a JavaScript identifier"}',
  },
};

function ids(over: Probes, jsonpParam: string | null = 'callback'): string[] {
  const probes = withProbes(GOOD, over);
  const rec = recording({ url: URL_CB, probes, ...(jsonpParam === null ? {} : { jsonpParam }) });
  return checkJsonp(rec).map((f) => `${f.id}:${f.severity}`);
}

const primary = (headers: Record<string, string>, url = URL_CB): ExchangeSpec => ({
  url,
  headers,
  body: '/**/ handle({"a":1});',
});
const hostile = (status: number, headers: Record<string, string>, body: string): ExchangeSpec => ({
  url: HOSTILE_URL,
  status,
  headers,
  body,
});

// [id, fires on, quiet on]
const cases: FiresAndQuiet[] = [
  [
    'jsonp.content-type:error',
    {
      name: 'application/json',
      probes: {
        primary: primary({ 'Content-Type': 'application/json', 'X-Content-Type-Options': 'nosniff' }),
      },
    },
    {
      name: 'application/javascript (a JavaScript MIME type too)',
      probes: {
        primary: primary({ 'Content-Type': 'Application/JavaScript', 'X-Content-Type-Options': 'nosniff' }),
      },
    },
  ],
  [
    'jsonp.content-type:error',
    { name: 'no Content-Type', probes: { primary: primary({ 'X-Content-Type-Options': 'nosniff' }) } },
    {
      name: 'application/json on a URL without the callback (plain JSON)',
      probes: {
        primary: primary(
          { 'Content-Type': 'application/json', 'X-Content-Type-Options': 'nosniff' },
          'https://site.example/api/data',
        ),
      },
    },
  ],
  [
    'jsonp.nosniff-missing:error',
    {
      name: 'no X-Content-Type-Options',
      probes: { primary: primary({ 'Content-Type': 'text/javascript' }) },
    },
    {
      name: 'X-Content-Type-Options: NoSniff',
      probes: {
        primary: primary({ 'Content-Type': 'text/javascript', 'X-Content-Type-Options': 'NoSniff' }),
      },
    },
  ],
  [
    'jsonp.nosniff-missing:error',
    {
      name: 'X-Content-Type-Options: sniff-please',
      probes: {
        primary: primary({ 'Content-Type': 'text/javascript', 'X-Content-Type-Options': 'sniff-please' }),
      },
    },
    {
      name: 'a 400 to the primary (callback refused)',
      probes: { primary: { url: URL_CB, status: 400, headers: { 'Content-Type': 'text/html' } } },
    },
  ],
  [
    'jsonp.callback-reflected:error',
    {
      name: 'the hostile callback echoed whole',
      probes: { 'jsonp-hostile': hostile(200, SCRIPT, `/**/ ${HOSTILE_CALLBACK}({"a":1});`) },
    },
    { name: 'the hostile callback refused with 400', probes: {} },
  ],
  [
    'jsonp.callback-reflected:error',
    {
      name: 'only < and > stripped: the call survives',
      probes: { 'jsonp-hostile': hostile(200, SCRIPT, 'alert(document.domain)//script({"a":1});') },
    },
    {
      name: 'every non-identifier character stripped',
      probes: { 'jsonp-hostile': hostile(200, SCRIPT, 'alertdocumentdomainscript({"a":1});') },
    },
  ],
  [
    'jsonp.callback-reflected:error',
    {
      name: 'parentheses stripped but <script> kept, no nosniff',
      probes: {
        'jsonp-hostile': hostile(
          200,
          { 'Content-Type': 'text/javascript' },
          'alertdocument.domain//<script>({});',
        ),
      },
    },
    {
      name: 'the name quoted inside JSON served with nosniff',
      probes: {
        'jsonp-hostile': hostile(
          200,
          { 'Content-Type': 'application/json', 'X-Content-Type-Options': 'nosniff' },
          `{"error":"bad callback ${HOSTILE_CALLBACK}"}`,
        ),
      },
    },
  ],
];

describe('jsonp checks (issue 16 item 7)', () => {
  it('Gatehouse-style JSONP gives no finding', () => {
    assert.deepEqual(ids({}), []);
  });

  it('without a callback parameter nothing is said', () => {
    assert.deepEqual(ids({ primary: primary({}) }, null), []);
  });

  firesAndQuietTests(cases, ids);

  it('the reflection evidence shows the reflected text', () => {
    const rec = recording({
      url: URL_CB,
      jsonpParam: 'callback',
      probes: { ...GOOD, 'jsonp-hostile': hostile(200, SCRIPT, `/**/ ${HOSTILE_CALLBACK}({});`) },
    });
    const f = checkJsonp(rec).find((x) => x.id === 'jsonp.callback-reflected');
    assert.ok(f?.evidence.includes('alert(document.domain)//<script>'), f?.evidence);
  });
});

/** Pieces a hostile or broken site might send in jsonp fields. */
const PIECES = [
  'alert',
  '(',
  ')',
  'document.domain',
  '//',
  '<script>',
  '</script>',
  'cb',
  '{}',
  'text/javascript',
  'application/json',
  ';',
  'charset=utf-8',
  'nosniff',
  ',',
  ' ',
  '\\u2028',
  '__proto__',
];

const { hostileExchange } = hostileFuzz(PIECES);

describe('a hostile site cannot break the jsonp check', () => {
  it('random JSONP answers: no throw, well-formed findings', () => {
    const names = ['content-type', 'x-content-type-options'];
    forAll(
      0x16a7,
      ITERATIONS / 10,
      (g) => ({
        primary: hostileExchange(
          g,
          names,
          g.pick([URL_CB, 'https://site.example/api?callback', 'not a url']),
        ),
        'jsonp-hostile': hostileExchange(g, names, HOSTILE_URL),
      }),
      (probes) =>
        assertWellFormed(checkJsonp(recording({ url: URL_CB, probes, jsonpParam: 'callback' })), 'jsonp'),
    );
  });
});
