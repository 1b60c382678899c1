// `node bench/ws-echo.mjs` run briefly end to end: both echo servers answer the handshakes and the
// ratio line is printed. (Its Gatehouse server called handleUpgrade with the pre-entry signature, so
// every handshake hung up and `npm run bench` stopped there.) npm test builds first; run alone, build first.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

describe('bench/ws-echo.mjs', () => {
  it('a one-second round measures Gatehouse and bare ws and prints the ratio against the target', () => {
    const script = fileURLToPath(new URL('../../bench/ws-echo.mjs', import.meta.url));
    const r = spawnSync(process.execPath, [script, '--rounds', '1', '--duration', '1', '--warmup', '0'], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^\| gatehouse \| [\d,]+ ± \d+ \| \d+\.\d\dx \|/m);
    assert.match(r.stdout, /^\| bare-ws \| [\d,]+ ± \d+ \| 1\.00x \|/m);
    assert.match(r.stdout, /gatehouse \/ bare ws, target >= 0\.9x: messages\/s \d+\.\d\dx/);
  });
});
