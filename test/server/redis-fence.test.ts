/**
 * The fence of the server on Redis (shared-phones.ts, scripts/step.ts): a request whose instance
 * looks dead (its heartbeat lapsed, or the connection its heartbeat names is gone) is voided when
 * another request takes over its phones, and the step script then refuses to commit it (nothing of
 * the step is written; the instance writes it again without the request). A request of a live
 * instance keeps its phones (the other is answered duplicated); a committed one cannot be voided.
 * Also the idempotency records shared by instances (shared-idempotency.ts).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ContactQueue, type ChunkBody } from '../../src/server/backends/redis/queue.js';
import { SharedIdempotency } from '../../src/server/backends/redis/shared-idempotency.js';
import { SharedPhones } from '../../src/server/backends/redis/shared-phones.js';
import { cleanup, connect, describeTargets, testPrefix, type TestClient } from '../redis/helpers.js';

function chunk(requestId: string, campaignId: number, phones: readonly string[]): ChunkBody {
  return {
    requestId,
    companyId: 1,
    businessId: 1,
    typeId: 1,
    campaignId,
    maxRetries: 2,
    retryInterval: 0,
    contacts: phones.map((phone, i) => ({ id: i + 1, costCenterId: 0, phone })),
  };
}

const PHONES = ['5511990000001', '5511990000002', '5511990000003'];

describeTargets('the fence: a dead instance’s request is voided, never committed', (target) => {
  let client: TestClient;
  let base: string;
  let prefix: string;
  let campaign = 0;
  const phonesOf = (instance: string) => new SharedPhones(client, prefix, instance);
  const heartbeat = (instance: string, value: string | null) => (value === null ? client.del(`${prefix}alive:${instance}`) : client.set(`${prefix}alive:${instance}`, value, 'PX', 60_000));
  const mark = (request: string) => client.get(`${prefix}req:${request}`);

  beforeAll(() => {
    client = connect(target);
    base = testPrefix('fence');
    prefix = `${base}{queue}:`;
  });
  afterAll(async () => {
    await cleanup(client, base);
    client.disconnect();
  });

  it('a request whose instance lost its connection is voided and its phones taken over; its step is refused whole', async () => {
    const c = ++campaign;
    const ghost = await phonesOf('ghost').reserve(1, c, 'req-ghost', PHONES);
    expect(PHONES.some((p) => ghost.taken.has(p))).toBe(false);
    // Its heartbeat lives and names a connection Redis does not have (the process died).
    await heartbeat('ghost', 'id:987654321');
    const retry = await phonesOf('alive').reserveTakingOver(1, c, 'req-retry', PHONES);
    expect(PHONES.filter((p) => retry.taken.has(p))).toEqual([]);
    expect(await mark('req-ghost')).toBe('void');
    expect(await client.hget(`${prefix}ph:c1.${c}`, PHONES[0]!)).toMatch(/^req-retry@/);
    // The ghost comes back (it was only partitioned): its step, with another request's chunk, is
    // refused whole and says which request was voided; nothing of it is written.
    const queue = new ContactQueue({ client, consumer: 'ghost', prefix });
    const stepId = 'step-fenced';
    const refused = await queue.step({ id: stepId, chunks: [chunk('req-ghost', c, PHONES), chunk('req-other', c + 1000, ['5511990000009'])], requests: [{ id: 'req-other' }] });
    expect(refused.voided).toEqual(['req-ghost']);
    expect(await client.exists(`${prefix}s:c1.${c}`, `${prefix}s:c1.${c + 1000}`, `${prefix}step:${stepId}`)).toBe(0);
    expect(await mark('req-other')).toBeNull();
    // Written again without it: the other request commits.
    const written = await queue.step({ id: stepId, chunks: [chunk('req-other', c + 1000, ['5511990000009'])], requests: [{ id: 'req-other' }] });
    expect(written.voided).toBeUndefined();
    expect(written.ids).toHaveLength(1);
    expect(await mark('req-other')).toBe('1');
    expect(await mark('req-ghost')).toBe('void');
  });

  it('a request whose instance lives keeps its phones: the other is refused them (duplicated), nothing voided', async () => {
    const c = ++campaign;
    await phonesOf('busy').reserve(1, c, 'req-busy', PHONES);
    // Its heartbeat names this test's own connection (on a Cluster: no connection, alive until it lapses).
    await heartbeat('busy', target.name === 'single' ? `id:${String(await client.call('CLIENT', 'ID'))}` : '1');
    const other = await phonesOf('alive').reserveTakingOver(1, c, 'req-dup', PHONES);
    expect(PHONES.filter((p) => other.taken.has(p))).toEqual(PHONES);
    expect(other.pending).toEqual([{ request: 'req-busy', instance: 'busy' }]);
    expect(await mark('req-busy')).toBeNull();
  });

  it('a request whose heartbeat lapsed is voided by the reservation that takes over its phones', async () => {
    const c = ++campaign;
    await phonesOf('gone').reserve(1, c, 'req-gone', PHONES);
    await heartbeat('gone', null);
    const retry = await phonesOf('alive').reserve(1, c, 'req-after', PHONES);
    expect(PHONES.filter((p) => retry.taken.has(p))).toEqual([]);
    expect(retry.pending).toEqual([]);
    expect(await mark('req-gone')).toBe('void');
  });

  it('a committed request is never voided: its phones stay taken', async () => {
    const c = ++campaign;
    await phonesOf('done').reserve(1, c, 'req-done', PHONES);
    await new ContactQueue({ client, consumer: 'done', prefix }).step({ chunks: [chunk('req-done', c, PHONES)] });
    await heartbeat('done', 'id:987654321');
    expect(await phonesOf('alive').void(['req-done'])).toEqual([]);
    const retry = await phonesOf('alive').reserveTakingOver(1, c, 'req-late', PHONES);
    expect(PHONES.filter((p) => retry.taken.has(p))).toEqual(PHONES);
    expect(await mark('req-done')).toBe('1');
  });

  it('idempotency records: first answer kept by the step, replayed; another body refused; a live holder answered in progress; a dead one taken over', async () => {
    const phones = phonesOf('alive');
    const idem = new SharedIdempotency(client, prefix, 'alive', (r) => phones.void(r));
    expect(await idem.begin(1, 'key-1', 'fp-a', 'req-k1')).toEqual({ kind: 'new' });
    // While it runs (this instance alive): another request with the key is told to wait.
    await heartbeat('alive', target.name === 'single' ? `id:${String(await client.call('CLIENT', 'ID'))}` : '1');
    const other = new SharedIdempotency(client, prefix, 'other', (r) => phones.void(r));
    expect(await other.begin(1, 'key-1', 'fp-a', 'req-k2')).toEqual({ kind: 'in-progress' });
    expect(await other.begin(1, 'key-1', 'fp-b', 'req-k2')).toEqual({ kind: 'mismatch' });
    // Its 202 is kept by the step that commits it.
    const answer = { status: 202, body: { request_id: 'req-k1', accepted: 3, rejected: 0 } };
    await new ContactQueue({ client, consumer: 'alive', prefix }).step({ requests: [{ id: 'req-k1', key: idem.recordKey(1, 'key-1'), answer: JSON.stringify(answer) }] });
    expect(await other.begin(1, 'key-1', 'fp-a', 'req-k3')).toEqual({ kind: 'replay', answer });
    // The same key is another company's own.
    expect(await other.begin(2, 'key-1', 'fp-b', 'req-k4')).toEqual({ kind: 'new' });
    // A key held by a request whose instance died: voided and taken over.
    const ghost = new SharedIdempotency(client, prefix, 'ghost-2', (r) => phones.void(r));
    expect(await ghost.begin(1, 'key-2', 'fp-a', 'req-g')).toEqual({ kind: 'new' });
    await heartbeat('ghost-2', 'id:987654321');
    expect(await other.begin(1, 'key-2', 'fp-a', 'req-t')).toEqual({ kind: 'new' });
    expect(await mark('req-g')).toBe('void');
    // A request without a 202 frees its key.
    await other.end(1, 'key-2', 'req-t');
    expect(await ghost.begin(1, 'key-2', 'fp-b', 'req-u')).toEqual({ kind: 'new' });
  });
});
