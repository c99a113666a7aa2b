import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ManualClock, createEngine } from '../../src/index.js';

function ampleFleet() {
  return {
    businesses: [
      {
        id: 1,
        name: 'bm',
        numbers: Array.from({ length: 10 }, (_, i) => ({ phone: String(5511900000000 + i), throughputPerHour: 1_000_000_000, messagingLimit24h: 1_000_000_000_000 })),
        templateTypes: [{ id: 1, name: 'type', templateIds: [100] }],
      },
    ],
    templates: [{ id: 100, name: 't', text: 'Hello {{1}}', businessIds: [1] }],
  };
}

const contact = { phone: '5511988887777', variables: ['Ana'] };

describe('fairness across campaigns sharing a pool', () => {
  it('a 100-contact campaign submitted after a 1,000,000-contact one finishes within 100 x 2 hand-outs', () => {
    const clock = new ManualClock(0);
    const engine = createEngine(ampleFleet(), { clock });
    engine.submit({ businessId: 1, typeId: 1, campaignId: 1, contacts: new Array(1_000_000).fill(contact) });
    expect(engine.poll({ limit: 5000 })).toHaveLength(5000);
    const small = engine.submit({ businessId: 1, typeId: 1, campaignId: 2, contacts: new Array(100).fill(contact) });
    let handedOut = 0;
    let total = 0;
    let smallDone = 0;
    while (smallDone < 100) {
      const batch = engine.poll({ limit: 7 });
      expect(batch.length).toBeGreaterThan(0);
      total += batch.length;
      for (const m of batch) {
        handedOut++;
        if (m.submissionId === small.submissionId) smallDone++;
        if (smallDone === 100) break;
      }
      clock.advance(1);
    }
    expect(handedOut).toBeLessThanOrEqual(100 * 2);
    expect(engine.stats().queued).toBe(1_000_000 + 100 - 5000 - total);
  });

  it('for any number of campaigns and sizes, each finishes within size x active campaigns of its submission', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 60 }), { minLength: 1, maxLength: 6 }), fc.integer({ min: 1, max: 13 }), (sizes, pollLimit) => {
        const clock = new ManualClock(0);
        const engine = createEngine(ampleFleet(), { clock });
        engine.submit({ businessId: 1, typeId: 1, campaignId: 0, contacts: new Array(10_000).fill(contact) });
        const ids = sizes.map((n, i) => engine.submit({ businessId: 1, typeId: 1, campaignId: i + 1, contacts: new Array(n).fill(contact) }).submissionId);
        const active = sizes.length + 1;
        const done = new Map<string, number>();
        let handedOut = 0;
        while (done.size < ids.length || [...done.values()].some((v) => v < 0)) {
          const batch = engine.poll({ limit: pollLimit });
          for (const m of batch) {
            handedOut++;
            const i = ids.indexOf(m.submissionId);
            if (i < 0) continue;
            const left = (done.get(m.submissionId) ?? sizes[i]!) - 1;
            done.set(m.submissionId, left);
            if (left === 0) {
              expect(handedOut).toBeLessThanOrEqual(sizes[i]! * active);
              done.set(m.submissionId, 0);
            }
          }
          if ([...done.values()].filter((v) => v === 0).length === ids.length) break;
        }
      }),
    );
  });

  it('weights share the pool in proportion (deficit round-robin)', () => {
    const clock = new ManualClock(0);
    const engine = createEngine(ampleFleet(), { clock });
    engine.submit({ businessId: 1, typeId: 1, campaignId: 1, weight: 3, contacts: new Array(3000).fill(contact) });
    engine.submit({ businessId: 1, typeId: 1, campaignId: 2, weight: 1, contacts: new Array(3000).fill(contact) });
    const first = engine.poll({ limit: 400 });
    const heavy = first.filter((m) => m.campaignId === 1).length;
    expect(heavy).toBe(300);
  });
});
