// The shutdown through the features' own drain() and close() (app/features.ts): the order of the
// phases, a failing part, and Redis last.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { closeFeatures, drainFeatures, type NamedFeature } from '../../../src/server/app/features.js';
import type { RedisPool } from '../../../src/server/redis/pool.js';
import { memoryLogger } from '../../helpers/log.js';

/** A Redis pool that only records when it is closed. */
function recordingRedis(events: string[]): RedisPool {
  return {
    configured: false,
    get: () => {
      throw new Error('not used');
    },
    close: async () => void events.push('redis close'),
    disconnect: () => void events.push('redis dropped'),
  };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('closing through the features (drainFeatures, closeFeatures)', () => {
  it('drain() runs at once; close() only after the requests (closeFeatures) and after its own drain; Redis last', async () => {
    const events: string[] = [];
    let finishDrain = () => {};
    const features: NamedFeature[] = [
      {
        name: 'websocket',
        feature: {
          drain: () => {
            events.push('websocket drain');
            return new Promise<void>((resolve) => {
              finishDrain = () => {
                events.push('websocket drained');
                resolve();
              };
            });
          },
          close: () => void events.push('websocket close'),
        },
      },
      { name: 'proxy', feature: { close: async () => void events.push('proxy close') } },
      { name: 'static', feature: {} },
    ];
    const draining = drainFeatures(features);
    await turn();
    assert.deepEqual(events, ['websocket drain'], 'nothing closes while the requests drain');
    const logger = memoryLogger();
    const closed = closeFeatures(
      draining,
      { redis: recordingRedis(events), logger },
      performance.now() + 5000,
    );
    await turn();
    assert.deepEqual(events, ['websocket drain', 'proxy close'], 'a part still draining is not closed yet');
    finishDrain();
    await closed;
    assert.deepEqual(events, [
      'websocket drain',
      'proxy close',
      'websocket drained',
      'websocket close',
      'redis close',
    ]);
    assert.equal(logger.lines.length, 0, logger.text());
  });

  it('a drain that fails: the feature is still closed, the failure is logged under its name, the rest close', async () => {
    const events: string[] = [];
    const features: NamedFeature[] = [
      {
        name: 'health',
        feature: {
          drain: () => {
            throw new Error('drain broke');
          },
          close: () => void events.push('health close'),
        },
      },
      {
        name: 'proxy',
        feature: {
          close: async () => {
            throw new Error('pool broke');
          },
        },
      },
    ];
    const logger = memoryLogger();
    await closeFeatures(
      drainFeatures(features),
      { redis: recordingRedis(events), logger },
      performance.now(),
    );
    assert.deepEqual(events, ['health close', 'redis close']);
    const failed = logger.lines.filter((l) => l.msg === 'shutdown: close failed');
    assert.deepEqual(
      failed.map((l) => [l.obj.part, (l.obj.err as Error).message]),
      [
        ['health', 'drain broke'],
        ['proxy', 'pool broke'],
      ],
    );
  });
});
