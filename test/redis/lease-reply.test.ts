/**
 * Replies of sendpool's Redis scripts read by name (scripts/lease.ts, scripts/portfolio.ts): a
 * reply of another shape (another version's script, a proxy between) is a RedisStateError that
 * names the script, what was expected and the reply, and nothing of it is applied.
 */
import { describe, expect, it } from 'vitest';
import { RedisStateError, isRedisStateError } from '../../src/redis/errors.js';
import { decodeLeaseReply } from '../../src/redis/scripts/lease.js';
import { decodePortfolioRecord } from '../../src/redis/scripts/portfolio.js';

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (e) {
    return e;
  }
  return undefined;
}

describe("the lease script's reply", () => {
  it('reads each number as answered, with its fields, or refused, with what Redis held', () => {
    const reply = [1000, 5, 990, 1000, 40, 0, 3, 0, 0, 1000, 0, 1, 0, 0, 0, 1000, 0, 2, 0, 0, 0, 1000, 0, 3, 0];
    expect(decodeLeaseReply(reply, 4)).toEqual({
      now: 1000,
      answers: [
        { kind: 'answered', granted: 5, grantedAt: 990, retryAt: 1000, left: 40, others: 3 },
        { kind: 'refused', found: 'no-state' },
        { kind: 'refused', found: 'other-epoch' },
        { kind: 'refused', found: 'older-copy' },
      ],
    });
    // ioredis may give numbers as strings.
    expect(decodeLeaseReply(['7', '1', '7', '-1', '0', '0', '0'], 1).answers).toEqual([{ kind: 'answered', granted: 1, grantedAt: 7, retryAt: -1, left: 0, others: 0 }]);
  });

  it('refuses a reply of another shape, naming the script, what it expected and the reply', () => {
    for (const [reply, count] of [
      [[1000, 5, 990, 1000, 40, 0], 1],
      [[1000, 5, 990, 1000, 40, 0, 3, 9], 1],
      [[1000, 5, 990, 'x', 40, 0, 3], 1],
      ['OK', 1],
      [null, 1],
    ] as const) {
      const e = thrown(() => decodeLeaseReply(reply, count));
      expect(isRedisStateError(e), JSON.stringify(reply)).toBe(true);
      expect(e).toMatchObject({ source: 'lease script', expected: "an array of 7 numbers (Redis' time, then 6 per number)", actual: JSON.stringify(reply) });
    }
    const e = thrown(() => decodeLeaseReply([1000, 5, 990, 1000, 40, 4, 3], 1)) as RedisStateError;
    expect(e).toBeInstanceOf(RedisStateError);
    expect(e.message).toBe('lease script: expected a code of 0 to 3 for number 1, got [1000,5,990,1000,40,4,3]');
  });
});

describe("the portfolio scripts' replies", () => {
  it('refuses a reply that is not numbers', () => {
    const e = thrown(() => decodePortfolioRecord(['1', 'x']));
    expect(isRedisStateError(e)).toBe(true);
    expect((e as Error).message).toBe('portfolio record script: expected numbers, got ["1","x"]');
  });
});
