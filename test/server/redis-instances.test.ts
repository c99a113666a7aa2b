/**
 * Three server processes on one Redis (its own, with AOF, started by this test): 20,000 contacts
 * posted to all three, one instance killed with SIGKILL mid-run and never restarted, Redis killed
 * and restarted from its AOF mid-run. From the channel's own log (written by each child before it
 * answers) and the webhook receiver in this process:
 * - every contact that got a 202 reached its final outcome, and its final HSM notification came
 *   exactly once, whichever instance sent it (the survivors finished the dead one's work);
 * - no number exceeded its hour, 24 h or per-second window, all instances together;
 * - contacts sent twice are at most what was in flight at the kill, each under one message id.
 * Waits are for conditions, never for times.
 */
import { type ChildProcess, execFileSync, fork, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { windowViolation } from '../core/window-check.js';
import { REDIS_CLUSTER, REDIS_URL, SKIP_REASON, cleanup, connect, testPrefix } from '../redis/helpers.js';
import { builtChild } from './built-child.js';
import { startReceiver, waitFor } from './helpers.js';
import { freePort, keyed, kill, logReader } from './send-log.js';

const KEY = 'redis-instances-key-0123456789abcdef';
const SECRET = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
/** The instances' lease of held work (ms). */
const LEASE_MS = 5_000;
// Made when the tests run: a file skipped without Redis runs no hook, and leaves nothing behind.
let dir = '';
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sendpool-instances-'));
});
afterAll(() => {
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

const NUMBERS = [
  { phone: '5511990000001', throughputPerHour: 100_000, messagingLimit24h: 100_000, messagesPerSecond: 300 },
  { phone: '5511990000002', throughputPerHour: 100_000, messagingLimit24h: 100_000, messagesPerSecond: 300 },
  { phone: '5511990000003', throughputPerHour: 100_000, messagingLimit24h: 100_000, messagesPerSecond: 300 },
];
const fleet = {
  businesses: [{ id: 1, name: 'Acme', companyId: 1, numbers: NUMBERS.map((n) => ({ ...n, status: 'active' })), templateTypes: [{ id: 10, name: 'billing', templateIds: [100, 101] }] }],
  templates: [
    { id: 100, name: 'bill', text: 'Hi {{1}}', businessIds: [1], status: 'active' },
    { id: 101, name: 'bill_b', text: 'Hello {{1}}', businessIds: [1], status: 'active' },
  ],
};

interface Logged {
  at: number;
  phone: string;
  ref: string;
  id: string;
  by: string;
  ok: boolean;
}

/** A redis-server of this test's own, with AOF fsynced at every write, in `dir`. */
function startRedis(port: number): ChildProcess {
  return spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'yes', '--appendfsync', 'always'], { stdio: 'ignore' });
}

function redisUp(port: number): boolean {
  try {
    return execFileSync('redis-cli', ['-p', String(port), 'ping'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() === 'PONG';
  } catch {
    return false;
  }
}

const api = keyed(KEY);

/**
 * Where the instances run: a redis-server of the test's own with AOF, killed and restarted mid-run;
 * and the Redis Cluster of the Redis tests (no restart there: its nodes keep no AOF).
 */
const TARGETS = [
  ...(REDIS_URL !== undefined ? [{ name: 'single, restarted', cluster: undefined }] : []),
  ...(REDIS_CLUSTER !== undefined ? [{ name: 'cluster', cluster: `redis-cluster://${REDIS_CLUSTER}` }] : []),
];

describe.skipIf(TARGETS.length === 0).each(TARGETS)('three instances on Redis ($name): one killed', ({ cluster }) => {
  it('every 202 reaches one final notification, no window exceeded, re-sends bounded', { timeout: 600_000 }, async () => {
    const port = await freePort();
    let redis = cluster === undefined ? startRedis(port) : undefined;
    if (cluster === undefined) await waitFor(() => redisUp(port), 'redis-server up');
    const prefix = cluster === undefined ? 'sendpool:' : testPrefix('instances');
    const fleetFile = join(dir, 'fleet.json');
    // A log (and address files) per target: each run starts from nothing.
    const logFile = join(dir, `sends-${cluster === undefined ? 'single' : 'cluster'}.log`);
    writeFileSync(fleetFile, JSON.stringify(fleet));
    const readLog = logReader<Logged>(logFile);
    const names = ['i0', 'i1', 'i2'];
    const children: ChildProcess[] = [];
    const urls: string[] = [];
    const receiver = await startReceiver(() => SECRET);
    try {
      // The three start together (plain node on the built package, test/server/built-child.ts).
      for (const name of names) {
        // A lease of 5 s: on a loaded machine a live instance may stall for seconds, and one stalled
        // past its lease has its chunks taken over too (re-sends beyond the killed one's in flight).
        const cfg = { fleetFile, redisUrl: cluster ?? `redis://127.0.0.1:${port}`, prefix, log: logFile, key: KEY, name, secret: SECRET, leaseMs: LEASE_MS };
        children.push(
          fork(builtChild(join(import.meta.dirname, 'redis-child.ts')), [], {
            execArgv: [],
            env: { ...process.env, SENDPOOL_REDIS_CHILD: JSON.stringify(cfg) },
            stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
          }),
        );
      }
      for (const name of names) {
        const address = `${logFile}.${name}.address`;
        await waitFor(() => existsSync(address) && readFileSync(address, 'utf8').length > 0, `${name} listening`);
        urls.push(readFileSync(address, 'utf8'));
      }
      // Configured on one instance: the configuration is every instance's (kept in Redis).
      expect((await api(urls[0]!, '/messenger/config/', { url_hsm_callback: `${receiver.url}/hsm`, url_campaign_webhook: `${receiver.url}/campaign` })).status).toBe(200);

      const alive = new Set([0, 1, 2]);
      const accepted = new Set<string>();
      const smsAccepted = new Set<string>();
      const duplicated = new Set<string>();
      const requests = 40;
      let posted = 0;
      // What each request met (instance, answer, contacts refused): printed when a contact goes missing.
      const history: string[][] = Array.from({ length: requests }, () => []);
      // 202s whose refused contacts the answer does not list (expected: none, see below).
      const unexplained: string[] = [];
      const poster = (async () => {
        for (let r = 0; r < requests; r++) {
          if (r % 4 === 0) {
            // An SMS batch too, to any instance: promised only with a 202, whatever dies after.
            const items = Array.from({ length: 50 }, (_, i) => ({
              message: `SMS ${i}`,
              phone: `55119${String(70000000 + r * 100 + i)}`,
              reference: `s${r}i${i}`,
              url_callback_dlr: `${receiver.url}/dlr`,
            }));
            for (let attempt = 0; ; attempt++) {
              const target = [...alive][(r + attempt) % alive.size]!;
              try {
                const res = await api(urls[target]!, '/sms/messages/', items);
                if (res.status === 202) for (const it of items) smsAccepted.add(it.reference);
                if (res.status === 202 || res.status === 422) break;
              } catch {
                // Died mid-request: nothing promised.
              }
            }
          }
          const contacts = Array.from({ length: 500 }, (_, i) => ({ phone_number: `55219${String(80000000 + r * 1000 + i)}`, template_variables: ['x'], data: { ref: `r${r}c${i}` } }));
          for (let attempt = 0; ; attempt++) {
            const target = [...alive][(r + attempt) % alive.size]!;
            try {
              const res = await api(urls[target]!, '/messenger/messages/', { business_id: 1, template_type_id: 10, campaign_id: 1, max_retries: 2, retry_interval: 0, contacts });
              if (res.status === 202) {
                // A retry after an instance died mid-request takes over the phones that request
                // reserved (the fence); it finds them refused as duplicated only if that request
                // was committed before the death (then they are sent from its chunks).
                // The body lists the first 100 rejections (`rejected` counts them all); the earlier
                // attempt reserved the request's phones in one script, so they are refused together.
                const body = (await res.json()) as { accepted: number; rejected: number; rejections: { index: number }[] };
                history[r]!.push(`i${target}: 202, ${body.rejected} refused`);
                if (body.rejected > body.rejections.length && body.accepted > 0) unexplained.push(`request ${r}: ${body.rejected} refused, ${body.accepted} accepted`);
                const refused = new Set(body.accepted === 0 ? contacts.map((_, i) => i) : body.rejections.map((x) => x.index));
                contacts.forEach((c, i) => (refused.has(i) ? duplicated.add(c.data.ref) : accepted.add(c.data.ref)));
              } else history[r]!.push(`i${target}: ${res.status}`);
              if (res.status === 202 || res.status === 422) break;
            } catch (e) {
              // The instance died mid-request: nothing promised; another one takes it.
              history[r]!.push(`i${target}: ${e instanceof Error ? e.message : String(e)}`);
            }
          }
          posted++;
        }
      })();

      // Instance 1 dies once sending is well under way; Redis dies and comes back later.
      await waitFor(() => readLog().length >= 3000, '3,000 sends before the kill');
      const inFlightBound = 1000; // the dispatch worker's maxInFlight
      await kill(children[1]!);
      const killedAt = Date.now();
      alive.delete(1);
      let redisBackAt: number | undefined;
      if (redis !== undefined) {
        await waitFor(() => readLog().length >= 7000, '7,000 sends before Redis restarts');
        await kill(redis);
        await waitFor(() => !redisUp(port), 'redis-server down');
        redis = startRedis(port);
        await waitFor(() => redisUp(port), 'redis-server back (from its AOF)');
        redisBackAt = Date.now();
      }
      await poster;
      expect(posted).toBe(requests);
      expect(unexplained, 'requests partly refused beyond the 100 listed').toEqual([]);

      const final = new Map<string, number>();
      let seen = 0;
      const finals = () => {
        const hsm = receiver.all('/hsm') as { status: string; data?: { ref?: string } }[];
        for (; seen < hsm.length; seen++) {
          const n = hsm[seen]!;
          const ref = n.data?.ref;
          if (ref !== undefined && (ref.endsWith('3') ? n.status === 'FAILED' : n.status === 'SENT')) final.set(ref, (final.get(ref) ?? 0) + 1);
        }
        let count = 0;
        for (const ref of accepted) if (final.has(ref)) count++;
        return count;
      };
      try {
        await waitFor(() => finals() === accepted.size, 'a final notification for every accepted contact');
      } catch (e) {
        // What the next look needs: which contacts, and whether any instance sent them at all.
        const missing = [...accepted].filter((ref) => !final.has(ref));
        const sentRefs = new Set(readLog().map((l) => l.ref));
        console.log(`${missing.length} contacts without a final notification (${missing.filter((ref) => sentRefs.has(ref)).length} of them in the send log), e.g. ${missing.slice(0, 10).join(', ')}`);
        const statuses = new Map<string, string[]>();
        for (const n of receiver.all('/hsm') as { status: string; data?: { ref?: string } }[]) {
          const ref = n.data?.ref;
          if (ref !== undefined && !final.has(ref)) statuses.set(ref, [...(statuses.get(ref) ?? []), n.status]);
        }
        const kinds = new Map<string, number>();
        for (const ref of missing) kinds.set((statuses.get(ref) ?? []).join('>') || 'none', (kinds.get((statuses.get(ref) ?? []).join('>') || 'none') ?? 0) + 1);
        console.log(`their notifications: ${[...kinds].map(([k, n]) => `${k} x${n}`).join(', ')}; the kill at send ${3000}`);
        const requestsMissing = new Set(missing.map((ref) => Number(ref.slice(1, ref.indexOf('c')))));
        for (const r of requestsMissing) console.log(`request ${r}: ${history[r]!.join('; ')}`);
        throw e;
      }
      // Every accepted contact's ENQUEUED too: its request's run, delivered by the instance that claimed
      // it, or again by the one that took it over.
      const enqueued = () => {
        const refs = new Set((receiver.all('/hsm') as { status: string; data?: { ref?: string } }[]).filter((n) => n.status === 'ENQUEUED').map((n) => n.data?.ref));
        return [...accepted].filter((ref) => !refs.has(ref)).length;
      };
      await waitFor(() => enqueued() === 0, 'an ENQUEUED for every accepted contact');
      const dlrFor = () => new Set((receiver.all('/dlr') as { reference: string | null; status: string }[]).filter((d) => d.status === 'SENT').map((d) => d.reference));
      await waitFor(() => [...smsAccepted].every((ref) => dlrFor().has(ref)), 'a DLR for every accepted SMS');
      expect(smsAccepted.size).toBe(500);
      expect(accepted.size + duplicated.size).toBeGreaterThanOrEqual(20_000);

      const log = readLog();
      // The final notification came once per contact (a FAILED of a first attempt that is retried is
      // not final: the contacts ending in 3 fail every attempt, and are counted at their last).
      const twice = [...final].filter(([ref, n]) => n > 1 && !ref.endsWith('3')).map(([ref]) => ref);
      expect(twice, 'contacts with two SENT notifications').toEqual([]);
      // Sent twice: at most what was in flight at the kill, each under one message id.
      const okSends = new Map<string, string[]>();
      for (const l of log) if (l.ok) okSends.set(l.ref, [...(okSends.get(l.ref) ?? []), l.id]);
      const resent = [...okSends.values()].filter((ids) => ids.length > 1);
      expect(
        resent.filter((ids) => new Set(ids).size > 1),
        'contacts sent under two message ids',
      ).toEqual([]);
      expect(resent.length).toBeLessThanOrEqual(inFlightBound);
      for (const ref of accepted) if (!ref.endsWith('3')) expect(okSends.has(ref), ref).toBe(true);
      // The survivors sent what the dead instance had taken.
      const byDead = new Set(log.filter((l) => l.by === 'i1').map((l) => l.ref));
      expect(byDead.size).toBeGreaterThan(0);
      for (const n of NUMBERS) {
        const sends = log.filter((l) => l.phone === n.phone).map((l) => ({ at: l.at, count: 1 }));
        expect(windowViolation(sends, { perHour: n.throughputPerHour, per24h: n.messagingLimit24h, perSecond: n.messagesPerSecond }), n.phone).toBeUndefined();
      }
      // One statistics batch counts the whole campaign, sent by three instances across a death (and a
      // Redis restart): every contact once. Contacts of requests that died before their 202 may be
      // in it too (accepted in Redis, answered to nobody); each request has 50 refs ending in 3.
      type Stats = {
        count_total: number;
        count_remaining: number;
        count_sent: number;
        count_does_not_exist: number;
        count_failed: number;
        count_processed: number;
        count_duplicated: number;
        status: string;
      };
      const lastStats = () =>
        (receiver.all('/campaign') as { campaigns: (Stats & { campaign_id: number })[] }[])
          .flatMap((b) => b.campaigns)
          .filter((c) => c.campaign_id === 1)
          .sort((x, y) => x.count_processed - y.count_processed || Number(x.status === 'FINISHED') - Number(y.status === 'FINISHED'))
          .at(-1);
      await waitFor(() => lastStats()?.status === 'FINISHED' && lastStats()!.count_total >= accepted.size, 'a statistics batch of the finished campaign');
      const stats = lastStats()!;
      expect(stats.count_remaining).toBe(0);
      expect(stats.count_total % 500).toBe(0);
      expect(stats.count_total - accepted.size - duplicated.size).toBeLessThanOrEqual(2 * 500);
      expect(stats.count_duplicated).toBeGreaterThanOrEqual(duplicated.size);
      expect(stats.count_does_not_exist).toBeGreaterThanOrEqual([...accepted].filter((r) => r.endsWith('3')).length);
      expect(stats.count_sent + stats.count_does_not_exist + stats.count_duplicated).toBe(stats.count_total);
      expect(stats.count_failed).toBe(0);

      // Recovery, from the log: the first send by a survivor of a contact the dead instance had
      // sent (its chunk taken over after the lease), and the first send after Redis was back.
      const takeover = log.find((l) => l.at >= killedAt && l.by !== 'i1' && byDead.has(l.ref));
      const resumed = redisBackAt === undefined ? undefined : log.find((l) => l.at >= redisBackAt);
      console.log(
        `3 instances on Redis (${cluster === undefined ? 'single, restarted' : 'cluster'}), one killed: ${accepted.size} contacts accepted, ${log.length} attempts (${log.filter((l) => l.by === 'i0').length} / ${log.filter((l) => l.by === 'i1').length} / ${log.filter((l) => l.by === 'i2').length} by instance), ${resent.length} sent again after the kill (each under its first message id), ${receiver.all('/hsm').length} HSM notifications, statistics ${stats.count_total} total / ${stats.count_sent} sent / ${stats.count_does_not_exist} not existing / ${stats.count_duplicated} duplicated (${duplicated.size} refused on a retry); the dead instance's contacts sent again ${takeover ? takeover.at - killedAt : 'n/a'} ms after the kill (lease ${LEASE_MS} ms), sends resumed ${resumed && redisBackAt !== undefined ? `${resumed.at - redisBackAt} ms` : 'n/a'} after Redis was back`,
      );
    } finally {
      for (const c of children) await kill(c);
      if (redis !== undefined) await kill(redis);
      else {
        const client = connect(cluster);
        await cleanup(client, prefix);
        client.disconnect();
      }
      await receiver.close();
    }
  });
});

if (TARGETS.length === 0) describe('three instances on Redis: one killed', () => it.skip(SKIP_REASON, () => {}));
