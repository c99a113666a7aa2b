/** What the dashboard keeps between polls: output samples on a ring, webhook delivery rates. */
import { describe, expect, it } from 'vitest';
import type { DeliveryOutcome } from '../../src/events/index.js';
import { DeliveryRates, RATE_WINDOW_S } from '../../src/server/dashboard/delivery-rates.js';
import { OutputHistory } from '../../src/server/dashboard/output-history.js';

describe('OutputHistory', () => {
  it('keeps the last samples of each pool on a ring, answers those after `since`, and sums pools', () => {
    const h = new OutputHistory(4);
    for (let i = 1; i <= 6; i++) h.record(i * 10, new Map([['1:10', i], ...(i >= 5 ? [['1:20', 100 * i] as const] : [])]));
    const all = h.read(['1:10', '1:20'], ['1:10', '1:20'], 0);
    expect(all.t).toEqual([30, 40, 50, 60]);
    expect(all.total).toEqual([3, 4, 505, 606]);
    expect(all.pools.get('1:10')).toEqual([3, 4, 5, 6]);
    // A pool new since the third sample has no history before it.
    expect(all.pools.get('1:20')).toEqual([null, null, 500, 600]);
    expect(h.read(['1:10'], ['1:10'], 40)).toEqual({ t: [50, 60], total: [5, 6], pools: new Map([['1:10', [5, 6]]]) });
    // A pool the fleet no longer has is forgotten.
    h.record(70, new Map([['1:20', 700]]));
    expect(h.read(['1:10'], ['1:10'], 60)).toEqual({ t: [70], total: [0], pools: new Map([['1:10', [null]]]) });
  });
});

describe('DeliveryRates', () => {
  const outcome = (at: number, companyId = 1, kind: 'delivered' | 'dead-lettered' = 'delivered'): DeliveryOutcome => {
    const event = { id: `e${at}`, family: 'hsm' as const, url: 'https://hooks.example.com/hsm?x=1', body: '{}', companyId };
    return kind === 'delivered' ? { kind, event, attempts: 1, at } : { kind, event, attempts: 9, at, lastError: 'HTTP 500' };
  };

  it('averages deliveries per second over the window, per company and receiver origin', () => {
    const rates = new DeliveryRates();
    rates.outcomes([outcome(1_000), outcome(1_500), outcome(2_100), outcome(2_200, 2), outcome(2_300, 1, 'dead-lettered')]);
    const [one, two] = rates.rates(2_900);
    expect(one).toEqual({ companyId: 1, origin: 'https://hooks.example.com', perSecond: 3 / RATE_WINDOW_S, delivered: 3, deadLettered: 1, lastDeadLetter: { at: 2_300, error: 'HTTP 500' } });
    expect(two).toMatchObject({ companyId: 2, perSecond: 1 / RATE_WINDOW_S });
    // Seconds that leave the window stop counting; a receiver quiet for a minute is forgotten.
    expect(rates.rates(1_000 + RATE_WINDOW_S * 1000)[0]!.perSecond).toBe(1 / RATE_WINDOW_S);
    expect(rates.rates(3_000 + RATE_WINDOW_S * 1000)[0]!.perSecond).toBe(0);
    expect(rates.rates(70_000)).toEqual([]);
  });
});
