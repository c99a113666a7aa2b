/**
 * The activity log on its own, with a manual clock: which statuses make a message entry, how its
 * status merges, what an attendance keeps, and both bounds (age and count) with the changes the
 * durable server writes for them. (Over HTTP: reports-activity.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/index.js';
import { ActivityLog, messageStatus } from '../../src/server/activity-log.js';
import type { ServerContact } from '../../src/server/contacts.js';

const DAY = 86_400_000;
const contact = (id: number, companyId = 1): ServerContact => ({ id, phone: `5511980000${String(id).padStart(3, '0')}`, requestId: `req-${companyId}`, companyId, costCenterId: 4 });
const FROM = '5511990000001';

function log(clock: ManualClock, bounds: { retentionMs?: number; maxMessages?: number; maxAttendances?: number } = {}) {
  return new ActivityLog({
    clock,
    retentionMs: bounds.retentionMs ?? 30 * DAY,
    maxMessages: bounds.maxMessages ?? 1000,
    maxAttendances: bounds.maxAttendances ?? 1000,
    businessOf: (phone) => (phone === FROM ? 1 : undefined),
    trackChanges: true,
  });
}

describe('activity log', () => {
  it('keeps one entry per message sent (a retry is another), merging its statuses in any order', () => {
    const clock = new ManualClock(1_000);
    const a = log(clock);
    const c = contact(1);
    // ENQUEUED, and a contact that ends in the queue, are no message sent.
    a.status(c, 7, null, 1_000, { status: 'ENQUEUED', from: null, message: null });
    a.status(c, 7, null, 1_000, { status: 'EXPIRED', from: null, message: null });
    expect(a.messages(1, 0, 10_000)).toEqual([]);
    a.status(c, 7, null, 1_000, { status: 'FAILED', from: FROM, message: 'Hi', failure: { code: 131000 } });
    clock.advance(10);
    a.status(c, 7, 0, 1_010, { status: 'SENT', from: FROM, message: 'Hi' });
    clock.advance(10);
    a.status(c, 7, 0, 1_010, { status: 'READ', from: FROM, message: 'Hi' });
    clock.advance(10);
    // A late DEVICE does not move it back.
    a.status(c, 7, 0, 1_010, { status: 'DEVICE', from: FROM, message: 'Hi' });
    const [first, retry] = a.messages(1, 0, 10_000);
    expect(first).toMatchObject({ contactId: 1, retryIndex: null, businessId: 1, reason: 'WhatsApp, 131000, Something went wrong', sentAt: 1_000 });
    expect(messageStatus(first!)).toEqual({ status: 'FAILED', at: 1_000 });
    expect(retry).toMatchObject({ contactId: 1, retryIndex: 0, campaignId: 7, costCenterId: 4, to: c.phone, from: FROM, text: 'Hi', times: { SENT: 1_010, READ: 1_020, DEVICE: 1_030 } });
    expect(messageStatus(retry!)).toEqual({ status: 'READ', at: 1_020 });
  });

  it('keeps a closed attendance with its counts, opening time and survey score', () => {
    const clock = new ManualClock(100_000);
    const a = log(clock);
    a.attendance(
      {
        messageId: 'x',
        attendanceId: 5,
        ticketId: 50,
        ticketUuid: 'u',
        closedAt: 100_000,
        messages: [
          { sender: 'campaign', type: 'text', text: 'Hi', at: 10_000 },
          { sender: 'client', type: 'text', text: 'Hello', at: 40_000 },
          { sender: 'bot', type: 'text', text: 'One moment', at: 41_000 },
          { sender: { attendantId: 3 }, type: 'text', text: 'How can I help?', at: 50_000 },
        ],
        survey: {
          id: 1,
          name: 'CSAT',
          status: 'completed',
          startedAt: 90_000,
          answers: [
            { question: 'Rate', questionType: 'scale', answer: '4', answeredAt: 91_000 },
            { question: 'Again', questionType: 'scale', answer: '5', answeredAt: 92_000 },
            { question: 'Why', questionType: 'text', answer: 'fast', answeredAt: 93_000 },
          ],
        },
      },
      { contact: contact(3), campaignId: 8, from: FROM },
    );
    expect(a.attendances(1, 0, 200_000)).toEqual([
      expect.objectContaining({
        attendanceId: 5,
        contactId: 3,
        campaignId: 8,
        openedAt: 40_000,
        closedAt: 100_000,
        messages: { total: 4, campaign: 1, client: 1, bot: 1, attendant: 1 },
        survey: { id: 1, name: 'CSAT', status: 'completed', answers: 3, score: 4.5 },
      }),
    ]);
    expect(a.attendances(2, 0, 200_000)).toEqual([]);
    // The period is [start, end).
    expect(a.attendances(1, 0, 100_000)).toEqual([]);
    expect(a.attendances(1, 100_000, 100_001)).toHaveLength(1);
  });

  it('drops entries past the retention (the store drops them by time) and beyond the count, oldest first (by key)', () => {
    const clock = new ManualClock(0);
    const a = log(clock, { retentionMs: DAY, maxMessages: 3 });
    const send = (id: number) => a.status(contact(id), 1, null, clock.now(), { status: 'SENT', from: FROM, message: `m${id}` });
    for (let id = 1; id <= 4; id++) {
      send(id);
      clock.advance(1000);
    }
    expect(a.messages(1, 0, Infinity).map((e) => e.contactId)).toEqual([2, 3, 4]);
    const first = a.takeChanges();
    expect(first.activityPut?.map(([key, at]) => [key, at])).toEqual([
      ['m:2', 1000],
      ['m:3', 2000],
      ['m:4', 3000],
    ]);
    expect(first.activityDelete).toEqual(['m:1']);
    expect(first.activityBefore).toBeUndefined();

    clock.set(DAY + 2500);
    send(5);
    // 2 and 3 are older than a day: gone from memory, and from the store by time.
    expect(a.messages(1, 0, Infinity).map((e) => e.contactId)).toEqual([4, 5]);
    const second = a.takeChanges();
    expect(second).toEqual({ activityPut: [['m:5', DAY + 2500, expect.objectContaining({ contactId: 5 })]], activityBefore: 2500 });
    // A status of a message sent before the retention makes no entry.
    a.status(contact(1), 1, null, 0, { status: 'READ', from: FROM, message: 'm1' });
    expect(a.size.messages).toBe(2);
    // `full` lists everything kept.
    expect(a.takeChanges(true).activityPut?.map(([key]) => key)).toEqual(['m:4', 'm:5']);
  });

  it('loads what was kept and applies the bounds to it', () => {
    const clock = new ManualClock(10 * DAY);
    const a = log(clock, { retentionMs: DAY });
    const entry = (id: number, sentAt: number) => ({
      companyId: 1,
      contactId: id,
      requestId: 'r',
      campaignId: 1,
      costCenterId: 0,
      businessId: 1,
      from: FROM,
      to: 'x',
      retryIndex: null,
      text: 't',
      sentAt,
      progress: 2,
      times: { SENT: sentAt },
      reason: null,
    });
    a.load([
      ['m:1', entry(1, DAY)],
      ['m:2', entry(2, 9.5 * DAY)],
    ]);
    expect(a.messages(1, 0, Infinity).map((e) => e.contactId)).toEqual([2]);
    expect(a.takeChanges()).toEqual({ activityBefore: 9 * DAY });
  });
});
