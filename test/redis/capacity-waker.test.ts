/** The waker needs no Redis: it is plain promise plumbing between a store and an engine. */
import { describe, expect, it, vi } from 'vitest';
import { createCapacityWaker } from '../../src/redis/capacity-waker.js';

describe('createCapacityWaker', () => {
  it('wakes every sleeper once, and sleepers that timed out leave nothing behind', async () => {
    // Fake timers: the sleeps end when the test says, not after real milliseconds.
    vi.useFakeTimers();
    try {
      const waker = createCapacityWaker();
      // Many sleeps that end by their own timer, as a host loop does between arrivals.
      for (let i = 0; i < 20_000; i++) {
        const slept = waker.sleep(0);
        vi.runOnlyPendingTimers();
        await slept;
      }
      expect(vi.getTimerCount()).toBe(0);
      let woke = 0;
      const sleeping = [waker.sleep(60_000), waker.sleep(60_000)].map((p) => p.then(() => woke++));
      expect(vi.getTimerCount()).toBe(2);
      expect(() => waker.onCapacity([])).not.toThrow();
      await Promise.all(sleeping);
      expect(woke).toBe(2);
      // Woken by capacity, the sleepers cleared their own timers.
      expect(vi.getTimerCount()).toBe(0);
      waker.onCapacity([]); // nobody sleeping: nothing to do
      expect(woke).toBe(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it('tells the attached engine which numbers got capacity', () => {
    const waker = createCapacityWaker();
    const told: string[] = [];
    waker.attach({ capacityChanged: (phone: string) => told.push(phone) } as never);
    waker.onCapacity(['5511990000001', '5511990000002']);
    expect(told).toEqual(['5511990000001', '5511990000002']);
  });
});
