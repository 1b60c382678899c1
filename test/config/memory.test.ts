// The memory budget of a serving process (src/config/memory.ts, issue 40), table-style: which bounds a
// config sets, the budget derived from them or configured or capped by a container, the heap it leaves,
// and the one-line refusal naming the keys to lower when the bounds cannot fit.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import {
  CONNECTION_BYTES,
  HEAP_HEADROOM_BYTES,
  MIN_HEAP_BYTES,
  memoryBounds,
  memoryBudget,
  PRIMARY_RESERVE_BYTES,
  RUNTIME_RESERVE_BYTES,
} from '../../src/config/memory.js';
import type { GatehouseConfigInput } from '../../src/config/schema.js';

const MiB = 1024 * 1024;
const bounds = (c: GatehouseConfigInput) => memoryBounds(parseConfig({ root: '.', ...c }));

describe('memoryBounds', () => {
  const rows: [string, GatehouseConfigInput, [string, number][]][] = [
    ['the defaults: the file view', {}, [['static.memoryCacheBytes', 64 * MiB]]],
    [
      'a memory cache on a proxy route: its maxSizeBytes',
      {
        proxy: [
          { prefix: '/a', upstream: 'http://127.0.0.1:1' },
          { prefix: '/b', upstream: 'http://127.0.0.1:1', cache: { enabled: true } },
        ],
      },
      [
        ['static.memoryCacheBytes', 64 * MiB],
        ['proxy[1].cache.maxSizeBytes', 64 * MiB],
      ],
    ],
    [
      'a disk cache: its in-memory tier (16 MiB unless set)',
      { proxy: [{ prefix: '/a', upstream: 'http://127.0.0.1:1', cache: { enabled: true, store: 'disk' } }] },
      [
        ['static.memoryCacheBytes', 64 * MiB],
        ['proxy[0].cache.memoryCacheBytes', 16 * MiB],
      ],
    ],
    [
      'WebSocket send queues count once the clients are bounded',
      {
        limits: { maxConnections: 100 },
        websocket: [{ path: '/ws', mode: 'echo', maxBufferedBytes: 2 * MiB }],
      },
      [
        ['static.memoryCacheBytes', 64 * MiB],
        ['limits.maxConnections x websocket[].maxBufferedBytes', 200 * MiB],
      ],
    ],
    [
      'bounded connections: their send queues count, 160 KiB each (a download whose client reads slowly)',
      {
        limits: { maxConnections: 1000 },
        websocket: [{ path: '/ws', mode: 'echo', maxBufferedBytes: 1024 }],
      },
      [
        ['static.memoryCacheBytes', 64 * MiB],
        ['limits.maxConnections x 160 KiB (a send queue)', 1000 * CONNECTION_BYTES],
      ],
    ],
    [
      'WebSocket send queues with no bound on clients: not a bound',
      { websocket: [{ path: '/ws', mode: 'echo' }] },
      [['static.memoryCacheBytes', 64 * MiB]],
    ],
  ];
  for (const [name, config, want] of rows)
    it(name, () => {
      assert.deepEqual(
        bounds(config).map((b) => [b.key, b.bytes]),
        want,
      );
    });
});

describe('memoryBudget', () => {
  const defaults = bounds({
    proxy: [{ prefix: '/a', upstream: 'http://127.0.0.1:1', cache: { enabled: true } }],
  });
  const derived = 128 * MiB + HEAP_HEADROOM_BYTES + RUNTIME_RESERVE_BYTES;

  it('from the bounds: bounds + heap headroom + runtime reserve; the heap is the headroom', () => {
    assert.deepEqual(memoryBudget({ bounds: defaults, processes: 1 }), {
      budgetBytes: derived,
      source: 'the bounds',
      boundsBytes: 128 * MiB,
      heapBytes: HEAP_HEADROOM_BYTES,
    });
  });

  it('limits.memoryBytes: the heap is what the bounds and the runtime leave of it', () => {
    const b = memoryBudget({ bounds: defaults, configuredBytes: 1024 * MiB, processes: 1 });
    assert.ok(!('error' in b));
    assert.equal(b.source, 'limits.memoryBytes');
    assert.equal(b.heapBytes, 1024 * MiB - 128 * MiB - RUNTIME_RESERVE_BYTES);
  });

  it('a container below the budget: the container wins', () => {
    const b = memoryBudget({ bounds: defaults, containerBytes: 340 * MiB, processes: 1 });
    assert.ok(!('error' in b));
    assert.equal(b.source, 'the container');
    assert.equal(b.budgetBytes, 340 * MiB);
  });

  it('a container above the budget: the budget stays', () => {
    const b = memoryBudget({ bounds: defaults, containerBytes: 8 * 1024 * MiB, processes: 1 });
    assert.ok(!('error' in b));
    assert.equal(b.source, 'the bounds');
  });

  it('workers share the container less the primary reserve', () => {
    const b = memoryBudget({ bounds: defaults, containerBytes: 780 * MiB, processes: 2 });
    assert.ok(!('error' in b));
    assert.equal(b.budgetBytes, Math.floor((780 * MiB - PRIMARY_RESERVE_BYTES) / 2));
  });

  it('bounds that leave less than the least heap: refused, naming the keys, largest first', () => {
    const big = bounds({
      static: { memoryCacheBytes: 32 * MiB },
      proxy: [
        { prefix: '/a', upstream: 'http://127.0.0.1:1', cache: { enabled: true, maxSizeBytes: 512 * MiB } },
      ],
    });
    const r = memoryBudget({ bounds: big, containerBytes: 512 * MiB, processes: 1 });
    assert.ok('error' in r);
    assert.match(r.error, /^the memory budget 512 MiB, from the container, leaves 0 MiB of heap/);
    assert.match(
      r.error,
      /lower proxy\[0\]\.cache\.maxSizeBytes \(512 MiB\), static\.memoryCacheBytes \(32 MiB\), or give the container more memory$/,
    );
    assert.ok(!r.error.includes('\n'));
  });

  it('limits.memoryBytes too small for the bounds: refused, saying to raise it', () => {
    const r = memoryBudget({ bounds: defaults, configuredBytes: 256 * MiB, processes: 1 });
    assert.ok('error' in r);
    assert.match(r.error, /or raise limits\.memoryBytes$/);
  });

  it('exactly the least heap: accepted', () => {
    const r = memoryBudget({
      bounds: defaults,
      configuredBytes: 128 * MiB + RUNTIME_RESERVE_BYTES + MIN_HEAP_BYTES,
      processes: 1,
    });
    assert.ok(!('error' in r));
    assert.equal(r.heapBytes, MIN_HEAP_BYTES);
  });
});
