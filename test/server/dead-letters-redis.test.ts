/**
 * Dead letters on Redis, shared by every instance: the instance whose delivery gave up writes
 * them (with the step that acknowledges the event), the other lists them and replays them, and the
 * event goes again, under its event id, from whichever instance claims it. Every wait is for a
 * condition.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cleanup, connect, describeTargets, testPrefix, type TestClient } from '../redis/helpers.js';
import { KEY_2, api, quietProvider, startServer, waitFor, type Started } from './helpers.js';
import { startSwitchedReceiver, type SwitchedReceiver } from './dead-letter-receiver.js';

describeTargets('dead letters on Redis', (target) => {
  let client: TestClient;
  let base: string;
  let a: Started;
  let b: Started;
  let receiver: SwitchedReceiver;
  const list = async (s: Started, query = '', key?: string) => (await api(s.url, `/messenger/webhooks/dead-letters/${query}`, key ? { key } : {})).json.dead_letters as any[];

  beforeAll(async () => {
    client = connect(target);
    base = testPrefix('dead-letters');
    receiver = await startSwitchedReceiver();
    const redis = { client, prefix: base };
    // Gives up within a second; an attempt's deadline within the age, so events replayed together
    // wait for the first (the probe of a receiver still marked down) rather than give up at once.
    const outbox = { initialDelayMs: 20, maxDelayMs: 50, probeIntervalMs: 20, maxAgeMs: 1_000, attemptTimeoutMs: 500 };
    const delivery = { requestTimeoutMs: 400 };
    a = await startServer({ redis: { ...redis, consumer: 'a' }, channel: quietProvider().channel(), outbox, delivery, drainTimeoutMs: 100 });
    b = await startServer({ redis: { ...redis, consumer: 'b' }, channel: quietProvider().channel(), outbox, delivery, drainTimeoutMs: 100 });
  });
  afterAll(async () => {
    await a?.server.close();
    await b?.server.close();
    await receiver?.close();
    await cleanup(client, base);
    client.disconnect();
  });

  it('dead-lettered on one instance, listed and replayed from the other', async () => {
    expect((await api(a.url, '/messenger/config/', { body: { url_report_webhook: `${receiver.url}/reports` } })).status).toBe(200);
    expect((await api(a.url, '/reports/', { body: { report_type: 'numbers' } })).status).toBe(202);
    // Either instance claims the event and gives up on it: the other one lists it and replays it.
    await waitFor(() => a.server.sendpool.stats().webhooksDeadLettered + b.server.sendpool.stats().webhooksDeadLettered === 1, 'the event dead-lettered');
    const [dying, other] = a.server.sendpool.stats().webhooksDeadLettered === 1 ? [a, b] : [b, a];
    await waitFor(async () => (await list(other)).length === 1, 'the dead letter seen from the other instance');
    const [d] = await list(other);
    expect(d).toMatchObject({ family: 'report', company_id: 1, url: `${receiver.url}/reports`, payload: { event: 'report.ready' } });
    expect(d.last_error).toMatch(/^HTTP 500/);
    expect(await list(dying)).toEqual([d]);
    expect(await list(other, '', KEY_2)).toEqual([]);
    expect(await list(other, '?family=hsm')).toEqual([]);
    expect((await api(other.url, '/metrics', { key: null })).text).toContain('sendpool_webhook_dead_letters{family="report"} 1');

    receiver.failing = false;
    const replay = await api(other.url, `/messenger/webhooks/dead-letters/${d.event_id}/replay`, { method: 'POST' });
    expect(replay.status).toBe(202);
    // Out of the shared dead letters at once (the 202 came after the script), delivered by either instance.
    expect(await list(dying)).toEqual([]);
    await waitFor(() => receiver.accepted.some((x) => x.id === d.event_id), 'the replayed event delivered');
    expect(receiver.accepted.find((x) => x.id === d.event_id)!.payload).toEqual(d.payload);
    expect((await api(a.url, `/messenger/webhooks/dead-letters/${d.event_id}/replay`, { method: 'POST' })).status).toBe(404);
  });

  it('replays all of a company’s dead letters from any instance', async () => {
    receiver.failing = true;
    for (let i = 0; i < 3; i++) expect((await api(a.url, '/reports/', { body: { report_type: 'numbers' } })).status).toBe(202);
    await waitFor(async () => (await list(b)).length === 3, 'three dead letters');
    const dead = await list(a);
    receiver.failing = false;
    const all = await api(a.url, '/dashboard/api/dead-letters/replay/', { body: { family: 'report' } });
    expect(all.status).toBe(202);
    expect(all.json.replayed).toBe(dead.length);
    await waitFor(() => dead.every((d) => receiver.accepted.some((x) => x.id === d.event_id)), 'every replayed event delivered');
    await waitFor(async () => (await list(b)).length === 0, 'no dead letters left');
  });
});
