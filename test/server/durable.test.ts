/**
 * The durable server under kill -9: a child server process on a SQLite store is killed with SIGKILL
 * twenty times while it takes and sends campaigns (with retries, final failures, throttling and a
 * number whose limits bind), and restarted on the same directory each time. From the channel's own
 * log (written by the child before each answer) and the webhook receiver in this process:
 * - every contact that got a 202 reached its final outcome and its final HSM notification came, and
 *   every SMS that got a 202 was handed to the gateway and its DLR callback came;
 * - no number exceeded its hour or 24 h window;
 * - re-sends of contacts already sent are at most what was in flight at the kills.
 * Waits are for conditions (what the log and the receiver show), never for times.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { windowViolation } from '../core/window-check.js';
import { builtChild } from './built-child.js';
import { startReceiver, waitFor } from './helpers.js';
import { keyed, kill, logReader } from './send-log.js';

const KEY = 'durable-test-key-0123456789abcdef';
const dir = mkdtempSync(join(tmpdir(), 'sendpool-durable-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const BIG = [
  { phone: '5511990000001', throughputPerHour: 100_000, messagingLimit24h: 100_000, messagesPerSecond: 400 },
  { phone: '5511990000002', throughputPerHour: 100_000, messagingLimit24h: 100_000, messagesPerSecond: 400 },
];
/** A number whose limits bind: far more contacts than it may send. */
const TIGHT = { phone: '5521990000009', throughputPerHour: 300, messagingLimit24h: 400, messagesPerSecond: 50 };
const fleet = {
  businesses: [
    { id: 1, name: 'Acme', companyId: 1, numbers: BIG.map((n) => ({ ...n, status: 'active' })), templateTypes: [{ id: 10, name: 'billing', templateIds: [100, 101] }] },
    { id: 2, name: 'Tight', companyId: 1, numbers: [{ ...TIGHT, status: 'active' }], templateTypes: [{ id: 10, name: 'alerts', templateIds: [200] }] },
  ],
  templates: [
    { id: 100, name: 'bill', text: 'Hi {{1}}', businessIds: [1], status: 'active' },
    { id: 101, name: 'bill_b', text: 'Hello {{1}}', businessIds: [1], status: 'active' },
    { id: 200, name: 'alert', text: 'Alert {{1}}', businessIds: [2], status: 'active' },
  ],
};

interface Logged {
  at: number;
  phone: string;
  ref: string;
  id: string;
  /** The template of the send. */
  tpl?: number;
  ok: boolean;
  /** The provider's error code of a failed send. */
  code?: number;
  /** An SMS handed to the gateway (not a chat-channel send). */
  sms?: boolean;
}

async function start(cfg: object, logFile: string): Promise<{ child: ChildProcess; url: string }> {
  rmSync(`${logFile}.address`, { force: true });
  // The child on the built package, plain node (test/server/built-child.ts): started 21 times.
  const child = fork(builtChild(join(import.meta.dirname, 'durable-child.ts')), [], {
    execArgv: [],
    env: { ...process.env, SENDPOOL_DURABLE: JSON.stringify(cfg) },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  await waitFor(() => existsSync(`${logFile}.address`) && readFileSync(`${logFile}.address`, 'utf8').length > 0, 'child listening');
  return { child, url: readFileSync(`${logFile}.address`, 'utf8') };
}

const api = keyed(KEY);

describe('durable server under kill -9', () => {
  it('20 kills: every 202 reaches its outcome and notification, no window exceeded, re-sends bounded', { timeout: 600_000 }, async () => {
    const fleetFile = join(dir, 'fleet.json');
    const logFile = join(dir, 'sends.log');
    writeFileSync(fleetFile, JSON.stringify(fleet));
    const cfg = { fleetFile, dataDir: join(dir, 'data'), log: logFile, key: KEY };
    const readLog = logReader<Logged>(logFile);
    let server = await start(cfg, logFile);
    let secret = '';
    const receiver = await startReceiver(() => secret);
    try {
      expect((await api(server.url, '/messenger/config/', { url_hsm_callback: `${receiver.url}/hsm`, url_campaign_webhook: `${receiver.url}/campaign` })).status).toBe(200);
      secret = ((await (await api(server.url, '/messenger/config/secret/')).json()) as { webhook_secret: string }).webhook_secret;

      // Requests go on while the server is killed: only those answered 202 are promised.
      const accepted = new Set<string>();
      const tight = new Set<string>();
      const smsAccepted = new Set<string>();
      let duplicated = 0;
      let posting = true;
      const poster = (async () => {
        for (let r = 0; r < 44; r++) {
          const business = r % 11 === 10 ? 2 : 1;
          const contacts = Array.from({ length: 500 }, (_, i) => ({ phone_number: `55219${String(80000000 + r * 1000 + i)}`, template_variables: ['x'], data: { ref: `r${r}c${i}` } }));
          if (r % 4 === 0) {
            // An SMS batch too: accepted only with a 202, whatever dies after.
            const items = Array.from({ length: 50 }, (_, i) => ({
              message: `SMS ${i}`,
              phone: `55119${String(70000000 + r * 100 + i)}`,
              reference: `s${r}i${i}`,
              url_callback_dlr: `${receiver.url}/dlr`,
            }));
            for (;;) {
              try {
                const res = await api(server.url, '/sms/messages/', items);
                if (res.status === 202) for (const it of items) smsAccepted.add(it.reference);
                if (res.status === 202 || res.status === 422) break;
              } catch {
                // Killed mid-request: nothing promised.
              }
              await waitFor(() => server.child.exitCode === null && server.child.signalCode === null, 'a live server');
            }
          }
          for (;;) {
            try {
              const res = await api(server.url, '/messenger/messages/', { business_id: business, template_type_id: 10, campaign_id: business, max_retries: 2, retry_interval: 0, contacts });
              if (res.status === 202) {
                for (const c of contacts) (business === 1 ? accepted : tight).add(c.data.ref);
                // A request killed after its write was taken: sent again, its phones are duplicates.
                if (business === 1) duplicated += ((await res.json()) as { rejection_counts: { duplicated: number } }).rejection_counts.duplicated;
              }
              if (res.status === 202 || res.status === 422) break;
            } catch {
              // Killed mid-request: no 202, nothing promised; the next try goes to the new process.
            }
            await waitFor(() => server.child.exitCode === null && server.child.signalCode === null, 'a live server');
          }
        }
        posting = false;
      })();

      const kills = 20;
      // Kill moments from a fixed seed: after some progress of intake (a new 202, so requests do get
      // through between kills) and 50 to 800 more attempts, often while a request is in flight.
      let seed = 20261123;
      const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
      for (let k = 0; k < kills; k++) {
        const before = readLog().length;
        const acceptedBefore = accepted.size;
        const more = 50 + Math.floor(random() * 750);
        await waitFor(() => (accepted.size > acceptedBefore || !posting) && (readLog().length >= before + more || !posting), `progress before kill ${k}`);
        await kill(server.child);
        server = await start(cfg, logFile);
      }
      await poster;
      // Contacts whose final notification came (SENT, or FAILED for the undeliverable), indexed as
      // notifications arrive rather than recounted on every look.
      const final = new Set<string>();
      let seen = 0;
      const finals = (refs: Set<string>) => {
        const hsm = receiver.all('/hsm') as { status: string; data?: { ref?: string } }[];
        for (; seen < hsm.length; seen++) {
          const n = hsm[seen]!;
          const ref = n.data?.ref;
          if (ref !== undefined && (ref.endsWith('3') ? n.status === 'FAILED' : n.status === 'SENT')) final.add(ref);
        }
        let count = 0;
        for (const ref of refs) if (final.has(ref)) count++;
        return count;
      };
      await waitFor(() => finals(accepted) === accepted.size, 'a final notification for every accepted contact');
      const dlrFor = () => new Set((receiver.all('/dlr') as { reference: string | null; status: string }[]).filter((d) => d.status === 'SENT').map((d) => d.reference));
      await waitFor(() => [...smsAccepted].every((ref) => dlrFor().has(ref)), 'a DLR for every accepted SMS');

      // Campaign statistics survive the kills: the last batch of campaign 1 counts every contact
      // the server notified about (those of requests killed after their write too), as sent or as
      // not existing, none remaining. Without kept statistics it counts from the last restart only.
      type Hsm = { id: number; campaign_id: number; status: string; data?: { ref?: string } };
      type CampaignEntry = { campaign_id: number; status: string; datetime: string } & Record<string, number | string>;
      const expectedCounts = () => {
        const mine = (receiver.all('/hsm') as Hsm[]).filter((n) => n.campaign_id === 1);
        const ids = new Set(mine.map((n) => n.id));
        const notOnChannel = new Set(mine.filter((n) => n.status === 'FAILED' && n.data?.ref?.endsWith('3')).map((n) => n.id));
        const sent = new Set(mine.filter((n) => n.status === 'SENT').map((n) => n.id));
        return {
          status: 'FINISHED',
          count_total: ids.size + duplicated,
          count_duplicated: duplicated,
          count_sent: sent.size,
          count_does_not_exist: notOnChannel.size,
          count_failed: 0,
          count_remaining: 0,
        };
      };
      const lastBatch = () =>
        (receiver.all('/campaign') as { campaigns: CampaignEntry[] }[])
          .flatMap((b) => b.campaigns)
          .filter((c) => c.campaign_id === 1)
          .sort((a, b) => a.datetime.localeCompare(b.datetime))
          .at(-1);
      await waitFor(() => {
        const last = lastBatch();
        const expected = expectedCounts();
        return last !== undefined && Object.entries(expected).every(([k, v]) => last[k] === v);
      }, 'campaign statistics of every contact');
      expect(lastBatch()).toMatchObject(expectedCounts());
      expect(expectedCounts().count_total - duplicated).toBeGreaterThanOrEqual(accepted.size);
      await kill(server.child);

      const log = readLog().filter((l) => l.sms !== true);
      const okSends = new Map<string, number>();
      for (const l of log) if (l.ok) okSends.set(l.ref, (okSends.get(l.ref) ?? 0) + 1);
      for (const ref of accepted) expect(ref.endsWith('3') ? log.some((l) => l.ref === ref) : okSends.has(ref), ref).toBe(true);
      const resent = [...okSends.values()].reduce((a, n) => a + n - 1, 0);
      // A send in flight at a kill goes again under its message id (the idempotency key): every
      // contact's successful sends share one id, so a provider that deduplicates sends it once.
      const idsOf = new Map<string, Set<string>>();
      for (const l of log) if (l.ok) (idsOf.get(l.ref) ?? idsOf.set(l.ref, new Set()).get(l.ref)!).add(l.id);
      const underTwoIds = [...idsOf].filter(([, ids]) => ids.size > 1).map(([ref]) => ref);
      expect(underTwoIds, 'contacts sent under more than one message id').toEqual([]);
      // At most what was in flight at each kill: the dispatch worker holds at most 1,000 at once.
      expect(resent).toBeLessThanOrEqual(kills * 1000);
      expect(smsAccepted.size).toBeGreaterThan(0);
      console.log(
        `kill -9 x${kills}: ${accepted.size} + ${tight.size} contacts (${duplicated} sent again after a kill, refused as duplicated) and ${smsAccepted.size} SMS accepted, ${log.length} attempts, ${resent} re-sent after kills (each under its first message id), ${receiver.all('/hsm').length} HSM notifications, ${receiver.all('/dlr').length} DLRs`,
      );
      for (const n of [...BIG, TIGHT]) {
        // Every window, from the charge times the channel logged (a send leaves after its write).
        const sends = log.filter((l) => l.phone === n.phone).map((l) => ({ at: l.at, count: 1 }));
        expect(windowViolation(sends, { perHour: n.throughputPerHour, per24h: n.messagingLimit24h, perSecond: n.messagesPerSecond }), n.phone).toBeUndefined();
      }
      expect(log.filter((l) => l.phone === TIGHT.phone).length).toBeGreaterThan(0);
      // The provider paused template 100 (132015): its contacts failed over to template 101 and were
      // sent there, none counted as failed (the statistics above).
      const paused = log.filter((l) => l.code === 132015);
      expect(paused.length).toBeGreaterThan(0);
      expect(paused.every((l) => l.tpl === 100)).toBe(true);
      expect(log.some((l) => l.ok && l.tpl === 101 && (l.ref.endsWith('8') || l.ref.endsWith('9')))).toBe(true);
    } finally {
      await kill(server.child);
      await receiver.close();
    }
  });
});
