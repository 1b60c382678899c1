// Runs `code` (an ES module body) in a child Node with --expose-gc and tsx, for the memory accounting
// tests that measure heap with gc(): resolves with the JSON the code writes to stdout.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';

export async function inGcChild<T>(code: string): Promise<T> {
  const child = spawn(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', code],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const [status] = await once(child, 'exit');
  assert.equal(status, 0);
  return JSON.parse(out) as T;
}
