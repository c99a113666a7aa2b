/** How long a pool needs for N more messages: the pure duration, and the engine's estimate from where its numbers stand. */
import { describe, expect, it } from 'vitest';
import { ManualClock, createEngine } from '../../src/index.js';
import { sendDurationMs } from '../../src/core/send-estimate.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

function fleet(numbers: { perHour: number; per24h: number; perSecond?: number; status?: 'active' | 'paused' }[]) {
  return {
    businesses: [
      {
        id: 1,
        name: 'Acme',
        numbers: numbers.map((n, i) => ({
          phone: `551199000000${i + 1}`,
          throughputPerHour: n.perHour,
          messagingLimit24h: n.per24h,
          status: n.status ?? 'active',
          ...(n.perSecond === undefined ? {} : { messagesPerSecond: n.perSecond }),
        })),
        templateTypes: [{ id: 10, name: 'billing', templateIds: [100] }],
      },
    ],
    templates: [{ id: 100, name: 'billing_a', text: 'Hi {{1}}', businessIds: [1], status: 'active' }],
  };
}

describe('sendDurationMs', () => {
  it('sends at the hourly rates while the count fits in one 24 h allowance', () => {
    expect(sendDurationMs(0, [{ perHour: 1000, per24h: 10_000, perSecond: 0 }])).toBe(0);
    expect(
      sendDurationMs(
        3000,
        [1, 2, 3].map(() => ({ perHour: 1000, per24h: 10_000, perSecond: 0 })),
      ),
    ).toBe(HOUR);
  });

  it('takes the per-second rate when it is lower, and never more than the 24 h limit in an hour', () => {
    expect(sendDurationMs(360, [{ perHour: 100_000, per24h: 1_000_000, perSecond: 1 }])).toBe(360_000);
    expect(sendDurationMs(50, [{ perHour: 1000, per24h: 100, perSecond: 0 }])).toBe(HOUR / 2);
  });

  it('adds a day for each 24 h allowance beyond the first', () => {
    const numbers = [{ perHour: 1000, per24h: 1000, perSecond: 0 }];
    expect(sendDurationMs(1000, numbers)).toBe(HOUR);
    expect(sendDurationMs(1001, numbers)).toBe(DAY + Math.ceil(HOUR / 1000));
    expect(sendDurationMs(2500, numbers)).toBe(2 * DAY + HOUR / 2);
  });

  it('is Infinity when nothing sends', () => {
    expect(sendDurationMs(1, [])).toBe(Infinity);
  });
});

describe('engine.estimateSendTime', () => {
  it('is now for what the numbers may send at once, then the rest at their rate', () => {
    const clock = new ManualClock(HOUR);
    const engine = createEngine(fleet([{ perHour: 100, per24h: 10_000 }]), { clock });
    expect(engine.estimateSendTime(1, 10, 0)).toBe(HOUR);
    expect(engine.estimateSendTime(1, 10, 100)).toBe(HOUR);
    expect(engine.estimateSendTime(1, 10, 150)).toBe(HOUR + HOUR / 2);
  });

  it('waits for the hour window to give back one message, then goes at the hourly rate', () => {
    const clock = new ManualClock(HOUR);
    const engine = createEngine(fleet([{ perHour: 10, per24h: 1000 }]), { clock });
    expect(engine.assign(1, 10, 10).assignments).toHaveLength(10);
    // One token every 6 minutes: the 1st at +6 min, the 5th at +30 min.
    expect(engine.estimateSendTime(1, 10, 1)).toBe(HOUR + 360_000);
    expect(engine.estimateSendTime(1, 10, 5)).toBe(HOUR + 5 * 360_000);
  });

  it('waits for the 24 h window when it is what holds the numbers, not for the hour', () => {
    const clock = new ManualClock(10 * HOUR);
    const engine = createEngine(fleet([{ perHour: 1000, per24h: 5 }]), { clock });
    expect(engine.assign(1, 10, 5).assignments).toHaveLength(5);
    // The sends of the 10th hour weigh until the 24 h counter's bucket is 25 h old.
    expect(engine.estimateSendTime(1, 10, 1)).toBe(35 * HOUR);
    expect(engine.queueStatus(1, 10)).toEqual({ queued: 0, waitingRetry: 0 });
  });

  it('counts from a timed resume when every number is paused, and is undefined when only a call can resume them', () => {
    const clock = new ManualClock(0);
    const engine = createEngine(
      fleet([
        { perHour: 100, per24h: 10_000 },
        { perHour: 100, per24h: 10_000 },
      ]),
      { clock },
    );
    engine.setNumberStatus('5511990000001', 'paused');
    engine.setNumberStatus('5511990000002', 'paused');
    expect(engine.estimateSendTime(1, 10, 10)).toBeUndefined();
    engine.setNumberStatus('5511990000002', 'paused', { until: HOUR });
    // The first at the resume, nine more at the resumed number's 100 an hour.
    expect(engine.estimateSendTime(1, 10, 10)).toBe(HOUR + Math.ceil((9 * HOUR) / 100));
  });

  it('refuses a bad count and names unknown pools', () => {
    const engine = createEngine(fleet([{ perHour: 100, per24h: 10_000 }]), { clock: new ManualClock(0) });
    expect(() => engine.estimateSendTime(1, 10, -1)).toThrow(/estimateSendTime\(count\)/);
    expect(() => engine.estimateSendTime(1, 99, 1)).toThrow(/template type/);
  });
});

describe('engine.nextRetryAt', () => {
  it('is when the earliest contact waiting for its retry falls due', () => {
    const clock = new ManualClock(0);
    const engine = createEngine(fleet([{ perHour: 100, per24h: 10_000 }]), { clock });
    expect(engine.nextRetryAt()).toBeUndefined();
    engine.submit({ businessId: 1, typeId: 10, maxRetries: 1, retryInterval: 60_000, contacts: [{ phone: '5511987654321', variables: ['Ana'] }] });
    const [message] = engine.poll();
    clock.set(1000);
    expect(engine.report(message!.messageId, { status: 'failed', code: 131000 })).toMatchObject({ effect: 'retry-scheduled', retryAt: 61_000 });
    expect(engine.nextRetryAt()).toBe(61_000);
    clock.set(61_000);
    expect(engine.nextRetryAt()).toBeUndefined();
    expect(engine.queueStatus(1, 10)).toMatchObject({ queued: 1, waitingRetry: 0 });
  });
});
