/**
 * The scripted responder (test/store/scripted-redis.ts) answers like Redis running the real
 * scripts: random sequences of lease, give-back and epoch calls go to both, and every answer and
 * every field the scripts keep must agree. This is what lets the store contract suite run on the
 * responder, without Redis, in every test run.
 *
 * Simulated time stays within the keys' lifetimes (Redis expires keys by its own clock, the
 * responder by the calls' time), so expiry never separates the two.
 */
import fc from 'fast-check';
import { afterAll, expect, it } from 'vitest';
import { runScript, script } from '../../src/redis/script-runner.js';
import { EPOCH_SCRIPT } from '../../src/redis/scripts/epoch.js';
import { GIVE_BACK_SCRIPT } from '../../src/redis/scripts/give-back.js';
import { LEASE_SCRIPT } from '../../src/redis/scripts/lease.js';
import { ScriptedRedis } from '../store/scripted-redis.js';
import { cleanup, connect, describeTargets, testPrefix } from './helpers.js';

const LEASE = script(LEASE_SCRIPT);
const GIVE_BACK = script(GIVE_BACK_SCRIPT);
const EPOCH = script(EPOCH_SCRIPT);
const HOUR = 3_600_000;
/** Lease records and states outlive the whole simulated run (at most ~32 h). */
const KEEP = 60 * HOUR;

type Call =
  | {
      kind: 'lease';
      dt: number;
      phone: number;
      want: number;
      perHour: number;
      perSecond: number;
      per24h: number;
      lease: number;
      ttl: number;
      confirm: string;
      instance: number;
      fair: boolean;
      held: number;
      fleet: number;
    }
  | { kind: 'give-back'; dt: number; phone: number; lease: number; ttl: number; returned: number; instance: number }
  | { kind: 'epoch'; dt: number; known: number; asked: number[]; seen: number[] };

const phoneOf = (i: number) => `55119000000${i}`;
const instanceOf = (i: number) => (i === 0 ? '' : `i${i}`);

const callArb: fc.Arbitrary<Call> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('lease' as const),
      dt: fc.oneof(fc.integer({ min: 0, max: 2000 }), fc.constantFrom(500, 1000, 5000), fc.integer({ min: 0, max: 3 * HOUR })),
      phone: fc.integer({ min: 0, max: 1 }),
      want: fc.integer({ min: 0, max: 40 }),
      perHour: fc.constantFrom(10, 60, 100, 3600),
      perSecond: fc.constantFrom(0, 0, 2, 5),
      per24h: fc.constantFrom(5, 30, 200, 1000),
      lease: fc.integer({ min: 1, max: 5 }),
      ttl: fc.constantFrom(500, 1000, 5000),
      confirm: fc.constantFrom('', '', '', '0', '500000'),
      instance: fc.integer({ min: 0, max: 3 }),
      fair: fc.boolean(),
      held: fc.integer({ min: 0, max: 5 }),
      fleet: fc.integer({ min: 1, max: 3 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('give-back' as const),
      dt: fc.integer({ min: 0, max: 1500 }),
      phone: fc.integer({ min: 0, max: 1 }),
      lease: fc.integer({ min: 1, max: 5 }),
      ttl: fc.constantFrom(500, 1000, 5000),
      returned: fc.integer({ min: 0, max: 40 }),
      instance: fc.integer({ min: 0, max: 3 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('epoch' as const),
      dt: fc.integer({ min: 0, max: 5000 }),
      known: fc.integer({ min: 0, max: 2 }),
      asked: fc.array(fc.integer({ min: 0, max: 2 }), { maxLength: 2 }),
      seen: fc.array(fc.integer({ min: 0, max: 2 }), { maxLength: 2 }),
    }),
  },
);

/** A hash as both sides keep it; the JSON fields compared parsed (key order and number text may differ). */
function normal(hash: Record<string, string> | Map<string, string> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of hash instanceof Map ? hash : Object.entries(hash ?? {})) out[k] = k === 'fair' || k === 'hd' ? JSON.parse(v) : Number.isNaN(Number(v)) ? v : Number(v);
  return out;
}

describeTargets('the scripted responder answers as the scripts do', (target) => {
  const client = connect(target);
  const root = testPrefix('scripted');
  afterAll(async () => {
    await cleanup(client, root);
    client.disconnect();
  });
  let run = 0;

  it('lease, give-back and epoch calls in any order: the same answers, the same state', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(callArb, { minLength: 1, maxLength: 25 }), async (calls) => {
        const prefix = `${root}${++run}:`;
        const scripted = new ScriptedRedis();
        let now = 1_000_000;
        const epochs = ['', 'e1', 'e2'];
        for (const c of calls) {
          now += c.dt;
          let keys: string[];
          let args: (string | number)[];
          let s: typeof LEASE;
          if (c.kind === 'lease') {
            const phone = phoneOf(c.phone);
            keys = [`${prefix}{${phone}}:s`, `${prefix}{${phone}}:l:${c.lease}`];
            args = [
              now,
              '',
              3_600_000,
              KEEP,
              0,
              instanceOf(c.instance),
              1000,
              200,
              c.fleet,
              c.fair ? '1' : '',
              c.want,
              c.perHour,
              c.perSecond,
              c.per24h,
              String(c.lease),
              c.ttl,
              0,
              c.confirm,
              c.held,
              c.held > 0 ? now + c.ttl : 0,
            ];
            s = LEASE;
          } else if (c.kind === 'give-back') {
            const phone = phoneOf(c.phone);
            keys = [`${prefix}{${phone}}:s`, `${prefix}{${phone}}:l:${c.lease}`];
            args = [now, c.ttl, c.returned, String(c.lease), '', instanceOf(c.instance)];
            s = GIVE_BACK;
          } else {
            keys = [`${prefix}{epoch}`, `${prefix}{epoch}:numbers`];
            args = [now, epochs[c.known]!, `new-${now}`, 2 * HOUR, c.asked.length, ...c.asked.map(phoneOf), ...c.seen.flatMap((p) => [phoneOf(p), now])];
            s = EPOCH;
          }
          const real = await runScript(client, s, keys, args);
          const model = await scripted.evalsha(s.sha, keys.length, ...keys, ...args);
          expect(model, `${c.kind} at ${now}: ${JSON.stringify(c)}`).toEqual(real);
          for (const k of keys) {
            if (k.endsWith('{epoch}:numbers')) continue;
            expect(normal(scripted.keyspace.hashes.get(k)), `${k} after ${c.kind}`).toEqual(normal(await client.hgetall(k)));
          }
        }
      }),
      { numRuns: 100 },
    );
  });
});
