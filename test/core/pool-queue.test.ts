/** The queue's own repair path: a count that says more than the queue holds is a bug, reported, not a crash. */
import { describe, expect, it } from 'vitest';
import { PoolQueue } from '../../src/core/dispatch/pool-queue.js';
import { ObjectContacts } from '../../src/core/dispatch/contact-list.js';
import { REJECTED, createRecord } from '../../src/core/dispatch/record.js';

/** A record of `n` contacts in campaign 1 of (business 1, type 10). */
const record = (seq: number, n: number, queue: PoolQueue) =>
  createRecord(seq, { businessId: 1, typeId: 10, campaignId: 1 }, new ObjectContacts(Array.from({ length: n }, (_, i) => ({ phone: `55119000000${i}` }))), queue);

describe('PoolQueue', () => {
  it('serves contacts that came back before fresh ones, in the order they came back', () => {
    const queue = new PoolQueue(1, 10, () => {});
    const a = record(1, 3, queue);
    const b = record(2, 2, queue);
    queue.addFresh(a, 3);
    queue.addFresh(b, 2);
    expect([queue.next(), queue.index]).toEqual([a, 0]);
    queue.addBack(b, 1); // pretend b's contact 1 came back (a restore)
    queue.addBack(a, 0);
    const order: string[] = [];
    for (let r = queue.next(); r; r = queue.next()) order.push(`${r.id}.${queue.index}`);
    expect(order).toEqual(['s2.1', 's1.0', 's1.1', 's1.2', 's2.0', 's2.1']);
    expect(queue.ready).toBe(0);
    expect(queue.flows.size).toBe(0);
  });

  it('reports and repairs a count that says more than it holds', () => {
    const anomalies: string[] = [];
    const queue = new PoolQueue(1, 10, (m) => anomalies.push(m));
    const a = record(1, 2, queue);
    a.state[1] = REJECTED;
    queue.addFresh(a, 2); // says 2, holds 1
    expect(queue.next()).toBe(a);
    expect(queue.next()).toBeUndefined();
    expect(anomalies).toEqual(['s1: counted 1 fresh contacts, found none; recounted']);
    expect(queue.ready).toBe(0);
    expect(a.inFresh).toBe(false);
  });
});
