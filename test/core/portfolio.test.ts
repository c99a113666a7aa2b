/**
 * Portfolio limits in the engine (docs/concepts.md, "Portfolio limits"): numbers of several
 * businesses share one limit of distinct recipients in a moving 24 h. Examples of poll, assign,
 * output, tier changes, snapshots and durable rows, and a property on a manual clock: whatever the
 * stream of submissions, polls, reports and restarts, the recipients handed out in any 24 h never
 * exceed the portfolio's limit, and `output` is the lesser of the numbers' sum and the room left.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Engine, ManualClock, createEngine, type FleetDescription } from '../../src/index.js';
import { applyChanges, emptyRows, snapshotFromRows } from '../../src/core/rows.js';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const recipient = (i: number) => `55219${String(70000000 + i)}`;
const contact = (i: number) => ({ phone: recipient(i), variables: [`N${i}`] });

/**
 * Two businesses of two numbers each in portfolio "p1" (limit `limit`), and a third business
 * outside it. Each number alone could send far more than the portfolio allows.
 */
function fleet(limit: number, uniqueRecipients = true): FleetDescription {
  const numbers = (first: number, extra: object = {}) => [0, 1].map((k) => ({ phone: `55119000000${first + k}`, throughputPerHour: 1000, messagingLimit24h: 10_000, ...extra }));
  return {
    portfolios: [{ id: 'p1', messagingLimit24h: limit, uniqueRecipients }],
    businesses: [
      { id: 1, name: 'A', portfolioId: 'p1', numbers: numbers(10), templateTypes: [{ id: 10, name: 'billing', templateIds: [100] }] },
      { id: 2, name: 'B', portfolioId: 'p1', numbers: numbers(20), templateTypes: [{ id: 20, name: 'billing', templateIds: [200] }] },
      { id: 3, name: 'C', numbers: numbers(30), templateTypes: [{ id: 30, name: 'billing', templateIds: [300] }] },
    ],
    templates: [
      { id: 100, name: 'a', text: 'Hi {{1}}', businessIds: [1] },
      { id: 200, name: 'b', text: 'Hello {{1}}', businessIds: [2] },
      { id: 300, name: 'c', text: 'Hey {{1}}', businessIds: [3] },
    ],
  };
}

function setup(limit: number, uniqueRecipients = true) {
  const clock = new ManualClock(0);
  const engine = createEngine(fleet(limit, uniqueRecipients), { clock, trackChanges: true });
  return { clock, engine };
}

const submit = (engine: Engine, businessId: number, ids: readonly number[]) => engine.submit({ businessId, typeId: businessId * 10, contacts: ids.map(contact) });

describe('portfolio limits', () => {
  it('counts distinct recipients across the businesses of a portfolio, and a recipient in the 24 h costs nothing', () => {
    const { engine, clock } = setup(3);
    submit(engine, 1, [1, 2]);
    submit(engine, 2, [2, 3, 4]);
    // 1, 2 and 3 fill the portfolio; 2 again costs nothing; 4 waits.
    expect(engine.poll().map((m) => m.contact.phone)).toEqual([recipient(1), recipient(2), recipient(2), recipient(3)]);
    expect(engine.queueStatus(2, 20)).toEqual({ queued: 1, waitingRetry: 0, blocked: 'portfolio-limit', retryAt: DAY });
    expect(engine.portfolios()).toEqual([{ id: 'p1', messagingLimit24h: 3, uniqueRecipients: true, used: 3, available: 0 }]);
    // A recipient already reached goes at once, through either business.
    clock.set(HOUR);
    submit(engine, 1, [3]);
    expect(engine.poll().map((m) => m.contact.phone)).toEqual([recipient(3)]);
    // A business outside the portfolio is not held by it.
    submit(engine, 3, [5, 6, 7, 8]);
    expect(engine.poll()).toHaveLength(4);
    expect(engine.nextWakeAt()).toBe(DAY);
    clock.set(DAY - 1);
    expect(engine.poll()).toHaveLength(0);
    // Recipients 1 and 2 (last sent at 0) leave the 24 h; 3 was sent to again at 1 h.
    clock.set(DAY);
    expect(engine.poll().map((m) => m.contact.phone)).toEqual([recipient(4)]);
    expect(engine.portfolios()[0]!.used).toBe(2);
  });

  it('gives the numbers back what a refused hand-out had charged', () => {
    const { engine } = setup(1);
    submit(engine, 1, [1, 2, 3]);
    expect(engine.poll()).toHaveLength(1);
    // One message went: the numbers' windows were charged once, not three times.
    const used = engine
      .numbers()
      .filter((n) => n.businessId === 1)
      .reduce((sum, n) => sum + (1000 - n.available), 0);
    expect(used).toBe(1);
  });

  it('output is the lesser of what the numbers may send and the room left in the portfolio', () => {
    const { engine } = setup(2500);
    expect(engine.output(1, 10)).toBe(2000);
    expect(engine.output(3, 30)).toBe(2000);
    submit(
      engine,
      2,
      Array.from({ length: 1000 }, (_, i) => i),
    );
    expect(engine.poll({ limit: 100_000 })).toHaveLength(1000);
    expect(engine.output(1, 10)).toBe(1500);
    expect(engine.output(2, 20)).toBe(1000);
    expect(engine.businesses().find((b) => b.id === 1)!.template_types[0]!.output).toBe(1500);
  });

  it('assign counts every pair as a new recipient, and says the portfolio holds it', () => {
    const { engine, clock } = setup(5);
    clock.set(10);
    expect(engine.assign(1, 10, 3).assignments).toHaveLength(3);
    const result = engine.assign(2, 20, 4);
    expect(result.assignments).toHaveLength(2);
    expect(result).toMatchObject({ reason: 'portfolio-limit', retryAt: 10 + DAY });
    const numbers = new Int32Array(4);
    const templates = new Float64Array(4);
    expect(engine.assignInto(1, 10, 4, numbers, templates)).toEqual({ count: 0, reason: 'portfolio-limit', retryAt: 10 + DAY });
    // Five pairs charged to the numbers, none more.
    expect(engine.numbers().reduce((sum, n) => sum + (1000 - n.available), 0)).toBe(5);
  });

  it('counts every message without uniqueRecipients', () => {
    const { engine } = setup(3, false);
    submit(engine, 1, [1, 1, 1, 1]);
    expect(engine.poll()).toHaveLength(3);
    expect(engine.queueStatus(1, 10).blocked).toBe('portfolio-limit');
  });

  it('a tier change moves the limit at once; recipients already reached keep counting', () => {
    const { engine } = setup(2);
    submit(engine, 1, [1, 2, 3, 4]);
    expect(engine.poll()).toHaveLength(2);
    engine.setPortfolioLimit('p1', 3);
    expect(engine.nextWakeAt()).toBe(0);
    expect(engine.poll()).toHaveLength(1);
    engine.setPortfolioLimit('p1', 1);
    expect(engine.portfolios()[0]).toMatchObject({ used: 3, available: 0 });
    expect(engine.output(1, 10)).toBe(0);
    expect(() => engine.setPortfolioLimit('nope', 3)).toThrow(/Unknown portfolio "nope"/);
    expect(() => engine.setPortfolioLimit('p1', 0)).toThrow(/an integer from 1 to 1000000000000/);
  });

  it('keeps the recipients across a snapshot, durable rows and a fleet change', () => {
    const { engine, clock } = setup(2);
    const rows = emptyRows();
    applyChanges(rows, engine.takeChanges({ full: true }));
    submit(engine, 1, [1, 2]);
    for (const m of engine.poll()) engine.report(m.messageId, { status: 'sent' });
    applyChanges(rows, engine.takeChanges());
    clock.set(HOUR);
    for (const snapshot of [JSON.parse(JSON.stringify(engine.snapshot())) as unknown, snapshotFromRows(rows, HOUR)]) {
      const restored = createEngine(fleet(2), { clock, snapshot });
      expect(restored.portfolios()[0]).toMatchObject({ used: 2, available: 0 });
      restored.submit({ businessId: 2, typeId: 20, contacts: [contact(2), contact(3)] });
      expect(restored.poll().map((m) => m.contact.phone)).toEqual([recipient(2)]);
    }
    // A new fleet keeps the portfolio by id, with the limit it gives.
    engine.replaceFleet(fleet(3));
    expect(engine.portfolios()[0]).toMatchObject({ messagingLimit24h: 3, used: 2, available: 1 });
  });

  it('refuses a snapshot whose portfolios are malformed, naming the path', () => {
    const { engine, clock } = setup(2);
    const snapshot = JSON.parse(JSON.stringify(engine.snapshot())) as Record<string, unknown>;
    snapshot['portfolios'] = [{ id: 'p1', window: { limit: 2, anonymous: 0, recipients: [['5521970000001', 'noon', true]] } }];
    expect(() => createEngine(fleet(2), { clock, snapshot })).toThrow(/\$\.portfolios\[0\]\.window\.recipients\[0\]/);
  });
});

// ------------------------------------------------------------------ property

type Step =
  | { kind: 'submit'; business: 1 | 2 | 3; ids: number[] }
  | { kind: 'poll'; limit: number }
  | { kind: 'advance'; ms: number }
  | { kind: 'report'; failed: boolean }
  | { kind: 'assign'; business: 1 | 2; count: number }
  | { kind: 'restart'; fromRows: boolean };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('submit' as const), business: fc.constantFrom(1 as const, 2 as const, 3 as const), ids: fc.array(fc.integer({ min: 0, max: 12 }), { minLength: 1, maxLength: 8 }) }),
  fc.record({ kind: fc.constant('poll' as const), limit: fc.integer({ min: 1, max: 20 }) }),
  fc.record({ kind: fc.constant('advance' as const), ms: fc.oneof(fc.integer({ min: 0, max: HOUR }), fc.integer({ min: 6 * HOUR, max: 25 * HOUR })) }),
  fc.record({ kind: fc.constant('report' as const), failed: fc.boolean() }),
  fc.record({ kind: fc.constant('assign' as const), business: fc.constantFrom(1 as const, 2 as const), count: fc.integer({ min: 1, max: 3 }) }),
  fc.record({ kind: fc.constant('restart' as const), fromRows: fc.boolean() }),
);

describe('portfolio limits (property)', () => {
  it('never hands out to more distinct recipients in any 24 h than the limit, and output accounts for the portfolio', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), fc.array(stepArb, { maxLength: 60 }), (limit, steps) => {
        const clock = new ManualClock(0);
        const anomalies: string[] = [];
        let engine = createEngine(fleet(limit), { clock, trackChanges: true });
        engine.onAnomaly((a) => anomalies.push(a.message));
        // The rows a durable host keeps, written after every step.
        const rows = emptyRows();
        /** Messages of the portfolio's numbers handed out: time and recipient (assign: a recipient of its own). */
        const sent: { at: number; to: string }[] = [];
        const inFlight: string[] = [];
        const portfolioPhones = new Set(
          engine
            .numbers()
            .filter((n) => n.businessId !== 3)
            .map((n) => n.phone),
        );
        let anonymous = 0;
        for (const step of steps) {
          switch (step.kind) {
            case 'submit':
              submit(engine, step.business, step.ids);
              break;
            case 'poll':
              for (const m of engine.poll({ limit: step.limit })) {
                if (portfolioPhones.has(m.phone)) sent.push({ at: clock.now(), to: m.contact.phone });
                inFlight.push(m.messageId);
              }
              break;
            case 'advance':
              clock.advance(step.ms);
              break;
            case 'report': {
              const id = inFlight.shift();
              if (id !== undefined) engine.report(id, step.failed ? { status: 'failed', reason: 'test', action: { kind: 'give-up' } } : { status: 'sent' });
              break;
            }
            case 'assign':
              for (const _ of engine.assign(step.business, step.business * 10, step.count).assignments) sent.push({ at: clock.now(), to: `anonymous ${anonymous++}` });
              break;
            case 'restart': {
              const snapshot = step.fromRows ? snapshotFromRows(rows, clock.now()) : engine.snapshot();
              engine = createEngine(fleet(limit), { clock, trackChanges: true, snapshot: JSON.parse(JSON.stringify(snapshot)) });
              engine.onAnomaly((a) => anomalies.push(a.message));
              inFlight.length = 0;
              break;
            }
          }
          engine.takeOutcomes();
          applyChanges(rows, engine.takeChanges());
          // Contacts given back to their queue are neither lost nor counted twice.
          const c = engine.stats();
          expect(c.queued + c.waitingRetry + c.inFlight + c.sent + c.failed + c.expired + c.rejected).toBe(c.submitted);
          expect(anomalies).toEqual([]);
          // output: per business of the portfolio, the lesser of its numbers' sum and the room left.
          const room = engine.portfolios()[0]!.available;
          const now = clock.now();
          const inSpan = new Set(sent.filter((s) => s.at > now - DAY).map((s) => s.to));
          expect(room).toBe(Math.max(0, limit - inSpan.size));
          for (const b of [1, 2]) {
            const numbersSum = engine
              .numbers()
              .filter((n) => n.businessId === b)
              .reduce((sum, n) => sum + n.available, 0);
            expect(engine.output(b, b * 10)).toBe(Math.min(numbersSum, room));
          }
        }
        // Every span (t - 24 h, t] ending at a hand-out holds at most `limit` distinct recipients.
        for (const end of sent) {
          const distinct = new Set(sent.filter((s) => s.at > end.at - DAY && s.at <= end.at).map((s) => s.to));
          expect(distinct.size).toBeLessThanOrEqual(limit);
        }
        // And nothing that could go was held back for good: with a day more, every queue drains.
        clock.advance(DAY + 1);
        while (engine.poll({ limit: 1000 }).length > 0) clock.advance(DAY + 1);
        expect(engine.stats().queued).toBe(0);
      }),
      { numRuns: 150 },
    );
  });
});
