/**
 * The queue the channel's answers and reports are handled in (src/server/turns.ts): arrival order,
 * a turn of the event loop given back after about 2 ms, `settled` after what came before it, and a
 * throw that does not stop the rest.
 */
import { describe, expect, it } from 'vitest';
import { SLICE_MS } from '../../src/server/slices.js';
import { createTurns } from '../../src/server/turns.js';

const busy = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};

describe('turns', () => {
  it('handles work in the order it came, giving the loop back between turns', async () => {
    const turns = createTurns((e) => {
      throw e;
    });
    const log: string[] = [];
    const n = 10;
    for (let i = 0; i < n; i++) {
      turns.later(() => {
        if (i === 0) setImmediate(() => log.push('other'));
        busy(SLICE_MS / 2 + 0.5);
        log.push(`w${i}`);
      });
    }
    expect(turns.pending).toBe(n);
    await turns.settled();
    expect(turns.pending).toBe(0);
    expect(log.filter((x) => x !== 'other')).toEqual(Array.from({ length: n }, (_, i) => `w${i}`));
    // Something else queued during the first turn ran before the last of the work: the turn ended.
    expect(log.indexOf('other')).toBeGreaterThan(0);
    expect(log.indexOf('other')).toBeLessThan(log.length - 1);
  });

  it('a long backlog is handled whole and in order', async () => {
    const turns = createTurns((e) => {
      throw e;
    });
    const seen: number[] = [];
    // About 1,000 a turn: the handled front is dropped along the way.
    for (let i = 0; i < 50_000; i++)
      turns.later(() => {
        busy(0.002);
        seen.push(i);
      });
    expect(await turns.settled()).toBe(true);
    expect(seen.length).toBe(50_000);
    expect(seen.every((x, i) => x === i)).toBe(true);
    expect(turns.pending).toBe(0);
  });

  it('settled resolves once everything queued before it has been handled', async () => {
    const turns = createTurns(() => undefined);
    const log: string[] = [];
    turns.later(() => log.push('a'));
    turns.later(() => log.push('b'));
    const seen = await turns.settled().then(() => [...log]);
    expect(seen.slice(0, 2)).toEqual(['a', 'b']);
    await expect(createTurns(() => undefined).settled()).resolves.toBe(true);
  });

  it('a throw goes to onError, the rest is still handled, and settled says so', async () => {
    const errors: unknown[] = [];
    const turns = createTurns((e) => errors.push(e));
    const log: number[] = [];
    turns.later(() => log.push(1));
    turns.later(() => {
      throw new Error('boom');
    });
    turns.later(() => log.push(3));
    // settled says a work threw (the durable server then does not acknowledge), once.
    expect(await turns.settled()).toBe(false);
    expect(log).toEqual([1, 3]);
    expect(errors).toHaveLength(1);
    expect((errors[0] as Error).message).toBe('boom');
    expect(await turns.settled()).toBe(true);
    // An onError that throws does not stop the queue.
    const noisy = createTurns(() => {
      throw new Error('report failed');
    });
    const seen: number[] = [];
    noisy.later(() => {
      throw new Error('boom');
    });
    noisy.later(() => seen.push(2));
    expect(await noisy.settled()).toBe(false);
    expect(seen).toEqual([2]);
  });
});
