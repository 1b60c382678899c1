// The FileAccess contract (src/server/files/access.ts) against every implementation: the same cases
// (test/fixtures/runtimes/files-cases.mjs) run in a child process on each runtime over the build,
// files/node.ts on Node, files/bun.ts on Bun, files/deno.ts on Deno. Real files in a temp folder.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { cases } from '../fixtures/runtimes/files-cases.mjs';
import { FIXTURES, type RuntimeName, runToExit } from '../helpers/runtimes.js';

interface Outcome {
  readonly name: string;
  readonly ok: boolean;
  readonly error?: string;
}

const IMPL: Record<RuntimeName, string> = { node: 'node.ts', bun: 'bun.ts', deno: 'deno.ts' };

for (const runtime of ['node', 'bun', 'deno'] as const) {
  describe(`FileAccess contract: files/${IMPL[runtime]} on ${runtime}`, () => {
    const outcomes = new Map<string, Outcome>();
    let run: { code: number | null; stdout: string; stderr: string };
    before(async () => {
      run = await runToExit(runtime, join(FIXTURES, 'files-contract.mjs'), [], { timeoutMs: 45_000 });
      for (const line of run.stdout.split('\n')) {
        if (line.startsWith('{')) {
          const o = JSON.parse(line) as Outcome;
          outcomes.set(o.name, o);
        }
      }
    });

    for (const c of cases) {
      it(c.name, () => {
        const o = outcomes.get(c.name);
        assert.ok(o !== undefined, `the case did not run (exit ${run.code}): ${run.stderr}`);
        assert.ok(o.ok, o.error);
      });
    }
  });
}
