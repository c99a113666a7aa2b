/**
 * Failures with four instances on simulated time (as in fleet.test.ts): an instance killed while
 * it holds leases, Redis stopped and restarted mid-run with its data, and Redis restarted empty
 * (no persistence) mid-run. In all, no window is ever exceeded by the sends of all instances
 * together (the killed one's included, and those made before Redis lost its memory), no contact
 * goes twice, and sending goes on.
 *
 * Each fault is injected once the instances have done what the test needs (sent so many, seen
 * Redis go away), and the run ends once they have done what the test checks: nothing depends on
 * how fast the machine runs the processes. The simulated clock is real time scaled, so the
 * assertions are invariants (windows, contacts, fail closed, resumption), not rates.
 *
 * The restart tests own a redis-server on their own port: one with an append-only file fsynced at
 * every write, so the limit state survives the restart as it must in production (docs/scaling.md),
 * and one without persistence, whose restart forgets everything: the instances must notice.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { readSends, startInstances, testFleet, NUMBERS, WAIT_BOUND_MS, waitUntil, windowViolations, type RunningInstance } from './fleet-run.js';
import { cleanup, connect, describeTargets, TARGETS, testPrefix } from './helpers.js';
import { privateRedis } from './private-redis.js';

const MINUTE = 60_000;
const SCALE = 300;
/** Where a worker stops by itself: a bound only a hang reaches (the tests stop them). */
const SIM_END = WAIT_BOUND_MS * SCALE;
/** Sends each instance makes before a fault is injected. */
const BEFORE_FAULT = 500;

const finishedOrSentAfter = (x: RunningInstance, at: number): boolean => x.exited || x.progress.lastAt > at;
/** How many events of a type an instance reported so far. */
const count = (x: RunningInstance, type: string): number => x.progress.events[type] ?? 0;

describeTargets('failures', (target) => {
  const prefix = testPrefix('failures');
  afterAll(async () => {
    const client = connect(target);
    await cleanup(client, prefix);
    client.disconnect();
  });

  it(
    'an instance killed while holding leases: no over-send, the others carry on',
    async () => {
      // Every instance has more contacts than it can send before the test ends (the numbers are
      // saturated), so instance 0 is leasing and sending when it is killed, and the others are
      // still sending after its leases ran out.
      const fleet = await startInstances({ url: target.spec, prefix: `${prefix}kill:`, instances: 4, fleet: testFleet(NUMBERS), scale: SCALE, simEnd: SIM_END }, 40_000);
      try {
        const [victim, ...survivors] = fleet.instances as [RunningInstance, ...RunningInstance[]];
        await waitUntil(() => fleet.instances.every((x) => x.progress.sent >= BEFORE_FAULT), `every instance to send ${BEFORE_FAULT}`);
        victim.child.kill('SIGKILL');
        const killed = await victim.done;
        const killedAt = fleet.now();
        // The victim's unspent leases live one more minute at most: the survivors send after that.
        await waitUntil(() => survivors.every((x) => finishedOrSentAfter(x, killedAt + MINUTE)), 'every survivor to send after the victim’s leases expired');
        const results = await fleet.finish();
        expect(killed.signal).toBe('SIGKILL');
        for (const r of results.slice(1)) expect(r.code).toBe(0);
        const sends = readSends(fleet.instances);
        expect(windowViolations(sends)).toEqual([]);
        expect(new Set(sends.map((s) => s.contact)).size).toBe(sends.length);
        // The victim's log holds at least what it reported (each line is written before it counts).
        expect(sends.filter((s) => s.instance === 0).length).toBeGreaterThanOrEqual(BEFORE_FAULT);
        for (const i of [1, 2, 3]) {
          const mine = sends.filter((s) => s.instance === i);
          expect(mine.length === 40_000 || mine.some((s) => s.at > killedAt + MINUTE), `instance ${i} sent after the victim's leases expired`).toBe(true);
        }
      } finally {
        fleet.kill();
      }
    },
    3 * WAIT_BOUND_MS,
  );
});

/** Restarts of a Redis of the test's own (a single server: it is stopped and started at will). */
describe.runIf(TARGETS.length > 0)('failures: Redis restarts', () => {
  it(
    'Redis stopped and restarted mid-run: no over-send, fail closed, sending resumes',
    async () => {
      const redis = await privateRedis('aof');
      await redis.start();
      const fleet = await startInstances({ url: redis.url, prefix: 'restart:', instances: 4, fleet: testFleet(NUMBERS), scale: SCALE, simEnd: SIM_END }, 40_000);
      try {
        const all = fleet.instances;
        await waitUntil(() => all.every((x) => x.progress.sent >= BEFORE_FAULT), `every instance to send ${BEFORE_FAULT}`);
        // Counted from the shutdown on (a call that timed out on a loaded machine may have made an
        // instance report a short outage before).
        const downsBefore = all.map((x) => count(x, 'redis-down'));
        redis.shutdown('save');
        const downAt = fleet.now();
        // Every instance notices (its next lease call fails), and the leases it held run out (they
        // live one simulated minute): from then on nothing may go until Redis is back.
        await waitUntil(() => all.every((x, i) => count(x, 'redis-down') > downsBefore[i]!), 'every instance to report redis-down');
        await waitUntil(() => fleet.now() > downAt + 2 * MINUTE, 'the held leases to expire');
        const upsBefore = all.map((x) => count(x, 'redis-up'));
        const upAt = fleet.now();
        await redis.start();
        await waitUntil(() => all.every((x, i) => count(x, 'redis-up') > upsBefore[i]! && x.progress.lastAt > upAt), 'every instance to report redis-up and send again');
        const results = await fleet.finish();
        for (const r of results) expect(r.code).toBe(0);
        const sends = readSends(all);
        expect(windowViolations(sends)).toEqual([]);
        expect(new Set(sends.map((s) => s.contact)).size).toBe(sends.length);
        results.forEach((r, i) => {
          const events = (r.summary?.['events'] ?? {}) as Record<string, number>;
          expect(events['redis-down'] ?? 0, `instance ${i}`).toBeGreaterThanOrEqual(1);
          expect(events['redis-up'] ?? 0, `instance ${i}`).toBeGreaterThanOrEqual(1);
          expect(
            sends.some((s) => s.instance === i && s.at > upAt),
            `instance ${i} sent after the restart`,
          ).toBe(true);
        });
        // Fail closed: while Redis was away, only tokens already held went out (leases live 60 s).
        const during = sends.filter((s) => s.at > downAt + MINUTE && s.at < upAt);
        if (process.env['SENDPOOL_DEBUG']) console.log('down', downAt, 'up', upAt, JSON.stringify(results.map((r) => r.summary)), during.slice(0, 5));
        expect(during).toEqual([]);
        // The state survived: nothing was lost, so nothing is reported as lost.
        for (const x of all) expect(count(x, 'redis-reset'), 'redis-reset').toBe(0);
      } finally {
        fleet.kill();
        redis.shutdown('nosave');
      }
    },
    3 * WAIT_BOUND_MS,
  );

  it(
    'Redis restarted empty mid-run (no persistence): every instance notices, none over-sends, sending resumes',
    async () => {
      const redis = await privateRedis('none');
      await redis.start();
      const fleet = await startInstances({ url: redis.url, prefix: 'empty:', instances: 4, fleet: testFleet(NUMBERS), scale: SCALE, simEnd: SIM_END }, 40_000);
      try {
        const all = fleet.instances;
        await waitUntil(() => all.every((x) => x.progress.sent >= BEFORE_FAULT), `every instance to send ${BEFORE_FAULT}`);
        const downsBefore = all.map((x) => count(x, 'redis-down'));
        // Gone with everything it held: the windows' usage, the epoch marker, the register.
        redis.shutdown('nosave');
        await waitUntil(() => all.every((x, i) => count(x, 'redis-down') > downsBefore[i]!), 'every instance to report redis-down');
        const upAt = fleet.now();
        await redis.start();
        // Each instance's next lease call finds its numbers' states missing (or of a new epoch) and
        // the marker gone: it reports the loss, and every window counts as full at the loss time.
        // Leases granted before the loss may still be spent for a minute (their lifetime): the
        // instances must send after that, on what the new Redis grants.
        await waitUntil(() => all.every((x) => count(x, 'redis-reset') > 0 && x.progress.lastAt > upAt + 2 * MINUTE), 'every instance to report redis-reset and send again');
        const results = await fleet.finish();
        for (const r of results) expect(r.code).toBe(0);
        const sends = readSends(all);
        // The whole run at once: the sends made before the restart count against those after it.
        expect(windowViolations(sends)).toEqual([]);
        expect(new Set(sends.map((s) => s.contact)).size).toBe(sends.length);
        const after = sends.filter((s) => s.at > upAt + MINUTE);
        if (process.env['SENDPOOL_DEBUG']) console.log('up', upAt, 'sent after', after.length, JSON.stringify(results.map((r) => r.summary)));
        // What they sent before the restart is unknown to the new Redis: every window counts as full
        // at the loss. The numbers with a 24 h limit (5,000) send nothing more for a day; the others
        // (100,000 a day) go on at their hourly rate.
        const daily = new Set(NUMBERS.filter((n) => n.per24h === 5000).map((n) => n.phone));
        expect(after.filter((s) => daily.has(s.phone))).toEqual([]);
        expect(after.length).toBeGreaterThan(0);
      } finally {
        fleet.kill();
        redis.shutdown('nosave');
      }
    },
    3 * WAIT_BOUND_MS,
  );
});
