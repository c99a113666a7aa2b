/**
 * What the engine is owed for a number (`NumberState.need`, number-state.ts), against a model of
 * two facts without Redis: whether the engine wants tokens, and whether it waits to be woken. Any
 * order of shortfalls, waits, spends and lease answers: the one field says both facts, an engine
 * that waits always wants tokens too, and each wait ends in exactly one wake-up, at the first
 * answer after which the number holds tokens.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { afterAnswer, fellShort, numberState, park, type NumberState } from '../../src/redis/number-state.js';

interface Model {
  /** The engine wants more tokens than it holds. */
  wants: boolean;
  /** The engine was told to wait and has not been woken. */
  waits: boolean;
  balance: number;
  /** Waits so far, and wake-ups so far. */
  parks: number;
  wakes: number;
}

interface Real {
  readonly st: NumberState;
  now: number;
  leases: number;
  wakes: number;
}

type Cmd = fc.Command<Model, Real>;

function check(m: Model, r: Real): void {
  expect(r.st.tokens.balance).toBe(m.balance);
  expect(r.st.need !== 'none', 'wants tokens').toBe(m.wants);
  expect(r.st.need === 'parked', 'waits').toBe(m.waits);
  expect(!m.waits || m.wants, 'an engine that waits wants tokens').toBe(true);
  expect(r.wakes).toBe(m.wakes);
  expect(m.wakes).toBe(m.parks - (m.waits ? 1 : 0));
}

/** The engine got fewer tokens than it asked for. */
class Short implements Cmd {
  check = () => true;
  run(m: Model, r: Real): void {
    m.wants = true;
    fellShort(r.st);
    check(m, r);
  }
  toString = () => 'short';
}

/** The engine was told to wait for tokens (again, while it waits: still one wait). */
class Park implements Cmd {
  check = () => true;
  run(m: Model, r: Real): void {
    if (!m.waits) m.parks++;
    m.wants = true;
    m.waits = true;
    park(r.st);
    check(m, r);
  }
  toString = () => 'park';
}

/** The engine spends tokens it holds. */
class Spend implements Cmd {
  constructor(readonly count: number) {}
  check = () => true;
  run(m: Model, r: Real): void {
    const took = r.st.tokens.take(this.count, r.now);
    expect(took).toBe(Math.min(this.count, m.balance));
    m.balance -= took;
    check(m, r);
  }
  toString = () => `spend(${this.count})`;
}

/** A lease call answers: `tokens` granted, all that was wanted or less. */
class Answer implements Cmd {
  constructor(
    readonly tokens: number,
    readonly met: boolean,
  ) {}
  check = () => true;
  run(m: Model, r: Real): void {
    if (this.tokens > 0) r.st.tokens.grant({ id: `l${++r.leases}`, granted: this.tokens, expiresAt: r.now + 60_000, scriptExpiresAt: r.now + 60_000 }, r.now);
    m.balance += this.tokens;
    const wake = m.waits && m.balance > 0;
    if (wake) {
      m.waits = false;
      m.wakes++;
    }
    if (this.met) m.wants = m.waits;
    if (afterAnswer(r.st, this.met)) r.wakes++;
    check(m, r);
  }
  toString = () => `answer(${this.tokens}, ${this.met ? 'met' : 'short'})`;
}

const commands = [
  fc.constant(new Short()),
  fc.constant(new Park()),
  fc.integer({ min: 1, max: 5 }).map((n) => new Spend(n)),
  fc.tuple(fc.integer({ min: 0, max: 4 }), fc.boolean()).map(([tokens, met]) => new Answer(tokens, met)),
];

describe('what the engine is owed for a number, against a model', () => {
  it('one field says whether it wants tokens and whether it waits; each wait ends in one wake-up (500 runs)', () => {
    fc.assert(
      fc.property(fc.commands(commands, { maxCommands: 60 }), (cmds) => {
        const setup = () => ({
          model: { wants: false, waits: false, balance: 0, parks: 0, wakes: 0 } as Model,
          real: { st: numberState('5511990000001', 'k', { perHour: 100, per24h: 1000 }, 0), now: 0, leases: 0, wakes: 0 } as Real,
        });
        fc.modelRun(setup, cmds);
      }),
      { numRuns: 500 },
    );
  });
});
