// The Security model table (docs/security-model.md) names, per row, the test files of its guard (issue
// 30 §5). The rule stated above the table, checked here: every row names at least one file, every file
// named exists, and each holds at least one test whose title starts with `attack:`.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT } from '../helpers/page-server.js';

const DOC = readFileSync(join(REPO_ROOT, 'docs/security-model.md'), 'utf8');

/** The rows of the attack table: the attack (first cell) and the files of its last cell. */
function rows(markdown: string): { attack: string; files: string[] }[] {
  const lines = markdown.split('\n');
  const head = lines.findIndex((l) => /^\| attack \|.*\| tests/.test(l));
  assert.ok(head >= 0, 'the attack table with its tests column');
  const out: { attack: string; files: string[] }[] = [];
  for (const line of lines.slice(head + 2)) {
    if (!line.startsWith('|')) break;
    const last = line.trimEnd().replace(/\|$/, '').split('|').at(-1) ?? '';
    out.push({
      attack: line.slice(1, line.indexOf(' | ')).trim(),
      files: [...last.matchAll(/`([^`]+\.test\.ts)`/g)].map((m) => m[1]!),
    });
  }
  return out;
}

/** A test titled `attack: ...` (it/test/describe title, literal or template). */
const hasAttackTest = (source: string): boolean => /\b(it|test|describe)\(\s*['"`]attack: /.test(source);

describe('docs/security-model.md: every row names its attack tests', () => {
  const table = rows(DOC);

  it('the table parses (every row of it)', () => {
    assert.ok(table.length >= 60, `${table.length} rows`);
    assert.equal(
      table.length,
      DOC.split('\n').filter((l) => l.startsWith('| ') && !/^\| (attack|---) /.test(l)).length,
    );
  });

  for (const { attack, files } of table) {
    it(`${attack.slice(0, 80)}: names existing files with attack: tests`, () => {
      assert.ok(files.length > 0, 'no test file named');
      for (const f of files) {
        assert.ok(existsSync(join(REPO_ROOT, f)), `${f} does not exist`);
        assert.ok(hasAttackTest(readFileSync(join(REPO_ROOT, f), 'utf8')), `${f} has no attack: test`);
      }
    });
  }

  it('the rule can fail: a missing file, a file without attack: tests, a row without files', () => {
    const doc = (cell: string) =>
      `| attack | what | limit | tests |\n| --- | --- | --- | --- |\n| x | y | z | ${cell} |\n`;
    assert.deepEqual(rows(doc('`test/security/nope.test.ts`'))[0]?.files, ['test/security/nope.test.ts']);
    assert.equal(existsSync(join(REPO_ROOT, 'test/security/nope.test.ts')), false);
    assert.deepEqual(rows(doc(''))[0]?.files, []);
    assert.equal(hasAttackTest("it('files: dir 0700, keys 0600', () => {})"), false);
    assert.equal(hasAttackTest('it(`attack: x -> 400`, () => {})'), true);
  });
});

describe('the README against the npm-name typosquat', () => {
  // `gatehouse` on npm is an unrelated package: `npx gatehouse` before installing runs it.
  it('attack: npx gatehouse before installing (typosquat of the npm name) -> every command in the README runs npx gatehouse-http', () => {
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    const commands = [...readme.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)]
      .filter((m) => ['', 'sh', 'bash'].includes(m[1]!))
      .flatMap((m) => m[2]!.split('\n'))
      .filter((l) => /\bnpx gatehouse/.test(l));
    assert.ok(commands.length >= 3, commands.join('\n'));
    for (const c of commands) assert.match(c, /\bnpx gatehouse-http\b/, c);
  });
});
