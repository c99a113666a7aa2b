/**
 * The pace sends leave at (send-pacer.ts): a number's sends bunched by the shell leave through its
 * per-second window less the slack, in the order they came; numbers without a rate pass at once.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SendPacer } from '../../src/server/send-pacer.js';
import { windowViolation } from '../core/window-check.js';

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
});
afterEach(() => vi.useRealTimers());

describe('SendPacer', () => {
  it('lets a bunch of 200 sends of a 25/s number out at its window less 250 ms of slack, in order', () => {
    const pacer = new SendPacer({ rateOf: (phone) => (phone === 'a' ? 25 : 0), now: () => Date.now() });
    const left: { at: number; i: number }[] = [];
    for (let i = 0; i < 200; i++) pacer.offer('a', () => left.push({ at: Date.now(), i }));
    // The burst at once: 25 less a quarter second's worth (7).
    expect(left).toHaveLength(18);
    expect(pacer.waiting).toBe(182);
    vi.advanceTimersByTime(10_000);
    expect(left.map((l) => l.i)).toEqual(Array.from({ length: 200 }, (_, i) => i));
    expect(pacer.waiting).toBe(0);
    // Every interval of the record keeps the window; late by up to 250 ms each, still within it.
    expect(
      windowViolation(
        left.map((l) => ({ at: l.at, count: 1 })),
        { perHour: 1e9, per24h: 1e9, perSecond: 25 },
      ),
    ).toBeUndefined();
    const late = left.map((l, k) => ({ at: l.at + (k % 2 === 0 ? 250 : 0), count: 1 }));
    expect(windowViolation(late, { perHour: 1e9, per24h: 1e9, perSecond: 25 })).toBeUndefined();
    // 10 s of sending: 18 + 25 a second after.
    expect(left.at(-1)!.at - left[0]!.at).toBe(Math.ceil((200 - 18) * 40));
  });

  it('passes sends in pace at once, and numbers without a rate always', () => {
    const pacer = new SendPacer({ rateOf: (phone) => (phone === 'a' ? 25 : 0), now: () => Date.now() });
    let sent = 0;
    for (let i = 0; i < 50; i++) {
      pacer.offer('a', () => sent++);
      vi.advanceTimersByTime(40);
    }
    expect(sent).toBe(50);
    for (let i = 0; i < 1000; i++) pacer.offer('b', () => sent++);
    expect(sent).toBe(1050);
  });

  it('keeps each number’s own pace', () => {
    const pacer = new SendPacer({ rateOf: (phone) => (phone === 'a' ? 4 : 100), now: () => Date.now() });
    const left: string[] = [];
    for (let i = 0; i < 10; i++) pacer.offer('a', () => left.push('a'));
    for (let i = 0; i < 10; i++) pacer.offer('b', () => left.push('b'));
    expect(left.filter((x) => x === 'a')).toHaveLength(3); // 4 less one (a quarter second's worth)
    expect(left.filter((x) => x === 'b')).toHaveLength(10);
    vi.advanceTimersByTime(2000);
    expect(left.filter((x) => x === 'a')).toHaveLength(10);
  });

  it('does not catch up after the event loop was held: the sends held go on one interval apart', () => {
    const pacer = new SendPacer({ rateOf: () => 25, now: () => Date.now() });
    const left: number[] = [];
    for (let i = 0; i < 100; i++) pacer.offer('a', () => left.push(Date.now()));
    expect(left).toHaveLength(18);
    vi.advanceTimersByTime(200);
    expect(left).toHaveLength(23);
    // The loop is held 400 ms (a large request's intake): the clock moves, no timer runs; then the
    // timer that was due runs late.
    const heldUntil = Date.now() + 400;
    vi.setSystemTime(heldUntil);
    vi.advanceTimersByTime(40);
    // One went when the loop was free, not the ten the 400 ms would have let out at once.
    const after = left.slice(23);
    expect(after).toHaveLength(1);
    expect(after[0]).toBeGreaterThanOrEqual(heldUntil);
    vi.advanceTimersByTime(400);
    // Then one every 40 ms.
    const gaps = left.slice(23).map((at, k, all) => (k === 0 ? 40 : at - all[k - 1]!));
    expect(gaps.length).toBeGreaterThanOrEqual(10);
    for (const g of gaps) expect(g).toBeGreaterThanOrEqual(40);
    // Held sends that reach the provider together with those released after the hold stay in the window.
    const arrivals = left.map((at) => ({ at: Math.max(at, at >= heldUntil - 250 && at < heldUntil ? heldUntil : at), count: 1 }));
    expect(windowViolation(arrivals, { perHour: 1e9, per24h: 1e9, perSecond: 25 })).toBeUndefined();
  });
});
