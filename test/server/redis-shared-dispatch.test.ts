/**
 * Instances sharing the contact queue on a real Redis, each with its own engine: one dies at a
 * random moment (its objects dropped, nothing acknowledged or given back) and another takes its
 * chunks over. Every contact gets exactly one final outcome recorded, a contact in flight at the
 * death goes again under the message id it had, and no contact is sent under two different ids
 * once one of them was answered "sent".
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import fc from 'fast-check';
import { ManualClock, createEngine, type OutgoingMessage, type SendOutcome } from '../../src/index.js';
import { ContactQueue, type ChunkBody } from '../../src/server/backends/redis/queue.js';
import { SharedDispatch } from '../../src/server/backends/redis/shared-dispatch.js';
import { cleanup, connect, describeTargets, testPrefix, type TestClient } from '../redis/helpers.js';
import { testFleet } from './helpers.js';

interface Instance {
  readonly shared: SharedDispatch;
  readonly engine: ReturnType<typeof createEngine>;
  /** Sent to the channel, not answered yet. */
  flight: { local: OutgoingMessage; global: OutgoingMessage }[];
}

describeTargets('instances sharing the contact queue (Redis)', (target) => {
  let client: TestClient;
  let base: string;
  beforeAll(() => {
    client = connect(target);
    base = testPrefix('shared');
  });
  afterAll(async () => {
    await cleanup(client, base);
    client.disconnect();
  });

  it('every contact ends once; what was in flight at a death goes again under its id', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 6 }), // requests
        fc.integer({ min: 0, max: 40 }), // steps before the death
        fc.array(fc.constantFrom<'sent' | 'fail' | 'retry'>('sent', 'sent', 'sent', 'fail', 'retry'), { minLength: 1, maxLength: 50 }),
        async (requests, deathAt, answers) => {
          const prefix = `${base}${run++}:{q}:`;
          const clock = new ManualClock(0);
          const make = (consumer: string, leaseMs: number): Instance => {
            const engine = createEngine(testFleet(), { clock });
            const queue = new ContactQueue({ client, consumer, prefix, leaseMs });
            return { engine, shared: new SharedDispatch(queue, engine, { prefetchContacts: 7 }), flight: [] };
          };
          const writer = new ContactQueue({ client, consumer: 'intake', prefix });
          let nextId = 1;
          const chunks: ChunkBody[] = [];
          for (let r = 0; r < requests; r++) {
            const n = 1 + ((r * 7) % 9);
            const contacts = Array.from({ length: n }, () => ({ id: nextId, costCenterId: 0, phone: String(5511900000000 + nextId++), variables: ['x'] }));
            chunks.push({ requestId: `r${r}`, companyId: 1, businessId: 1, typeId: 10, campaignId: 1 + (r % 2), maxRetries: 2, retryInterval: 0, contacts });
          }
          await writer.enqueue(chunks);
          const total = nextId - 1;

          /** Notifications written per contact (the outbox stream), read back from Redis. */
          const finals = async () => {
            const out = new Map<number, string[]>();
            for (const [, f] of (await client.xrange(`${prefix}outbox`, '-', '+')) as [string, string[]][]) {
              const e = JSON.parse(f[1]!) as { id: number; state: string };
              out.set(e.id, [...(out.get(e.id) ?? []), e.state]);
            }
            return out;
          };
          const sentIds = new Map<number, Set<string>>();
          let answer = 0;
          /** After the death: each contact in flight then, with the id it went under first afterwards. */
          let inFlightAtDeath: Map<number, string> | undefined;
          const resent = new Map<number, string>();
          /** One step of an instance: feed, hand out, write, send; answer what was in flight. */
          const step = async (i: Instance, answerFlight: boolean) => {
            await i.shared.feed();
            const polled = i.engine.poll({ limit: 5 });
            i.shared.handedOut(polled);
            await i.shared.flush(); // hand-outs written before anything is sent
            for (const m of polled) {
              const global = i.shared.forChannel(m);
              if (!global) continue;
              i.flight.push({ local: m, global });
              const id = Number(global.messageId.split('.')[0]);
              if (inFlightAtDeath?.has(id) && !resent.has(id)) resent.set(id, global.messageId);
            }
            if (!answerFlight) return;
            for (const { local, global } of i.flight) {
              const kind = answers[answer++ % answers.length]!;
              const outcome: SendOutcome = kind === 'sent' ? { status: 'sent' } : kind === 'fail' ? { status: 'failed', code: 131026 } : { status: 'failed', reason: 'timeout' };
              const id = Number(global.messageId.split('.')[0]);
              if (kind === 'sent') {
                const ids = sentIds.get(id) ?? new Set();
                ids.add(global.messageId);
                sentIds.set(id, ids);
              }
              const result = i.engine.report(local.messageId, outcome);
              if (result.ok && result.effect === 'retry-scheduled') i.shared.ended(global);
            }
            i.flight = [];
            const outcomes = i.engine.takeOutcomes();
            i.shared.outcomes(outcomes);
            // The contact's notification, as the server writes it: with the final, while held.
            for (const o of outcomes) i.shared.stage(JSON.stringify({ id: (o.contact as unknown as { id: number }).id, state: o.state }), o.contact);
            await i.shared.flush();
          };

          const a = make('a', 30_000);
          const b = make('b', 30_000);
          for (let s = 0; s < deathAt; s++) {
            await step(a, true);
            await step(b, true);
          }
          // A dies with a step half done: hand-outs written and sent, no answer recorded.
          await step(a, false);
          inFlightAtDeath = new Map(a.flight.map((f) => [Number(f.global.messageId.split('.')[0]), f.global.messageId]));
          // What B (and a newcomer taking over at once, lease 0) send of A's contacts.
          const c = make('c', 0);
          for (let guard = 0; guard < 500; guard++) {
            const before = (await finals()).size;
            for (const i of [b, c]) await step(i, true);
            clock.advance(1000);
            if (before === total && b.shared.open + c.shared.open === 0) break;
          }
          const notified = await finals();
          expect(notified.size).toBe(total);
          for (const [id, states] of notified) expect(states, `contact ${id}`).toHaveLength(1);
          // In flight at the death, not final before: sent again under the same id.
          for (const [id, messageId] of inFlightAtDeath) if (resent.has(id)) expect(resent.get(id)).toBe(messageId);
          // A contact answered "sent" was never sent under another id after that.
          for (const [id, ids] of sentIds) expect(ids.size, `contact ${id}: ${[...ids].join(', ')}`).toBe(1);
          // Nothing left in the queue.
          expect(await client.scard(`${prefix}active`)).toBe(0);
        },
      ),
      { numRuns: 25 },
    );
  });
});
