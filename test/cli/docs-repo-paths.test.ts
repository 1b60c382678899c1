// The README and docs/ ship in the npm package; src/, test/, bench/, scripts/ and examples/ do not. A
// shipped page naming one of those paths links it to the repository (scripts/link-repo-paths.mjs
// rewrites bare mentions), so no reader of the installed package meets a path that is not there.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { linkMentions, REPO, repoUrl } from '../../scripts/link-repo-paths.mjs';
import { REPO_ROOT } from '../helpers/page-server.js';

const link = linkMentions;

describe('shipped pages name repository-only files only as links to the repository', () => {
  const pages = [
    'README.md',
    ...readdirSync(join(REPO_ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  for (const page of pages) {
    it(`${page}: every src/, test/, bench/, scripts/, examples/ path is a repository link`, () => {
      const text = readFileSync(join(REPO_ROOT, page), 'utf8');
      const fixed = link(text);
      const bare = text.split('\n').filter((l, i) => l !== fixed.split('\n')[i]);
      assert.deepEqual(bare, [], 'run node scripts/link-repo-paths.mjs');
    });
  }

  it('the rule can fail, and leaves links and code blocks alone', () => {
    assert.equal(link('see `test/a.test.ts`'), `see [\`test/a.test.ts\`](${REPO}/blob/main/test/a.test.ts)`);
    const done = `[\`src/x.ts\`](${REPO}/blob/main/src/x.ts) \`dist/index.js\` \`docs/a.md\``;
    assert.equal(link(done), done);
    assert.equal(link('```\n`bench/run.mjs`\n```\n'), '```\n`bench/run.mjs`\n```\n');
    assert.equal(repoUrl('test/security/'), `${REPO}/tree/main/test/security`);
    assert.equal(repoUrl('test/security/*-fuzz.test.ts'), `${REPO}/tree/main/test/security`);
  });
});
