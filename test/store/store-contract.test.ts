import { afterAll, describe, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { MemoryStore } from '../../src/core/limits/memory-store.js';
import { RedisStore } from '../../src/redis/index.js';
import { cleanup, connect, SKIP_REASON, TARGETS, testPrefix } from '../redis/helpers.js';
import { ScriptedRedis } from './scripted-redis.js';
import { storeContract } from './store-contract.js';

storeContract('MemoryStore', async () => {
  const clock = new ManualClock(0);
  return { store: new MemoryStore(), clock, settle: async () => {}, close: async () => {}, refillDelayMs: 0 };
});

// The ledger and its driver without Redis, in every run: the scripts answered by their
// transcriptions (scripted-redis.ts; test/redis/scripted-redis.test.ts holds them to the real ones).
storeContract('RedisStore [scripted responder]', async () => {
  const clock = new ManualClock(0);
  const store = new RedisStore({ client: new ScriptedRedis(), prefix: 'scripted:', clock, timeSource: 'clock', leaseTtlMs: 1000 });
  return { store, clock, settle: () => store.settle(), close: async () => void (await store.close()), refillDelayMs: 1000 };
});

if (TARGETS.length === 0) describe('Store contract: RedisStore', () => it.skipIf(true)(SKIP_REASON, () => {}));
for (const target of TARGETS) {
  const prefix = testPrefix('contract');
  const client = connect(target);
  let n = 0;
  storeContract(`RedisStore [${target.name}]`, async () => {
    const clock = new ManualClock(0);
    const store = new RedisStore({ client, prefix: `${prefix}${++n}:`, clock, timeSource: 'clock', leaseTtlMs: 1000 });
    return { store, clock, settle: () => store.settle(), close: async () => void (await store.close()), refillDelayMs: 1000 };
  });
  afterAll(async () => {
    await cleanup(client, prefix);
    client.disconnect();
  });
}
