/**
 * The notifier's HSM notifications of one message under any order and duplication of its later
 * statuses (DESIGN.md, invariant 5): the notifications made never go back in the merge's order
 * (`statusRank`), the last one is the merged status, and the campaign statistics are what the
 * statuses in order give. A READ before its DEVICE makes READ and nothing after it.
 *
 * FAILED and EXPIRED end a message's story in the notifier (it forgets the message, as before):
 * a progress status arriving after one of them is dropped, so the property puts them last.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/index.js';
import type { OutgoingMessage } from '../../src/core/dispatch/types.js';
import { EMPTY_WEBHOOK_CONFIG } from '../../src/contract/config-schema.js';
import { Outbox, type OutboxEvent } from '../../src/events/outbox.js';
import type { HsmStatus } from '../../src/events/schemas/hsm.js';
import { statusRank } from '../../src/events/status-merge.js';
import type { LaterStatus } from '../../src/server/ports/channel.js';
import { cryptoRandom } from '../../src/server/crypto-random.js';
import { Notifier } from '../../src/server/notifier.js';

const message: OutgoingMessage = {
  messageId: 's1.0.0',
  contactId: 's1.0',
  submissionId: 's1',
  index: 0,
  businessId: 1,
  typeId: 10,
  campaignId: 1,
  queueId: undefined,
  botId: undefined,
  contact: { phone: '5511980000000', id: 1, requestId: 'r', companyId: 1, costCenterId: 0 } as OutgoingMessage['contact'],
  phone: '5511990000001',
  templateId: 100,
  text: 'Hi',
  handedOutAt: 0,
  isRetry: false,
  retryIndex: null,
  maxRetries: 0,
  retryInterval: 0,
};

/** A notifier that sent `message`, and the HSM statuses it notified, in order. */
function run(statuses: readonly LaterStatus[]): { notified: HsmStatus[]; counts: unknown } {
  const clock = new ManualClock(1_790_000_000_000);
  const staged: OutboxEvent[] = [];
  const notifier = new Notifier({
    clock,
    random: cryptoRandom,
    outbox: new Outbox({ random: cryptoRandom }),
    onEnqueued: () => undefined,
    batchIntervalMs: 60_000,
    maxTracked: 100,
    secrets: {},
    stage: (e) => staged.push(e),
  });
  notifier.setConfig(1, { ...EMPTY_WEBHOOK_CONFIG, url_hsm_callback: 'https://receiver.example/hsm' });
  notifier.admit(1, 1, 1, 1);
  notifier.sent(message, 1);
  for (const status of statuses) notifier.laterStatus({ messageId: message.messageId, status, ...(status === 'FAILED' ? { failureCode: 131026 } : {}) });
  return { notified: staged.map((e) => (JSON.parse(e.body) as { status: HsmStatus }).status), counts: notifier.campaignCounts(1, 1) };
}

const arbProgress = fc.constantFrom<LaterStatus>('SERVER', 'DEVICE', 'READ', 'REPLIED');
/** FAILED and EXPIRED end the message: the notifier forgets it, so they come last here (see the module comment). */
const arbEnd = fc.option(fc.constantFrom<LaterStatus>('FAILED', 'EXPIRED'), { nil: undefined });

describe('HSM notifications of one message in any order', () => {
  it('READ before DEVICE: READ, and no DEVICE after it', () => {
    expect(run(['READ', 'DEVICE', 'SERVER']).notified).toEqual(['SENT', 'READ']);
    expect(run(['SERVER', 'DEVICE', 'READ']).notified).toEqual(['SENT', 'SERVER', 'DEVICE', 'READ']);
    expect(run(['READ', 'READ']).notified).toEqual(['SENT', 'READ']);
  });

  it('never go back, end on the merged status, and give the statistics of the statuses in order (property)', () => {
    fc.assert(
      fc.property(fc.array(arbProgress, { minLength: 1, maxLength: 8 }), arbEnd, fc.nat(), (statuses, end, seed) => {
        // The same statuses, duplicated and in another order.
        const shuffled = [...statuses, ...statuses.filter((_, i) => (i + seed) % 3 === 0)]
          .map((s, i) => ({ s, k: (i * 2654435761 + seed) % 1009 }))
          .sort((x, y) => x.k - y.k)
          .map((x) => x.s);
        const inOrder = [...new Set(statuses)].sort((a, b) => statusRank(a) - statusRank(b));
        if (end !== undefined) {
          shuffled.push(end);
          inOrder.push(end);
        }
        const a = run(shuffled);
        const b = run(inOrder);
        for (let i = 1; i < a.notified.length; i++) expect(statusRank(a.notified[i]!)).toBeGreaterThan(statusRank(a.notified[i - 1]!));
        expect(a.notified.at(-1)).toBe(b.notified.at(-1));
        expect(a.counts).toEqual(b.counts);
      }),
      { seed: 20_251_105, numRuns: 300 },
    );
  });
});
