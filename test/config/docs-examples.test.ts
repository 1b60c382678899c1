// Every gatehouse.config.json example of the user docs (README.md and docs/*.md) loads (issue 26 §3:
// the README's examples moved to docs/, and its recipes are new). A ```json block counts as a config
// example when one of its top-level keys is a config key (not a package.json or a `check --json`
// report) and it elides nothing (no `...`, as the auth sketch in docs/policy.md, whose hash is elided).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import { configSchema } from '../../src/config/schema.js';
import { REPO_ROOT } from '../helpers/page-server.js';

const PAGES = ['README.md', ...readdirSync(join(REPO_ROOT, 'docs')).map((f) => `docs/${f}`)].filter((f) =>
  f.endsWith('.md'),
);
const KEYS = new Set(Object.keys(configSchema.shape));

describe('the config examples of README.md and docs/*.md load', () => {
  let examples = 0;
  for (const page of PAGES) {
    const text = readFileSync(join(REPO_ROOT, page), 'utf8');
    for (const [i, m] of [...text.matchAll(/^```json\n([\s\S]*?)^```$/gm)].entries()) {
      const body = m[1]!;
      const value = JSON.parse(body) as Record<string, unknown>;
      if (!Object.keys(value).some((k) => KEYS.has(k)) || body.includes('...')) continue;
      examples++;
      it(`${page}, json block ${i + 1} (${Object.keys(value).join(', ')})`, () => {
        parseConfig(value);
      });
    }
  }
  it('finds the examples (the recipes, the reference, the topic pages)', () =>
    assert.ok(examples >= 12, `${examples}`));
});
