/**
 * Redis comes back empty under the server on Redis: a redis-server of the test's own, without
 * persistence, shut down with `SHUTDOWN NOSAVE` and started again on the same port, under real
 * server processes (redis-reset-child.ts), each with a state directory of its own. From the
 * channel's log (written by each child before it answers) and the webhook receiver in this process:
 *
 * 1. Two instances live through the reset: each counts it (`sendpool_redis_resets_total 1`) and
 *    logs it; intake answers 503 with `Retry-After` while Redis is away; every contact that got a
 *    202, before or after the reset, is sent or notified final; those accepted after it all get
 *    their final notification (the consumer groups come back), and the webhook configuration is in
 *    Redis again.
 * 2. Every instance restarts with the empty Redis: the state directory says the epoch changed; a
 *    number limited to 500 a day that sent 400 before sends nothing more (its windows are taken as
 *    fully used), and the webhook configuration is written back (ENQUEUED notifications of new
 *    requests arrive with no new configuration).
 *
 * Waits are for conditions, never for times.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_URL, SKIP_REASON } from '../redis/helpers.js';
import { privateRedis, type PrivateRedis } from '../redis/private-redis.js';
import { startReceiver, waitFor, type Receiver } from './helpers.js';
import { keyed, kill, logReader } from './send-log.js';
import { metric, refContacts, startResetChild, type LoggedChild, type ResetChildConfig, type ResetChildSend } from './redis-children.js';

const KEY = 'redis-reset-key-0123456789abcdef';
const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
// Made when the tests run: a file skipped without Redis runs no hook, and leaves nothing behind.
let dir = '';
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sendpool-reset-'));
});
afterAll(() => {
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});
const api = keyed(KEY);

function fleetOf(numbers: readonly { phone: string; throughputPerHour: number; messagingLimit24h: number; messagesPerSecond: number }[]) {
  return {
    businesses: [{ id: 1, name: 'Acme', companyId: 1, numbers: numbers.map((n) => ({ ...n, status: 'active' })), templateTypes: [{ id: 10, name: 'billing', templateIds: [100] }] }],
    templates: [{ id: 100, name: 'bill', text: 'Hi {{1}}', businessIds: [1], status: 'active' }],
  };
}

/** An instance: its process, its address, and what it logged (warn and above) so far. */
type Instance = LoggedChild;

function startInstance(name: string, cfg: Omit<ResetChildConfig, 'key' | 'secret'>): Promise<Instance> {
  return startResetChild(name, { ...cfg, key: KEY, secret: SECRET });
}

/** Posts until a 202 (a 503 while Redis is away or the reset is handled says to come back); answers the 503s met. */
async function postUntilAccepted(urls: readonly string[], body: unknown): Promise<{ refused: number; retryAfter: string[] }> {
  const retryAfter: string[] = [];
  for (let attempt = 0; ; attempt++) {
    const res = await api(urls[attempt % urls.length]!, '/messenger/messages/', body);
    if (res.status === 202) return { refused: retryAfter.length, retryAfter };
    expect(res.status, await res.text()).toBe(503);
    retryAfter.push(res.headers.get('retry-after') ?? '');
    // A client's pause between retries of a refused request (the loop ends on a 202, a condition).
    await new Promise((r) => setTimeout(r, 100));
  }
}

function redisCli(port: number, ...args: string[]): string {
  return execFileSync('redis-cli', ['-p', String(port), ...args], { encoding: 'utf8' }).trim();
}

describe.skipIf(REDIS_URL === undefined)('the server on Redis: Redis comes back empty', () => {
  it('two instances live through it: counted, logged, every 202 sent or notified, work after it sent, configuration back', { timeout: 600_000 }, async () => {
    const redis: PrivateRedis = await privateRedis('none');
    await redis.start();
    const fleetFile = join(dir, 'fleet-alive.json');
    const NUMBERS = [
      { phone: '5511990000001', throughputPerHour: 10_000_000, messagingLimit24h: 10_000_000, messagesPerSecond: 100 },
      { phone: '5511990000002', throughputPerHour: 10_000_000, messagingLimit24h: 10_000_000, messagesPerSecond: 100 },
    ];
    writeFileSync(fleetFile, JSON.stringify(fleetOf(NUMBERS)));
    const logFile = join(dir, 'sends-alive.log');
    const readLog = logReader<ResetChildSend>(logFile);
    const receiver: Receiver = await startReceiver(() => SECRET);
    const instances: Instance[] = [];
    try {
      for (const name of ['a0', 'a1']) instances.push(await startInstance(name, { fleetFile, redisUrl: redis.url, log: logFile, stateDir: join(dir, `state-${name}`) }));
      const urls = instances.map((i) => i.url);
      expect((await api(urls[0]!, '/messenger/config/', { url_hsm_callback: `${receiver.url}/hsm` })).status).toBe(200);

      const before = new Set<string>();
      for (let r = 0; r < 8; r++) {
        const body = { business_id: 1, template_type_id: 10, campaign_id: 1, contacts: refContacts(`b${r}`, 500, 10_000_000 + r * 1000) };
        expect((await api(urls[r % 2]!, '/messenger/messages/', body)).status).toBe(202);
        for (const c of body.contacts) before.add(c.data.ref);
      }
      // Redis goes away with contacts queued, claimed and in flight, and comes back empty.
      await waitFor(() => readLog().length >= 600, '600 sends before the reset');
      const resetAt = Date.now();
      redis.shutdown('nosave');
      // While Redis is away intake refuses (503, Retry-After) instead of answering 202 later.
      let down: Response | undefined;
      await waitFor(async () => {
        // A kept-alive connection the server closed as it was reused is no answer: ask again.
        down = await api(urls[0]!, '/messenger/messages/', { business_id: 1, template_type_id: 10, campaign_id: 3, contacts: refContacts('x', 1, 30_000_000) }).catch((e: unknown) => {
          if ((e as { cause?: { code?: string } }).cause?.code !== 'UND_ERR_SOCKET') throw e;
          return undefined;
        });
        return down?.status === 503;
      }, 'a 503 while Redis is away');
      expect(Number(down!.headers.get('retry-after'))).toBeGreaterThan(0);
      await redis.start();

      const after = new Set<string>();
      let refusedAfter = 0;
      for (let r = 0; r < 4; r++) {
        const body = { business_id: 1, template_type_id: 10, campaign_id: 2, contacts: refContacts(`a${r}`, 500, 20_000_000 + r * 1000) };
        refusedAfter += (await postUntilAccepted(urls, body)).refused;
        for (const c of body.contacts) after.add(c.data.ref);
      }

      // Every instance noticed the reset, counted it and said so.
      for (const i of instances) await waitFor(async () => (await metric(i.url, 'sendpool_redis_resets_total')) === 1, 'the reset counted');
      for (const i of instances) expect(i.out).toContain('redis-reset');

      const finals = new Map<string, string>();
      let seen = 0;
      const notified = () => {
        const hsm = receiver.all('/hsm') as { status: string; data?: { ref?: string } }[];
        for (; seen < hsm.length; seen++) {
          const n = hsm[seen]!;
          if (n.data?.ref !== undefined && n.status !== 'ENQUEUED') finals.set(n.data.ref, n.status);
        }
        return finals;
      };
      // Work accepted after the reset is sent and notified (the consumer groups came back).
      await waitFor(() => [...after].every((ref) => notified().get(ref) === 'SENT'), 'a SENT notification for every contact accepted after the reset');
      // Work accepted before it: sent (the log) or notified, none dropped.
      const sentRefs = () => new Set(readLog().map((l) => l.ref));
      await waitFor(() => {
        const sent = sentRefs();
        const f = notified();
        return [...before].every((ref) => sent.has(ref) || f.has(ref));
      }, 'every contact accepted before the reset sent or notified');
      // Settled: nothing held, no notification waiting, on either instance (then the counts below are final).
      for (const i of instances) {
        await waitFor(async () => (await metric(i.url, 'sendpool_redis_held_contacts')) === 0, 'nothing held');
        await waitFor(async () => (await (await fetch(`${i.url}/metrics`)).text()).includes('sendpool_queue_depth{queue="webhooks"} 0'), 'no notification waiting');
      }
      // The webhook configuration is in Redis again (written back by the instances that held it).
      expect(redisCli(redis.port, 'HGET', 'sendpool:{config}:webhooks', '1')).toContain(`${receiver.url}/hsm`);

      const log = readLog();
      const byRef = new Map<string, number>();
      for (const l of log) byRef.set(l.ref, (byRef.get(l.ref) ?? 0) + 1);
      const twice = [...byRef.values()].filter((n) => n > 1).length;
      if (process.env['RESET_DEBUG']) {
        const dups = [...byRef].filter(([, n]) => n > 1).map(([ref]) => ref);
        const kinds = new Map<string, number>();
        for (const ref of dups) {
          const ls = log.filter((l) => l.ref === ref);
          const k = `${ref[0]} ${ls.map((l) => `${l.by}:${l.id.slice(l.id.indexOf('.'))}@${l.at - resetAt}`).join(',')}`;
          kinds.set(k, (kinds.get(k) ?? 0) + 1);
        }
        console.log([...kinds].sort((x, y) => y[1] - x[1]).slice(0, 40));
        console.log(
          instances
            .map((i) => i.out)
            .join('\n')
            .split('\n')
            .filter((l) => l.includes('redis-reset'))
            .join('\n'),
        );
      }
      const silent = [...before].filter((ref) => !notified().has(ref)).length;
      console.log(
        `reset with 2 instances alive: ${before.size} contacts accepted before, ${after.size} after (${refusedAfter} requests refused with 503 meanwhile); ${log.length} sends, ${twice} contacts sent twice; ${silent} contacts accepted before the reset sent without a final notification (theirs was in the outbox Redis lost)`,
      );
    } finally {
      for (const i of instances) await kill(i.child);
      redis.shutdown('nosave');
      await receiver.close();
    }
  });

  it('every instance restarted with it: noticed from the state directory, a 500/24 h number sends no more than 500, the configuration back', { timeout: 300_000 }, async () => {
    const redis = await privateRedis('none');
    await redis.start();
    const fleetFile = join(dir, 'fleet-restart.json');
    const phone = '5511990000009';
    writeFileSync(fleetFile, JSON.stringify(fleetOf([{ phone, throughputPerHour: 100_000, messagingLimit24h: 500, messagesPerSecond: 100 }])));
    const logFile = join(dir, 'sends-restart.log');
    const readLog = logReader<ResetChildSend>(logFile);
    const receiver = await startReceiver(() => SECRET);
    const cfg = { fleetFile, redisUrl: redis.url, log: logFile, stateDir: join(dir, 'state-r0') };
    let instance = await startInstance('r0', cfg);
    try {
      expect((await api(instance.url, '/messenger/config/', { url_hsm_callback: `${receiver.url}/hsm` })).status).toBe(200);
      const first = await api(instance.url, '/messenger/messages/', { business_id: 1, template_type_id: 10, campaign_id: 1, contacts: refContacts('p', 400, 40_000_000) });
      expect(first.status, await first.clone().text()).toBe(202);
      const sentNotified = () => (receiver.all('/hsm') as { status: string }[]).filter((n) => n.status === 'SENT').length;
      await waitFor(() => readLog().length === 400 && sentNotified() === 400, '400 sent and notified');

      // Everything goes down: the instance killed, Redis stopped without saving; both come back.
      await kill(instance.child);
      redis.shutdown('nosave');
      await redis.start();
      instance = await startInstance('r0', cfg);

      // Noticed from the epoch kept in the state directory, counted, and the configuration written back.
      await waitFor(async () => (await metric(instance.url, 'sendpool_redis_resets_total')) === 1, 'the reset counted after the restart');
      expect(instance.out).toContain('redis-reset');
      const config = (await (await api(instance.url, '/messenger/config/')).json()) as { url_hsm_callback: string | null };
      expect(config.url_hsm_callback).toBe(`${receiver.url}/hsm`);

      // 300 more contacts: accepted and announced (ENQUEUED, to the configuration written back)...
      const enqueued = () => (receiver.all('/hsm') as { status: string; data?: { ref?: string } }[]).filter((n) => n.status === 'ENQUEUED' && n.data?.ref?.startsWith('q') === true).length;
      await postUntilAccepted([instance.url], { business_id: 1, template_type_id: 10, campaign_id: 2, contacts: refContacts('q', 300, 50_000_000) });
      await waitFor(() => enqueued() === 300, 'the ENQUEUED notifications of the new contacts');
      // ...claimed by the engine, which sees no capacity: the number's day was taken as used.
      await waitFor(async () => (await metric(instance.url, 'sendpool_redis_held_contacts')) === 300, 'the new contacts claimed');
      await waitFor(async () => {
        const businesses = (await (await api(instance.url, '/messenger/businesses/')).json()) as { template_types: { output: number }[] }[];
        return businesses[0]?.template_types[0]?.output === 0;
      }, 'the number without capacity');
      await waitFor(() => instance.out.includes('capacity: redis-reset'), 'the capacity reset logged');
      expect(readLog().filter((l) => l.phone === phone).length).toBeLessThanOrEqual(500);
      console.log(`all restarted: ${readLog().length} sends of a 500/24 h number (400 before the reset), 300 contacts held without capacity`);
    } finally {
      await kill(instance.child);
      redis.shutdown('nosave');
      await receiver.close();
    }
  });
});

if (REDIS_URL === undefined) describe('the server on Redis: Redis comes back empty', () => it.skip(SKIP_REASON, () => {}));
