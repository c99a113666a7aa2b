/**
 * A chunk whose contacts are all final, and whose step (the finals and the acknowledgement) has not
 * been written yet, stays this instance's: its renewal goes on until the step is written. Before,
 * only chunks with contacts still open were renewed, so a step held back past the lease (Redis
 * away, a reset being handled) let another instance take the chunk over from Redis, where no final
 * was recorded, and send its contacts again; or this instance took its own chunk back (26–65 of
 * 6,000 contacts were sent twice around a Redis reset, some by the same instance). The lease is
 * Redis's idle time of the entry: the test waits for that condition, not for a time.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock, createEngine } from '../../src/index.js';
import { ContactQueue } from '../../src/server/backends/redis/queue.js';
import { SharedDispatch } from '../../src/server/backends/redis/shared-dispatch.js';
import { cleanup, connect, describeTargets, testPrefix, type TestClient } from '../redis/helpers.js';
import { testFleet, waitFor } from './helpers.js';

const LEASE_MS = 2000;

describeTargets('a chunk done and not yet written (Redis)', (target) => {
  let client: TestClient;
  let base: string;
  beforeAll(() => {
    client = connect(target);
    base = testPrefix('done-renewal');
  });
  afterAll(async () => {
    await cleanup(client, base);
    client.disconnect();
  });

  it('is renewed until its step is written: no instance takes it over and sends it again', { timeout: 120_000 }, async () => {
    const prefix = `${base}{q}:`;
    const clock = new ManualClock(0);
    const make = (consumer: string) => {
      const engine = createEngine(testFleet(), { clock });
      return { engine, shared: new SharedDispatch(new ContactQueue({ client, consumer, prefix, leaseMs: LEASE_MS }), engine) };
    };
    const contacts = [1, 2, 3].map((id) => ({ id, costCenterId: 0, phone: String(5511900000000 + id), variables: ['x'] }));
    await new ContactQueue({ client, consumer: 'intake', prefix }).enqueue([{ requestId: 'r1', companyId: 1, businessId: 1, typeId: 10, maxRetries: 0, retryInterval: 0, contacts }]);
    const [stream] = await client.smembers(`${prefix}active`);
    const idle = async () => {
      const pending = (await client.call('XPENDING', stream!, 'dispatch', '-', '+', 10)) as [string, string, number, number][];
      return pending.map(([, consumer, ms]) => ({ consumer, ms }));
    };

    const a = make('a');
    expect(await a.shared.feed()).toBe(3);
    const polled = a.engine.poll();
    expect(polled).toHaveLength(3);
    a.shared.handedOut(polled);
    await a.shared.flush();
    for (const m of polled) a.engine.report(m.messageId, { status: 'sent' });
    // Every contact final: the chunk is done here, its step not written (Redis away, say).
    a.shared.outcomes(a.engine.takeOutcomes());
    expect(a.shared.open).toBe(0);

    // The lease passes without a renewal: then a renewal period comes and renews it.
    await waitFor(async () => (await idle()).some((p) => p.ms >= LEASE_MS), 'the chunk idle for the lease');
    await a.shared.renew();
    expect((await idle()).every((p) => p.consumer === 'a' && p.ms < LEASE_MS)).toBe(true);
    // Another instance looking for dead instances' chunks finds none.
    const b = make('b');
    expect(await b.shared.feed()).toBe(0);
    expect(b.engine.poll()).toHaveLength(0);

    // Not renewed for the lease again: this instance's own look does not take it back either.
    await waitFor(async () => (await idle()).some((p) => p.ms >= LEASE_MS), 'the chunk idle for the lease again');
    expect(await a.shared.feed()).toBe(0);
    expect(a.engine.poll()).toHaveLength(0);

    // The step is written at last: the chunk is acknowledged and gone, sent once.
    await a.shared.flush();
    expect(await client.exists(stream!)).toBe(0);
    expect(await client.scard(`${prefix}active`)).toBe(0);
  });
});
