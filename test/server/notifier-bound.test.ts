/**
 * The notifier's memory of sent messages (their later statuses need it) under its bound: at least
 * the last `maxTracked / 2` messages are remembered, at most `maxTracked`, and on the durable
 * server the rows of forgotten messages are deleted a bounded number a step, so the table stays
 * near the bound and holds every message still remembered.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/index.js';
import type { OutgoingMessage } from '../../src/core/dispatch/types.js';
import { Outbox } from '../../src/events/outbox.js';
import { cryptoRandom } from '../../src/server/crypto-random.js';
import { Notifier } from '../../src/server/notifier.js';

function message(i: number): OutgoingMessage {
  return {
    messageId: `s1.${i}.0`,
    contactId: `s1.${i}`,
    submissionId: 's1',
    index: i,
    businessId: 1,
    typeId: 10,
    campaignId: 1,
    queueId: undefined,
    botId: undefined,
    contact: { phone: `5511980${String(i).padStart(6, '0')}`, id: i + 1, requestId: 'r', companyId: 1, costCenterId: 0 } as OutgoingMessage['contact'],
    phone: '5511990000001',
    templateId: 100,
    text: `Hi ${i}`,
    handedOutAt: 0,
    isRetry: false,
    retryIndex: null,
    maxRetries: 0,
    retryInterval: 0,
  };
}

describe('the notifier under its bound of sent messages', () => {
  it('remembers the newest, forgets the oldest, and deletes the rows of forgotten ones a step at a time', () => {
    const clock = new ManualClock(1_790_000_000_000);
    const random = cryptoRandom;
    const maxTracked = 1_000;
    const notifier = new Notifier({ clock, random, outbox: new Outbox({ random }), onEnqueued: () => undefined, batchIntervalMs: 60_000, maxTracked, secrets: {}, trackChanges: true });
    const table = new Map<string, unknown>();
    const step = () => {
      const c = notifier.takeChanges();
      for (const [key, row] of c.trackedPut) table.set(key, row);
      for (const key of c.trackedDelete) table.delete(key);
      return c.trackedDelete.length;
    };
    const total = 50_000;
    let mostDeleted = 0;
    for (let i = 0; i < total; i++) {
      notifier.sent(message(i), 1);
      if (i % 100 === 99) mostDeleted = Math.max(mostDeleted, step());
    }
    step();
    const remembered = (i: number) => notifier.laterStatus({ messageId: `s1.${i}.0`, status: 'DEVICE' });
    // The newest half of the bound is remembered, and nothing older than the bound.
    for (let i = total - maxTracked / 2; i < total; i++) expect(remembered(i), `message ${i}`).toBe(true);
    for (let i = 0; i < total - maxTracked; i++) expect(remembered(i), `message ${i}`).toBe(false);
    // The table holds the remembered ones and little else.
    expect(table.size).toBeLessThanOrEqual(maxTracked);
    for (let i = total - maxTracked / 2; i < total; i++) expect(table.has(`m:s1.${i}.0`)).toBe(true);
    expect(mostDeleted).toBeGreaterThan(0);
    // A snapshot lists what is remembered, oldest first.
    const ids = notifier.snapshot().tracked.map(([id]) => Number(id.split('.')[1]));
    expect(ids.length).toBeLessThanOrEqual(maxTracked);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(ids.at(-1)).toBe(total - 1);
  });
});
