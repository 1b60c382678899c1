// docs/configuration.md is generated from the zod configSchema (issue 26 §3), so it cannot drift: the
// committed page must be what scripts/gen-config-docs.mjs makes from the current schema, one row per key.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { z } from 'zod';
import { configSchema } from '../../src/config/schema.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const docsPath = join(repoRoot, 'docs/configuration.md');

interface Generator {
  MARKER: string;
  renderConfigDocs(schema: unknown): string;
  renderPage(current: string, schema: unknown): string;
}
// Non-literal specifier: the generator is plain JS without type declarations.
const generator = (await import(
  pathToFileURL(join(repoRoot, 'scripts/gen-config-docs.mjs')).href
)) as Generator;

/** The keys of the generated table, in order. */
const keysOf = (page: string): string[] =>
  [...page.slice(page.indexOf(generator.MARKER)).matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]!);

describe('docs/configuration.md', () => {
  const committed = readFileSync(docsPath, 'utf8');

  test('the committed page is what the generator makes from the current configSchema', () => {
    assert.equal(
      committed,
      generator.renderPage(committed, configSchema),
      'docs/configuration.md is out of date: run npm run docs:config',
    );
  });

  test('has a row for every top-level key and for nested keys, with their defaults', () => {
    const keys = keysOf(committed);
    for (const k of Object.keys(configSchema.shape).filter((k) => k !== '$schema'))
      assert.ok(keys.includes(k), `no row for ${k}`);
    assert.ok(keys.includes('listen.port'));
    assert.ok(keys.includes('proxy[].upstream'));
    assert.match(
      committed,
      /^\| `listen\.port` \| `integer 0\.\.65535` \| `8080` \| TCP port; 0 picks a free one\. \|$/m,
    );
  });

  test('a key added to the schema changes the page (the comparison above can fail)', () => {
    const grown = configSchema.extend({
      extra: z.number().int().min(1).default(3).describe('A key | with a pipe.'),
    });
    const page = generator.renderPage(committed, grown);
    assert.notEqual(page, committed);
    assert.match(page, /^\| `extra` \| `integer >= 1` \| `3` \| A key \\\| with a pipe\. \|$/m);
  });

  test('the hand-written part above the marker is kept as it is', () => {
    const edited = `# Edited intro\n\n${committed.slice(committed.indexOf(generator.MARKER))}`;
    assert.equal(generator.renderPage(edited, configSchema), edited);
    assert.throws(() => generator.renderPage('# no marker\n', configSchema), /no marker line/);
  });
});
