/**
 * A request whose instance dies before its answer, retried at once on another instance (two server
 * processes on one Redis, the fault injected for real): a 5,000-contact POST goes to B; B is killed
 * with SIGKILL mid-request (once it has reserved the campaign's phones, or once it has committed
 * them); the same body goes at once to A, in turns without and with an Idempotency-Key.
 * From the channel's own log (written by each child before it answers, test/server/redis-child.ts):
 * - A answers 202; all its contacts refused as duplicated only when B had committed them (and then
 *   they are sent); with the key, A's 202 is B's first answer replayed, or A's own;
 * - every contact of every round is sent, each under one message id (exactly once, or again under
 *   the same id when B was sending it at its death).
 * The heartbeat's lease is long (10 s): the retry comes well within it, so what finds B dead is its
 * connection gone (shared-phones.ts, deadInstances), not the lease.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_URL, cleanup, connect, testPrefix } from '../redis/helpers.js';
import { builtChild } from './built-child.js';
import { waitFor } from './helpers.js';
import { kill, logReader } from './send-log.js';

const KEY = 'retry-after-kill-key-0123456789abcdef';
const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
// Made when the tests run: a file skipped without Redis runs no hook, and leaves nothing behind.
let dir = '';
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sendpool-retry-kill-'));
});
afterAll(() => {
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

const NUMBERS = ['5511990000001', '5511990000002', '5511990000003'].map((phone) => ({ phone, throughputPerHour: 1_000_000, messagingLimit24h: 1_000_000, messagesPerSecond: 1000, status: 'active' }));
const fleet = {
  businesses: [{ id: 1, name: 'Acme', companyId: 1, numbers: NUMBERS, templateTypes: [{ id: 10, name: 'billing', templateIds: [100] }] }],
  templates: [{ id: 100, name: 'bill', text: 'Hi {{1}}', businessIds: [1], status: 'active' }],
};

interface Logged {
  ref: string;
  id: string;
  by: string;
  ok: boolean;
}

const ROUNDS = 6;
const CONTACTS = 5000;

function post(url: string, body: unknown, key?: string): Promise<Response> {
  return fetch(`${url}/messenger/messages/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key-id': KEY, ...(key === undefined ? {} : { 'idempotency-key': key }) },
    body: JSON.stringify(body),
  });
}

describe.skipIf(REDIS_URL === undefined)('a request retried on A after B died mid-request (two processes on Redis)', () => {
  it('A answers 202 and every contact is sent once; never all duplicated for contacts nobody sends', { timeout: 300_000 }, async () => {
    const client = connect(REDIS_URL);
    const prefix = testPrefix('retry-kill');
    const queue = `${prefix}{queue}:`;
    const fleetFile = join(dir, 'fleet.json');
    writeFileSync(fleetFile, JSON.stringify(fleet));
    const logFile = join(dir, 'sends.log');
    const readLog = logReader<Logged>(logFile);
    const children: ChildProcess[] = [];
    const start = async (name: string) => {
      const cfg = { fleetFile, redisUrl: REDIS_URL, prefix, log: logFile, key: KEY, name, secret: SECRET, leaseMs: 10_000 };
      const child = fork(builtChild(join(import.meta.dirname, 'redis-child.ts')), [], {
        execArgv: [],
        env: { ...process.env, SENDPOOL_REDIS_CHILD: JSON.stringify(cfg) },
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      });
      children.push(child);
      const address = `${logFile}.${name}.address`;
      await waitFor(() => existsSync(address) && readFileSync(address, 'utf8').length > 0, `${name} listening`);
      // Its heartbeat (which names its connection) is written when it starts stepping.
      await waitFor(async () => (await client.exists(`${queue}alive:${name}`)) === 1, `${name} heartbeat`);
      return { child, url: readFileSync(address, 'utf8') };
    };
    const rounds: { round: number; keyed: boolean; when: string; b: string; a: string[]; accepted: number; replayed: boolean }[] = [];
    try {
      const a = await start('a');
      for (let round = 0; round < ROUNDS; round++) {
        const keyed = round % 2 === 1;
        // Rounds 0-3: B dies once it has reserved the phones (before its commit); 4-5: once it has
        // committed them (its answer may or may not have left).
        const when = round < 4 ? 'reserved' : 'committed';
        const campaign = 100 + round;
        const body = {
          business_id: 1,
          template_type_id: 10,
          campaign_id: campaign,
          max_retries: 2,
          retry_interval: 0,
          // Refs end in a letter: the child's channel fails none of them.
          contacts: Array.from({ length: CONTACTS }, (_, i) => ({ phone_number: `55219${String(10_000_000 + round * 10_000 + i)}`, template_variables: ['x'], data: { ref: `r${round}c${i}k` } })),
        };
        const key = keyed ? `round-${round}` : undefined;
        const b = await start(`b${round}`);
        const toB = post(b.url, body, key).then(
          async (res) => `${res.status}`,
          (e: unknown) => (e instanceof Error ? e.message : String(e)),
        );
        const condition = when === 'reserved' ? async () => (await client.hlen(`${queue}ph:c1.${campaign}`)) > 0 : async () => (await client.exists(`${queue}s:c1.${campaign}`)) === 1;
        await waitFor(condition, `B ${when} round ${round}`);
        await kill(b.child);
        const bOutcome = await toB;
        // At once to A; a clear retryable error (409, 503) is sent again once answered.
        const answers: string[] = [];
        let res: Response | undefined;
        let json: { accepted: number; rejected: number; rejections?: { reason: string }[] } | undefined;
        await waitFor(async () => {
          res = await post(a.url, body, key);
          json = (await res.json()) as typeof json;
          answers.push(String(res.status));
          return res.status !== 409 && res.status !== 503;
        }, `A's answer round ${round}`);
        expect(res!.status, `round ${round}: ${answers.join(', ')}`).toBe(202);
        rounds.push({ round, keyed, when, b: bOutcome, a: answers, accepted: json!.accepted, replayed: res!.headers.get('idempotent-replayed') === 'true' });
        if (json!.accepted === 0) {
          // All refused: only because B committed them (they are sent: checked below).
          expect(
            json!.rejections?.every((r) => r.reason === 'duplicated'),
            `round ${round}`,
          ).toBe(true);
          expect(when, `round ${round}: all duplicated though B died before its commit`).toBe('committed');
          expect(keyed && !rounds.at(-1)!.replayed, `round ${round}: a key's retry is the first answer, not duplicates`).toBe(false);
        } else expect(json!.accepted).toBe(CONTACTS);
      }
      // The takeover happened: a retry after a death before the commit was accepted whole.
      expect(rounds.filter((r) => r.when === 'reserved' && r.accepted === CONTACTS).length, JSON.stringify(rounds)).toBeGreaterThan(0);

      // Every contact of every round is sent (A takes over what B committed once its lease lapses),
      // each under one message id.
      const expected = ROUNDS * CONTACTS;
      await waitFor(
        () =>
          new Set(
            readLog()
              .filter((l) => l.ok)
              .map((l) => l.ref),
          ).size === expected,
        `${expected} contacts sent (${JSON.stringify(rounds)})`,
      );
      const ids = new Map<string, Set<string>>();
      for (const l of readLog()) if (l.ok) ids.set(l.ref, (ids.get(l.ref) ?? new Set()).add(l.id));
      expect(ids.size).toBe(expected);
      expect([...ids].filter(([, s]) => s.size > 1).map(([ref]) => ref)).toEqual([]);
    } finally {
      for (const c of children) await kill(c);
      await cleanup(client, prefix);
      client.disconnect();
    }
  });
});
