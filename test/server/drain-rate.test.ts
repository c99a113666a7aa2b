/** The SMS gateway's pace, measured over the last minute, and the wait it gives for SMS queued ahead. */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/index.js';
import type { Channel } from '../../src/server/index.js';
import { DrainRate } from '../../src/server/drain-rate.js';
import { SmsWorker } from '../../src/server/sms-worker.js';
import { waitFor } from './helpers.js';

describe('DrainRate', () => {
  it('counts completions per second since the first of the last minute', () => {
    const clock = new ManualClock(0);
    const rate = new DrainRate(() => clock.now());
    expect(rate.perSecond()).toBeUndefined();
    rate.record(100);
    expect(rate.perSecond()).toBe(100);
    clock.set(9_999); // the 10th second: 100 over 10 s
    expect(rate.perSecond()).toBe(10);
    rate.record(50);
    expect(rate.perSecond()).toBe(15);
    clock.set(60_500); // the first second has left the minute
    expect(rate.perSecond()).toBe(50 / 52);
    clock.set(70_000);
    expect(rate.perSecond()).toBeUndefined();
  });
});

describe('SmsWorker.drainSeconds', () => {
  it('is the time the gateway needs for the SMS at its recent pace', async () => {
    const clock = new ManualClock(5_000);
    const channel = { sendSms: async () => ({ status: 'sent' as const }) } as unknown as Channel;
    const notifier = { trackSms: () => undefined, smsStatus: () => true } as never;
    const worker = new SmsWorker(channel, notifier, { maxInFlight: 8 }, [], undefined, clock);
    expect(worker.drainSeconds(50)).toBeUndefined();
    worker.enqueue(Array.from({ length: 40 }, (_, i) => ({ smsId: `r:${i}` }) as never));
    await waitFor(() => worker.queued === 0 && worker.inFlight === 0, 'the 40 SMS answered');
    clock.set(8_000); // 40 answers over 4 seconds
    expect(worker.drainSeconds(50)).toBe(5);
    await worker.stop(0);
  });
});
