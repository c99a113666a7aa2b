/**
 * Model-based test of the scheduler: random command sequences run against the engine and against a
 * tiny reference model (token buckets written as scaled integers, a send log for 24 h, eligibility
 * by definition). After every command the engine must agree with the model.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ManualClock, createEngine, type AssignResult, type Engine } from '../../src/index.js';

const HOUR = 3_600_000;
const PHONES = ['5511900000001', '5511900000002', '5511900000003', '5511900000004'];
const TEMPLATES = [100, 101, 102];

interface ModelNumber {
  perHour: number;
  per24h: number;
  perSecond: number;
  active: boolean;
  until: number | undefined;
  account: string | undefined;
  hourScaled: number; // tokens x period
  secondScaled: number;
  at: number;
  log: { at: number; count: number }[];
}

interface Model {
  now: number;
  numbers: ModelNumber[];
  templates: { status: 'active' | 'paused' | 'disabled'; until: number | undefined; account: string | undefined }[];
}

function refill(n: ModelNumber, now: number): void {
  n.hourScaled = Math.min(n.perHour * HOUR, n.hourScaled + (now - n.at) * n.perHour);
  if (n.perSecond) n.secondScaled = Math.min(n.perSecond * 1000, n.secondScaled + (now - n.at) * n.perSecond);
  n.at = now;
}

function modelAvailable(n: ModelNumber, now: number): number {
  refill(n, now);
  let a = Math.floor(n.hourScaled / HOUR);
  if (n.perSecond) a = Math.min(a, Math.floor(n.secondScaled / 1000));
  // 24 h: the current hour bucket and the 24 before it count.
  const bucket = Math.floor(now / HOUR);
  const used = n.log.filter((s) => Math.floor(s.at / HOUR) >= bucket - 24).reduce((x, s) => x + s.count, 0);
  return Math.max(0, Math.min(a, n.per24h - used));
}

function modelTick(m: Model): void {
  for (const n of m.numbers)
    if (!n.active && n.until !== undefined && n.until <= m.now) {
      n.active = true;
      n.until = undefined;
    }
  for (const t of m.templates)
    if (t.status === 'paused' && t.until !== undefined && t.until <= m.now) {
      t.status = 'active';
      t.until = undefined;
    }
}

const compatible = (n: ModelNumber, account: string | undefined) => account === undefined || n.account === undefined || account === n.account;
const activeTemplates = (m: Model) => m.templates.map((t, i) => ({ ...t, id: TEMPLATES[i]! })).filter((t) => t.status === 'active');
const eligible = (m: Model) => m.numbers.filter((n) => n.active && activeTemplates(m).some((t) => compatible(n, t.account)));

interface Real {
  engine: Engine;
  clock: ManualClock;
}

type Cmd = fc.Command<Model, Real>;

class Assign implements Cmd {
  constructor(readonly count: number) {}
  check = () => true;
  run(m: Model, r: Real): void {
    modelTick(m);
    const available = new Map(eligible(m).map((n) => [n, modelAvailable(n, m.now)]));
    const total = [...available.values()].reduce((a, b) => a + b, 0);
    const result: AssignResult = r.engine.assign(1, 1, this.count);
    const got = result.assignments;
    expect(got.length).toBe(Math.min(this.count, total)); // work-conserving
    const perNumber = new Map<ModelNumber, number>();
    for (const a of got) {
      const n = m.numbers[PHONES.indexOf(a.phone)]!;
      expect(available.has(n), `${a.phone} is not eligible`).toBe(true);
      const t = m.templates[TEMPLATES.indexOf(a.templateId)]!;
      expect(t.status).toBe('active');
      expect(compatible(n, t.account)).toBe(true);
      perNumber.set(n, (perNumber.get(n) ?? 0) + 1);
    }
    for (const [n, c] of perNumber) {
      expect(c).toBeLessThanOrEqual(available.get(n)!);
      refill(n, m.now);
      n.hourScaled -= c * HOUR;
      if (n.perSecond) n.secondScaled -= c * 1000;
      n.log.push({ at: m.now, count: c });
    }
    if (got.length < this.count) {
      const expected = activeTemplates(m).length === 0 ? 'no-template' : eligible(m).length === 0 ? 'no-number' : 'no-capacity';
      expect(result.reason).toBe(expected);
      if (expected === 'no-capacity' && result.retryAt !== undefined) {
        // At retryAt some eligible number has capacity again (checked on a copy of the model).
        expect(result.retryAt).toBeGreaterThan(m.now);
        const later = eligible(m).map((n) => modelAvailable(structuredClone(n), result.retryAt!));
        expect(Math.max(...later)).toBeGreaterThan(0);
      }
    } else expect(result.reason).toBeUndefined();
  }
  toString = () => `assign(${this.count})`;
}

class Advance implements Cmd {
  constructor(readonly ms: number) {}
  check = () => true;
  run(m: Model, r: Real): void {
    m.now += this.ms;
    r.clock.advance(this.ms);
    modelTick(m);
  }
  toString = () => `advance(${this.ms})`;
}

class NumberStatus implements Cmd {
  constructor(
    readonly index: number,
    readonly active: boolean,
    readonly untilIn: number | undefined,
  ) {}
  check = () => true;
  run(m: Model, r: Real): void {
    modelTick(m);
    const n = m.numbers[this.index]!;
    const until = !this.active && this.untilIn !== undefined ? m.now + this.untilIn : undefined;
    n.active = this.active;
    n.until = until;
    r.engine.setNumberStatus(PHONES[this.index]!, this.active ? 'active' : 'paused', until === undefined ? {} : { until });
  }
  toString = () => `number(${this.index}, ${this.active ? 'active' : 'paused'}${this.untilIn ? ` for ${this.untilIn}` : ''})`;
}

class TemplateStatus implements Cmd {
  constructor(
    readonly index: number,
    readonly status: 'active' | 'paused' | 'disabled',
    readonly untilIn: number | undefined,
  ) {}
  check = () => true;
  run(m: Model, r: Real): void {
    modelTick(m);
    const t = m.templates[this.index]!;
    const until = this.status === 'paused' && this.untilIn !== undefined ? m.now + this.untilIn : undefined;
    t.status = this.status;
    t.until = until;
    r.engine.setTemplateStatus(TEMPLATES[this.index]!, this.status, until === undefined ? {} : { until });
  }
  toString = () => `template(${this.index}, ${this.status}${this.untilIn ? ` for ${this.untilIn}` : ''})`;
}

class CheckSums implements Cmd {
  check = () => true;
  run(m: Model, r: Real): void {
    modelTick(m);
    const members = eligible(m);
    expect(r.engine.throughput(1, 1)).toBe(members.reduce((s, n) => s + n.perHour, 0));
    expect(r.engine.output(1, 1)).toBe(members.reduce((s, n) => s + modelAvailable(n, m.now), 0));
  }
  toString = () => 'checkSums';
}

const numberArb = fc.record({
  perHour: fc.integer({ min: 1, max: 200 }),
  per24h: fc.integer({ min: 1, max: 1500 }),
  perSecond: fc.option(fc.integer({ min: 1, max: 5 }), { nil: 0 }),
  account: fc.option(fc.constantFrom('A', 'B'), { nil: undefined }),
});

const commands = [
  // Small counts (up to the pool's size: sparse calls, a turn each) as often as large ones.
  fc.oneof(fc.integer({ min: 0, max: PHONES.length + 1 }), fc.integer({ min: 0, max: 300 })).map((c) => new Assign(c)),
  fc.integer({ min: 0, max: 2 * HOUR }).map((ms) => new Advance(ms)),
  fc.tuple(fc.integer({ min: 0, max: PHONES.length - 1 }), fc.boolean(), fc.option(fc.integer({ min: 1, max: HOUR }), { nil: undefined })).map(([i, a, u]) => new NumberStatus(i, a, u)),
  fc
    .tuple(
      fc.integer({ min: 0, max: TEMPLATES.length - 1 }),
      fc.constantFrom('active' as const, 'paused' as const, 'disabled' as const),
      fc.option(fc.integer({ min: 1, max: HOUR }), { nil: undefined }),
    )
    .map(([i, s, u]) => new TemplateStatus(i, s, u)),
  fc.constant(new CheckSums()),
];

describe('scheduler against a reference model', () => {
  it('agrees on every command sequence', () => {
    fc.assert(
      fc.property(
        fc.array(numberArb, { minLength: PHONES.length, maxLength: PHONES.length }),
        fc.array(fc.option(fc.constantFrom('A', 'B'), { nil: undefined }), { minLength: TEMPLATES.length, maxLength: TEMPLATES.length }),
        fc.commands(commands, { maxCommands: 60 }),
        (numbers, templateAccounts, cmds) => {
          const fleet = {
            businesses: [
              {
                id: 1,
                name: 'bm',
                numbers: numbers.map((n, i) => ({
                  phone: PHONES[i]!,
                  throughputPerHour: n.perHour,
                  messagingLimit24h: n.per24h,
                  ...(n.perSecond ? { messagesPerSecond: n.perSecond } : {}),
                  ...(n.account ? { account: n.account } : {}),
                })),
                templateTypes: [{ id: 1, name: 'type', templateIds: TEMPLATES }],
              },
            ],
            templates: TEMPLATES.map((id, i) => ({ id, name: `t${id}`, text: 'Hi', businessIds: [1], ...(templateAccounts[i] ? { account: templateAccounts[i] } : {}) })),
          };
          const setup = () => {
            const clock = new ManualClock(0);
            const model: Model = {
              now: 0,
              numbers: numbers.map((n) => ({
                ...n,
                active: true,
                until: undefined,
                hourScaled: n.perHour * HOUR,
                secondScaled: n.perSecond * 1000,
                at: 0,
                log: [],
              })),
              templates: TEMPLATES.map((_, i) => ({ status: 'active' as const, until: undefined, account: templateAccounts[i] })),
            };
            return { model, real: { engine: createEngine(fleet, { clock }), clock } };
          };
          fc.modelRun(setup, cmds);
        },
      ),
      { numRuns: 150 },
    );
  });
});
