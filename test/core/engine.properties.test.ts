/**
 * The invariants of DESIGN.md for the engine, over random fleets and random operations on a
 * manual clock: throughput and output sums, windows never exceeded, evenness, determinism.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ManualClock, MemoryStore, createEngine, type Engine } from '../../src/index.js';
import { type FleetShape, fleetArb } from './arbitraries.js';
import { type Send, windowViolation } from './window-check.js';

type Op =
  | { kind: 'advance'; ms: number }
  | { kind: 'assign'; pool: number; count: number }
  | { kind: 'number'; index: number; status: 'active' | 'paused'; untilIn?: number }
  | { kind: 'template'; index: number; status: 'active' | 'paused' | 'disabled'; untilIn?: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 3 * 3_600_000 }) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('assign' as const), pool: fc.nat(), count: fc.integer({ min: 0, max: 4000 }) }) },
  {
    weight: 2,
    arbitrary: fc.record(
      { kind: fc.constant('number' as const), index: fc.nat(), status: fc.constantFrom('active' as const, 'paused' as const), untilIn: fc.integer({ min: 1, max: 7_200_000 }) },
      { requiredKeys: ['kind', 'index', 'status'] },
    ),
  },
  {
    weight: 1,
    arbitrary: fc.record(
      {
        kind: fc.constant('template' as const),
        index: fc.nat(),
        status: fc.constantFrom('active' as const, 'paused' as const, 'disabled' as const),
        untilIn: fc.integer({ min: 1, max: 7_200_000 }),
      },
      { requiredKeys: ['kind', 'index', 'status'] },
    ),
  },
);

/** Applies one op; returns the assignments it made (as [phone, templateId, at]). */
function apply(engine: Engine, clock: ManualClock, shape: FleetShape, op: Op): [string, number, number][] {
  switch (op.kind) {
    case 'advance':
      clock.advance(op.ms);
      return [];
    case 'assign': {
      const p = shape.pools[op.pool % shape.pools.length]!;
      return engine.assign(p.businessId, p.typeId, op.count).assignments.map((a) => [a.phone, a.templateId, clock.now()]);
    }
    case 'number': {
      const phone = shape.phones[op.index % shape.phones.length]!;
      const until = op.status === 'paused' && op.untilIn !== undefined ? { until: clock.now() + op.untilIn } : {};
      engine.setNumberStatus(phone, op.status, until);
      return [];
    }
    case 'template': {
      const id = shape.templateIds[op.index % shape.templateIds.length]!;
      const until = op.status === 'paused' && op.untilIn !== undefined ? { until: clock.now() + op.untilIn } : {};
      engine.setTemplateStatus(id, op.status, until);
      return [];
    }
  }
}

/** Checks throughput and output of every pool against sums computed from the views. */
function checkSums(engine: Engine, shape: FleetShape): void {
  const numbers = engine.numbers();
  const templates = new Map(engine.templates().map((t) => [t.id, t]));
  for (const { businessId, typeId } of shape.pools) {
    const business = shape.fleet.businesses.find((b) => b.id === businessId)!;
    const type = business.templateTypes.find((t) => t.id === typeId)!;
    const activeTemplates = type.templateIds.map((id) => shape.fleet.templates.find((t) => t.id === id)!).filter((t) => templates.get(t.id)!.status === 'active');
    // A number is in the pool when active and able to send one active template of the type.
    const members = business.numbers.filter((n) => {
      const view = numbers.find((v) => v.phone === n.phone)!;
      return view.status === 'active' && activeTemplates.some((t) => !t.account || !n.account || t.account === n.account);
    });
    const views = members.map((n) => numbers.find((v) => v.phone === n.phone)!);
    expect(engine.throughput(businessId, typeId)).toBe(views.reduce((s, v) => s + v.throughputPerHour, 0));
    expect(engine.output(businessId, typeId)).toBe(views.reduce((s, v) => s + v.available, 0));
  }
}

describe('engine invariants', () => {
  it('throughput = sum of hourly rates of the active numbers of the pool; output = sum of their available throughput', () => {
    fc.assert(
      fc.property(fleetArb({ accounts: true, perSecond: true }), fc.array(opArb, { maxLength: 40 }), (shape, ops) => {
        const clock = new ManualClock(0);
        const engine = createEngine(shape.fleet, { clock });
        checkSums(engine, shape);
        for (const op of ops) {
          apply(engine, clock, shape, op);
          checkSums(engine, shape);
        }
      }),
    );
  });

  it('no number exceeds any window over simulated days of random traffic', () => {
    fc.assert(
      fc.property(fleetArb({ perSecond: true, maxRate: 3000, maxLimit24h: 8000 }), fc.array(opArb, { minLength: 10, maxLength: 80 }), fc.constantFrom(15, 60), (shape, ops, bucketMinutes) => {
        const clock = new ManualClock(0);
        const engine = createEngine(shape.fleet, { clock, store: new MemoryStore({ bucketMinutes }) });
        const sends = new Map<string, Send[]>();
        for (const op of ops) {
          for (const [phone, , at] of apply(engine, clock, shape, op)) {
            const list = sends.get(phone) ?? [];
            list.push({ at, count: 1 });
            sends.set(phone, list);
          }
        }
        for (const b of shape.fleet.businesses) {
          for (const n of b.numbers) {
            const violation = windowViolation(sends.get(n.phone) ?? [], {
              perHour: n.throughputPerHour,
              per24h: n.messagingLimit24h,
              perSecond: n.messagesPerSecond,
            });
            expect(violation, n.phone).toBeUndefined();
          }
        }
      }),
      { numRuns: 60 },
    );
  });

  it('round-robin evenness: with ample capacity, counts per number and per template differ by at most one', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 5 }), fc.array(fc.integer({ min: 0, max: 50 }), { maxLength: 30 }), (numberCount, templateCount, calls) => {
        const templateIds = Array.from({ length: templateCount }, (_, i) => 100 + i);
        const fleet = {
          businesses: [
            {
              id: 1,
              name: 'bm',
              numbers: Array.from({ length: numberCount }, (_, i) => ({ phone: String(5511900000000 + i), throughputPerHour: 1_000_000, messagingLimit24h: 1_000_000 })),
              templateTypes: [{ id: 1, name: 'type', templateIds }],
            },
          ],
          templates: templateIds.map((id) => ({ id, name: `t${id}`, text: 'Hi {{1}}', businessIds: [1] })),
        };
        const clock = new ManualClock(0);
        const engine = createEngine(fleet, { clock });
        const perNumber = new Map<string, number>();
        const perTemplate = new Map<number, number>();
        for (const count of calls) {
          clock.advance(1000);
          for (const a of engine.assign(1, 1, count).assignments) {
            perNumber.set(a.phone, (perNumber.get(a.phone) ?? 0) + 1);
            perTemplate.set(a.templateId, (perTemplate.get(a.templateId) ?? 0) + 1);
          }
          const n = fleet.businesses[0]!.numbers.map((x) => perNumber.get(x.phone) ?? 0);
          const t = templateIds.map((id) => perTemplate.get(id) ?? 0);
          expect(Math.max(...n) - Math.min(...n)).toBeLessThanOrEqual(1);
          expect(Math.max(...t) - Math.min(...t)).toBeLessThanOrEqual(1);
        }
      }),
    );
  });

  it('determinism: same fleet, same calls, same clock give the same assignments', () => {
    fc.assert(
      fc.property(fleetArb({ accounts: true, perSecond: true }), fc.array(opArb, { maxLength: 40 }), (shape, ops) => {
        const run = () => {
          const clock = new ManualClock(0);
          const engine = createEngine(shape.fleet, { clock });
          return ops.flatMap((op) => apply(engine, clock, shape, op));
        };
        expect(run()).toEqual(run());
      }),
    );
  });

  it('a snapshot taken anywhere restores to an engine that makes the same assignments', () => {
    fc.assert(
      fc.property(fleetArb({ accounts: true, perSecond: true }), fc.array(opArb, { maxLength: 30 }), fc.array(opArb, { maxLength: 20 }), (shape, before, after) => {
        const clock = new ManualClock(0);
        const engine = createEngine(shape.fleet, { clock });
        for (const op of before) apply(engine, clock, shape, op);
        const clock2 = new ManualClock(clock.now());
        const restored = createEngine(shape.fleet, { clock: clock2, snapshot: JSON.parse(JSON.stringify(engine.snapshot())) });
        for (const op of after) {
          expect(apply(restored, clock2, shape, op)).toEqual(apply(engine, clock, shape, op));
        }
        expect(restored.businesses()).toEqual(engine.businesses());
        expect(restored.numbers()).toEqual(engine.numbers());
      }),
    );
  });
});
