/**
 * Takeover under a backlog: three server processes on Redis, each holding its full prefetch (2,000
 * contacts) of a campaign its numbers cannot send quickly; one is killed with SIGKILL. What it held
 * is read from Redis at the kill (the chunks pending under its consumer name, less the contacts
 * with a final recorded); from the channels' own log: a survivor sends the first of them within the
 * bound docs/scaling.md gives (the lease plus one renewal period, a third of the lease), and all of
 * them before the survivors' own backlog is through (they go ahead of it, not behind 2,000 each).
 * Waits are for conditions, never for times.
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

const KEY = 'redis-takeover-key-0123456789abcdef';
const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const LEASE_MS = 6000;
// Made when the tests run: a file skipped without Redis runs no hook, and leaves nothing behind.
let dir = '';
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sendpool-takeover-'));
});
afterAll(() => {
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

// 3 × 40 a second: far less than the 9,000 contacts posted, so every instance keeps a backlog.
const NUMBERS = ['5511990000001', '5511990000002', '5511990000003'].map((phone) => ({ phone, throughputPerHour: 1_000_000, messagingLimit24h: 1_000_000, messagesPerSecond: 40, status: 'active' }));
const fleet = {
  businesses: [{ id: 1, name: 'Acme', companyId: 1, numbers: NUMBERS, templateTypes: [{ id: 10, name: 'billing', templateIds: [100] }] }],
  templates: [{ id: 100, name: 'bill', text: 'Hi {{1}}', businessIds: [1], status: 'active' }],
};

interface Logged {
  at: number;
  ref: string;
  by: string;
  ok: boolean;
}

const api = keyed(KEY);

describe.skipIf(REDIS_URL === undefined)('server on Redis: a dead instance’s work under a backlog', () => {
  it('is taken over within the lease plus a renewal period, and sent ahead of the survivors’ own backlog', { timeout: 600_000 }, async () => {
    const prefix = testPrefix('takeover');
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
      for (let r = 0; r < 9; r++) {
        const contacts = Array.from({ length: 1000 }, (_, i) => ({ phone_number: `55219${String(80000000 + r * 1000 + i)}`, template_variables: ['x'], data: { ref: `r${r}c${i}` } }));
        const res = await api(urls[r % 3]!, '/messenger/messages/', { business_id: 1, template_type_id: 10, campaign_id: 1, contacts });
        expect(res.status).toBe(202);
      }
      // Every instance is sending and holds a backlog.
      await waitFor(() => names.every((n) => readLog().filter((l) => l.by === n).length >= 100), 'every instance sending');

      await kill(children[1]!);
      const killedAt = Date.now();
      // What the dead instance held, from Redis: its pending chunks, less contacts with a final.
      const queuePrefix = `${prefix}{queue}:`;
      const held = new Set<string>();
      for (const stream of await redis.smembers(`${queuePrefix}active`)) {
        const pending = (await redis.call('XPENDING', stream, 'dispatch', '-', '+', 10_000, 'i1')) as [string, string, number, number][];
        for (const [entryId] of pending) {
          const entry = (await redis.call('XRANGE', stream, entryId, entryId)) as [string, string[]][];
          const body = JSON.parse(entry[0]![1][1]!) as { contacts: { data: { ref: string } }[] };
          const progress = (await redis.call('HGETALL', `${queuePrefix}p:${stream.slice(queuePrefix.length + 2)}:${entryId}`)) as string[];
          const finals = new Set<number>();
          for (let i = 0; i < progress.length; i += 2) if (progress[i]!.startsWith('f')) finals.add(Number(progress[i]!.slice(1)));
          body.contacts.forEach((c, i) => finals.has(i) || held.add(c.data.ref));
        }
      }
      expect(held.size).toBeGreaterThan(500);
      const sentBySurvivors = () => {
        const out = new Map<string, number>();
        for (const l of readLog()) if (l.by !== 'i1' && l.at >= killedAt && held.has(l.ref) && !out.has(l.ref)) out.set(l.ref, l.at);
        return out;
      };
      await waitFor(() => sentBySurvivors().size === held.size, 'every contact the dead instance held sent by a survivor');
      const taken = [...sentBySurvivors().values()].sort((a, b) => a - b);
      const first = taken[0]! - killedAt;
      const last = taken.at(-1)! - killedAt;
      // Ahead of the survivors' own backlog: each survivor that took some over sent, between its
      // first and its last of them, few of its own (those already in flight or coming back).
      const log = readLog();
      const mixed = ['i0', 'i2'].map((n) => {
        const mine = log.filter((l) => l.by === n && l.at >= killedAt);
        const times = mine.filter((l) => held.has(l.ref)).map((l) => l.at);
        if (times.length === 0) return { n, taken: 0, own: 0 };
        const [from, to] = [Math.min(...times), Math.max(...times)];
        return { n, taken: times.length, own: mine.filter((l) => !held.has(l.ref) && l.at > from && l.at < to).length };
      });
      console.log(
        `takeover under a backlog (lease ${LEASE_MS} ms, 3 × 40/s, prefetch 2,000): ${held.size} contacts held by the killed instance; first sent by a survivor ${first} ms after the kill, all ${last} ms after; ${mixed.map((m) => `${m.n} sent ${m.taken} of them and ${m.own} of its own meanwhile`).join(', ')}`,
      );
      for (const m of mixed) expect(m.own, m.n).toBeLessThanOrEqual(Math.max(100, m.taken / 10));
      // docs/scaling.md: at most the lease plus one renewal period (a third of the lease).
      expect(first).toBeLessThanOrEqual(LEASE_MS + LEASE_MS / 3);
    } finally {
      for (const c of children) await kill(c);
      await cleanup(redis, prefix);
      redis.disconnect();
    }
  });
});

if (REDIS_URL === undefined) describe('server on Redis: a dead instance’s work under a backlog', () => it.skip(SKIP_REASON, () => {}));
