// The client's size budget (issue 13 §1), measured by the same function `npm run bench` prints from
// (bench/client-size.mjs: esbuild bundle + minify, gzip -9, over the built dist/client).
// npm test builds first; run alone, build first (npm run build).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  formatTable,
  measureClient,
  measureExport,
  WEBSOCKET_BUDGET_BYTES,
} from '../../bench/client-size.mjs';

describe('client size (esbuild min + gzip -9 of dist/client)', () => {
  it('ReconnectingWebSocket alone is within 3 KB min+gzip', async (t) => {
    const rows = await measureClient();
    t.diagnostic(`\n${formatTable(rows)}`);
    const ws = rows.find((r) => r.name === 'ReconnectingWebSocket');
    assert.ok(ws, 'the WebSocket client is measured');
    assert.equal(WEBSOCKET_BUDGET_BYTES, 3072);
    assert.ok(
      ws.gzipBytes <= WEBSOCKET_BUDGET_BYTES,
      `ReconnectingWebSocket is ${ws.gzipBytes} B min+gzip, over ${WEBSOCKET_BUDGET_BYTES} B`,
    );
    assert.ok(ws.ok);
  });

  it('one export alone is tree-shaken: smaller than the whole entry, and the postMessage guard is tiny', async () => {
    const [ws, post, all] = await Promise.all([
      measureExport('ReconnectingWebSocket'),
      measureExport('postTo'),
      measureExport(null),
    ]);
    // If the one-export entry kept everything, these would be equal and the per-export report a lie.
    assert.ok(ws.minBytes < all.minBytes, `ReconnectingWebSocket ${ws.minBytes} B vs all ${all.minBytes} B`);
    assert.ok(
      post.minBytes < ws.minBytes,
      `postTo ${post.minBytes} B vs ReconnectingWebSocket ${ws.minBytes} B`,
    );
    assert.ok(ws.gzipBytes < ws.minBytes, 'gzip made it smaller');
  });

  it('ReconnectingWebSocket alone carries none of the cache engine (package.json "sideEffects": false)', async () => {
    const ws = await measureExport('ReconnectingWebSocket');
    // src/http's module initialisers (the date tables, the token table) go only where they are used.
    assert.ok(!ws.text.includes('"Jan"'), 'the date tables of src/http/dates.ts are in the WebSocket bundle');
    assert.ok(!ws.text.includes('charCodeAt(0)]=1'), 'the token table of src/http/lists.ts is in the bundle');
  });

  it('an export that does not exist fails the measurement instead of measuring nothing', async () => {
    await assert.rejects(measureExport('NoSuchExport'));
  });
});
