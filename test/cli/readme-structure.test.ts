// The README is a user's page: it opens with what a user runs (npx gatehouse-http, then the install
// section), and the repository's own two lines (npm ci && npm start / npm test) stand under a heading for
// working on Gatehouse itself, after everything a user of the package reads.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT } from '../helpers/page-server.js';

const README = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
const headings = [...README.matchAll(/^(#{2}) (.+)$/gm)].map((m) => m[2]!);
const codeBlocks = [...README.matchAll(/^```\w*\n([\s\S]*?)^```/gm)].map((m) => m[1]!);

describe('README: a user page first', () => {
  it('the first code block is what a user runs: npx gatehouse-http', () => {
    assert.match(codeBlocks[0] ?? '', /^npx gatehouse-http /m);
  });

  it('the first section is Install', () => assert.equal(headings[0], 'Install'));

  it("the repository's two lines are under 'Working on Gatehouse itself', after the user's sections", () => {
    const i = README.indexOf('## Working on Gatehouse itself');
    assert.ok(i > 0, 'the heading exists');
    for (const line of ['npm ci && npm start', 'npm ci && npm test']) {
      assert.ok(README.indexOf(line) > i, `${line} below it`);
    }
    for (const userSection of ['Install', 'Recipes', 'CLI', 'Documentation']) {
      assert.ok(headings.indexOf(userSection) < headings.indexOf('Working on Gatehouse itself'), userSection);
    }
  });

  it('conformance tables live in docs/conformance.md, not in the README', () => {
    assert.doesNotMatch(README, /^\| suite \| cache \|/m);
    assert.match(readFileSync(join(REPO_ROOT, 'docs/conformance.md'), 'utf8'), /^\| suite \| cache \|/m);
  });

  it('at most about 400 lines', () => assert.ok(README.split('\n').length <= 400));
});
