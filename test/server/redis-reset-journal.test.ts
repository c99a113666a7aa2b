/**
 * Every instance restarts on an empty Redis, with contacts accepted and not sent: the accepted
 * journal in each instance's state directory (src/server/backends/redis/accepted-journal.ts) brings them
 * back. Real server processes (redis-reset-child.ts, with a gate) on a redis-server of the test's own; their
 * channel holds every send until the test opens a gate, so nothing is sent before the kill.
 *
 * Two instances accept 2,400 contacts (202s, ENQUEUED notifications with their contact ids) and
 * claim them; both are SIGKILLed; Redis is emptied (`FLUSHALL`); both restart with the same state
 * directories and the gate open (j0's journal ending in a line cut mid-append). Then, from the
 * channel's log (written by each child before it answers) and the webhook receiver in this
 * process: every contact with a 202 is sent exactly once, under its original contact id and its
 * first hand-out (`<id>.0`), with its SENT notification of that id; each instance counted the reset
 * and logged the rebuild, j0 the cut line with its file; and each journal marks every chunk done
 * once it is.
 *
 * And an instance killed with contacts held, started again on the same Redis: its journal is read
 * back into memory, nothing is written again, the contacts are sent once and seen done.
 *
 * Waits are for conditions, never for times.
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REDIS_URL, SKIP_REASON } from '../redis/helpers.js';
import { privateRedis } from '../redis/private-redis.js';
import { tempDir } from '../temp-dirs.js';
import { startReceiver, waitFor } from './helpers.js';
import { keyed, kill, logReader } from './send-log.js';
import { metric, refContacts, startResetChild, type LoggedChild, type ResetChildConfig, type ResetChildSend } from './redis-children.js';

const KEY = 'redis-journal-key-0123456789abcdef';
const SECRET = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
const api = keyed(KEY);

type Instance = LoggedChild;

type ChildConfig = Omit<ResetChildConfig, 'key' | 'secret'> & { readonly gate: string };

function startInstance(name: string, cfg: ChildConfig): Promise<Instance> {
  return startResetChild(name, { ...cfg, key: KEY, secret: SECRET });
}

const journalLines = (stateDir: string): string[] => {
  const file = join(stateDir, 'redis-state.accepted.jsonl');
  return existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l !== '')
    : [];
};

/** The chunks a journal holds not done (its `add` records less its `done` records; read, not compacted: the child writes it). */
function journalChunks(stateDir: string): Set<string> {
  const live = new Set<string>();
  for (const line of journalLines(stateDir).slice(1)) {
    const r = JSON.parse(line) as { op: string; stream: string; entry: string };
    if (r.op === 'add') live.add(`${r.stream} ${r.entry}`);
    else live.delete(`${r.stream} ${r.entry}`);
  }
  return live;
}

describe.skipIf(REDIS_URL === undefined)('the server on Redis: every instance restarts on an empty Redis', () => {
  it('the contacts accepted and not sent are sent from the journals, under their contact ids, with their notifications', { timeout: 300_000 }, async () => {
    const dir = tempDir('sendpool-journal-reset-');
    const redis = await privateRedis('none');
    await redis.start();
    const fleetFile = join(dir, 'fleet.json');
    const numbers = ['5511990000011', '5511990000012'].map((phone) => ({ phone, throughputPerHour: 10_000_000, messagingLimit24h: 10_000_000, messagesPerSecond: 100, status: 'active' }));
    writeFileSync(
      fleetFile,
      JSON.stringify({
        businesses: [{ id: 1, name: 'Acme', companyId: 1, numbers, templateTypes: [{ id: 10, name: 'billing', templateIds: [100] }] }],
        templates: [{ id: 100, name: 'bill', text: 'Hi {{1}}', businessIds: [1], status: 'active' }],
      }),
    );
    const logFile = join(dir, 'sends.log');
    const readLog = logReader<ResetChildSend>(logFile);
    const gate = join(dir, 'gate');
    const receiver = await startReceiver(() => SECRET);
    const names = ['j0', 'j1'];
    const cfgOf = (name: string): ChildConfig => ({ fleetFile, redisUrl: redis.url, log: logFile, stateDir: join(dir, `state-${name}`), gate });
    let instances: Instance[] = [];
    try {
      for (const name of names) instances.push(await startInstance(name, cfgOf(name)));
      expect((await api(instances[0]!.url, '/messenger/config/', { url_hsm_callback: `${receiver.url}/hsm` })).status).toBe(200);

      // 2,400 contacts accepted, half by each instance.
      const accepted = new Set<string>();
      for (let r = 0; r < 6; r++) {
        const body = { business_id: 1, template_type_id: 10, campaign_id: 1 + (r % 2), contacts: refContacts(`r${r}`, 400, 10_000_000 + r * 1000) };
        const res = await api(instances[r % 2]!.url, '/messenger/messages/', body);
        expect(res.status, await res.clone().text()).toBe(202);
        for (const c of body.contacts) accepted.add(c.data.ref);
      }
      // Their contact ids, from the ENQUEUED notifications.
      const hsm = () => receiver.all('/hsm') as { id: number; status: string; data?: { ref?: string } }[];
      const idOf = new Map<string, number>();
      await waitFor(() => {
        for (const n of hsm()) if (n.status === 'ENQUEUED' && n.data?.ref !== undefined) idOf.set(n.data.ref, n.id);
        return idOf.size === accepted.size;
      }, 'the ENQUEUED notification of every contact');
      // Claimed by both instances, their sends held at the gate: nothing sent.
      for (const i of instances) await waitFor(async () => ((await metric(i.url, 'sendpool_redis_held_contacts')) ?? 0) > 0, 'contacts claimed');
      expect(readLog()).toEqual([]);
      // Each instance journaled the chunks it accepted.
      const chunksBefore = names.map((name) => journalChunks(cfgOf(name).stateDir).size);
      // 400-contact requests in chunks of 100: 12 chunks accepted by each.
      expect(chunksBefore).toEqual([12, 12]);

      // Both killed, Redis emptied, both started again with the same state directories and the gate open.
      for (const i of instances) await kill(i.child);
      expect(execFileSync('redis-cli', ['-p', String(redis.port), 'FLUSHALL'], { encoding: 'utf8' }).trim()).toBe('OK');
      // j0's last append cut by the kill (a step whose 202s never left): skipped and said, not thrown.
      const j0Journal = join(cfgOf('j0').stateDir, 'redis-state.accepted.jsonl');
      appendFileSync(j0Journal, '{"op":"add","stream":"sendpool:{queue}:c:1:1","entry":"17');
      writeFileSync(gate, '');
      instances = [];
      for (const name of names) instances.push(await startInstance(name, cfgOf(name)));

      // Noticed from the state directories, counted, and the journals' chunks written again.
      for (const i of instances) await waitFor(async () => (await metric(i.url, 'sendpool_redis_resets_total')) === 1, 'the reset counted after the restart');
      const sentOf = new Map<string, number>();
      await waitFor(() => {
        for (const n of hsm()) if (n.status === 'SENT' && n.data?.ref !== undefined) sentOf.set(n.data.ref, n.id);
        return sentOf.size === accepted.size;
      }, 'a SENT notification for every contact with a 202');
      const damagedLine = instances[0]!.out.split('\n').find((l) => l.includes('accepted-journal-damaged'));
      expect(damagedLine).toContain(`"file":"${j0Journal}"`);
      expect(damagedLine).toContain('"damagedLines":1');
      expect(instances[1]!.out).not.toContain('accepted-journal-damaged');
      for (const i of instances) {
        expect(i.out).toContain('accepted-journal-read');
        expect(i.out).toContain('redis-reset-rebuilt');
      }

      // The provider's record: each contact sent once, under its contact id and its first hand-out.
      const log = readLog();
      const byRef = new Map<string, ResetChildSend[]>();
      for (const l of log) byRef.set(l.ref, [...(byRef.get(l.ref) ?? []), l]);
      expect(new Set(byRef.keys())).toEqual(accepted);
      const twice = [...byRef.values()].filter((ls) => ls.length > 1).length;
      expect(twice).toBe(0);
      for (const [ref, [l]] of byRef) {
        expect(l!.id, ref).toBe(`${idOf.get(ref)}.0`);
        expect(sentOf.get(ref), ref).toBe(idOf.get(ref));
      }
      // Seen done: each journal marks every chunk done (the records go at a compaction).
      for (const name of names) await waitFor(() => journalChunks(cfgOf(name).stateDir).size === 0, `${name}'s journal without chunks not done`);
      for (const name of names) expect(journalLines(cfgOf(name).stateDir)[0]).toBe('{"journal":"sendpool-accepted","version":1}');
      console.log(`all restarted on an empty Redis: ${accepted.size} contacts accepted and held at the kill, ${log.length} sends after the restart, ${twice} twice`);
    } catch (e) {
      // What the instances said and what arrived, for the failure's report.
      console.log(
        instances
          .map((i) =>
            i.out
              .split('\n')
              .filter((l) => /reset|journal|error/i.test(l))
              .join('\n'),
          )
          .join('\n---\n'),
      );
      console.log(`sends ${readLog().length}; notifications ${receiver.all('/hsm').length}`);
      throw e;
    } finally {
      for (const i of instances) await kill(i.child);
      redis.shutdown('nosave');
      await receiver.close();
    }
  });

  it('an instance restarted on the same Redis keeps its journal in memory: nothing written twice, chunks seen done', { timeout: 300_000 }, async () => {
    const dir = tempDir('sendpool-journal-same-');
    const redis = await privateRedis('none');
    await redis.start();
    const fleetFile = join(dir, 'fleet.json');
    writeFileSync(
      fleetFile,
      JSON.stringify({
        businesses: [
          {
            id: 1,
            name: 'Acme',
            companyId: 1,
            numbers: [{ phone: '5511990000021', throughputPerHour: 10_000_000, messagingLimit24h: 10_000_000, messagesPerSecond: 100, status: 'active' }],
            templateTypes: [{ id: 10, name: 'billing', templateIds: [100] }],
          },
        ],
        templates: [{ id: 100, name: 'bill', text: 'Hi {{1}}', businessIds: [1], status: 'active' }],
      }),
    );
    const logFile = join(dir, 'sends.log');
    const readLog = logReader<ResetChildSend>(logFile);
    const gate = join(dir, 'gate');
    const cfg: ChildConfig = { fleetFile, redisUrl: redis.url, log: logFile, stateDir: join(dir, 'state-s0'), gate };
    let instance = await startInstance('s0', cfg);
    try {
      const body = { business_id: 1, template_type_id: 10, campaign_id: 1, contacts: refContacts('s', 300, 30_000_000) };
      expect((await api(instance.url, '/messenger/messages/', body)).status).toBe(202);
      await waitFor(async () => ((await metric(instance.url, 'sendpool_redis_held_contacts')) ?? 0) > 0, 'contacts claimed');
      expect(journalChunks(cfg.stateDir).size).toBe(3);
      // Killed with its sends held; Redis keeps the queue; started again with the gate open.
      await kill(instance.child);
      writeFileSync(gate, '');
      instance = await startInstance('s0', cfg);
      // Its chunks are taken over after their lease and sent once; the journal read back sees them done.
      await waitFor(() => new Set(readLog().map((l) => l.ref)).size === 300, 'every contact sent');
      await waitFor(() => journalChunks(cfg.stateDir).size === 0, 'the journal without chunks not done');
      expect(instance.out).toContain('accepted-journal-read');
      expect(await metric(instance.url, 'sendpool_redis_resets_total')).toBe(0);
      expect(instance.out).not.toContain('redis-reset-rebuilt');
      expect(readLog()).toHaveLength(300);
    } finally {
      await kill(instance.child);
      redis.shutdown('nosave');
    }
  });
});

if (REDIS_URL === undefined) describe('the server on Redis: every instance restarts on an empty Redis', () => it.skip(SKIP_REASON, () => {}));
