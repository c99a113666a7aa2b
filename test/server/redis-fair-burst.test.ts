/**
 * Fair shares of an hourly number's opening burst between live instances: three server processes
 * on Redis (prefetch 2,000 each, more than the campaign), one number of 300 an hour (its opening
 * burst is the hour's 300), and 3,000 contacts posted to one instance. Before, the instances that
 * fed first claimed the whole campaign and the third held nothing, so it never asked the number
 * for its share: the burst went 149 / 150 / 2. An instance now holds at most an even part of the
 * fleet's backlog (shared-dispatch.ts `fairHold`), so each asks and each sends a third of the burst.
 * The number sends 80 a second (Cloud API's default throughput), so the burst lasts about 4 s.
 * The record is the channels' own log (every attempt, with its instance). Waits are for conditions.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_URL, SKIP_REASON, cleanup, connect, testPrefix } from '../redis/helpers.js';
import { waitFor } from './helpers.js';
import { keyed, kill, logReader } from './send-log.js';
import { startRedisChildren } from './redis-children.js';

const KEY = 'redis-fair-burst-key-0123456789abcdef';
const SECRET = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
const LEASE_MS = 6000;
const BURST = 300;
// Made when the tests run: a file skipped without Redis runs no hook, and leaves nothing behind.
let dir = '';
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sendpool-fair-burst-'));
});
afterAll(() => {
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

const fleet = {
  businesses: [
    {
      id: 1,
      name: 'Acme',
      companyId: 1,
      numbers: [{ phone: '5511990000001', throughputPerHour: BURST, messagingLimit24h: 1_000_000, messagesPerSecond: 80, status: 'active' }],
      templateTypes: [{ id: 10, name: 'billing', templateIds: [100] }],
    },
  ],
  templates: [{ id: 100, name: 'bill', text: 'Hi {{1}}', businessIds: [1], status: 'active' }],
};

interface Logged {
  at: number;
  ref: string;
  by: string;
}

const api = keyed(KEY);

describe.skipIf(REDIS_URL === undefined)('server on Redis: an hourly burst between live instances', () => {
  it('goes in even parts (within 20 %) to every instance, not to those that fed first', { timeout: 300_000 }, async () => {
    const prefix = testPrefix('fair-burst');
    const fleetFile = join(dir, 'fleet.json');
    const logFile = join(dir, 'sends.log');
    writeFileSync(fleetFile, JSON.stringify(fleet));
    const readLog = logReader<Logged>(logFile);
    const names = ['i0', 'i1', 'i2'];
    let children: ChildProcess[] = [];
    const redis = connect(REDIS_URL);
    try {
      const started = await startRedisChildren(names, (name) => ({ fleetFile, redisUrl: REDIS_URL!, prefix, log: logFile, key: KEY, name, secret: SECRET, leaseMs: LEASE_MS, prefetch: 2000 }));
      children = started.children;
      const urls = started.urls;
      // Every instance has beaten (its heartbeat is in the queue's set of live instances).
      await waitFor(async () => (await redis.zcard(`${prefix}{queue}:instances`)) === 3, 'three live instances');
      // Refs ending in a letter: the child channel sends them all (no failures, no retries).
      const contacts = Array.from({ length: 3000 }, (_, i) => ({ phone_number: `55219${String(80000000 + i)}`, template_variables: ['x'], data: { ref: `c${i}x` } }));
      const res = await api(urls[0]!, '/messenger/messages/', { business_id: 1, template_type_id: 10, campaign_id: 1, contacts });
      expect(res.status).toBe(202);
      await waitFor(() => readLog().length >= BURST, 'the opening burst sent');
      const burst = readLog().slice(0, BURST);
      const parts = names.map((n) => burst.filter((l) => l.by === n).length);
      console.log(`opening burst of a ${BURST}/h number between three live instances: ${parts.join(' / ')}`);
      for (const [i, part] of parts.entries()) expect(Math.abs(part - BURST / 3), names[i]).toBeLessThanOrEqual((BURST / 3) * 0.2);
    } finally {
      for (const c of children) await kill(c);
      await cleanup(redis, prefix);
      redis.disconnect();
    }
  });
});

if (REDIS_URL === undefined) describe('server on Redis: an hourly burst between live instances', () => it.skip(SKIP_REASON, () => {}));
