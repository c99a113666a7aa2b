/**
 * The tokens an instance holds for a number (NumberLedger), against a tiny model without Redis:
 * a list of leases, each with its tokens left and its expiry. Grants, reservations, releases,
 * expiry and give-backs in any order: the balance is always the model's, a reservation never
 * hands out more than the live leases hold (the first to expire first, whatever order they were
 * granted in), a release puts tokens back only into live leases, and a give-back returns exactly
 * what was unspent, the last to expire first.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NumberLedger } from '../../src/redis/number-ledger.js';

interface ModelLease {
  id: string;
  left: number;
  /** Given back so far (the give-back script's cumulative total). */
  returned: number;
  expiresAt: number;
}

interface Model {
  now: number;
  leases: ModelLease[];
  /** Tokens of the last take, per lease, in the order taken. */
  took: [ModelLease, number][];
  lost: number;
}

/** Live leases, the first to expire first (ties: the first granted). */
const live = (m: Model) => m.leases.filter((l) => l.expiresAt > m.now).sort((a, b) => a.expiresAt - b.expiresAt);
const balance = (m: Model) => live(m).reduce((a, l) => a + l.left, 0);

type Real = { ledger: NumberLedger; lost: number };

class Advance implements fc.Command<Model, Real> {
  constructor(readonly dt: number) {}
  check = () => true;
  run(m: Model, r: Real): void {
    m.now += this.dt;
    for (const l of m.leases) if (l.expiresAt <= m.now) m.lost += l.left;
    m.leases = live(m);
    r.lost += r.ledger.expire(m.now);
    expect(r.lost).toBe(m.lost);
    expect(r.ledger.balance).toBe(balance(m));
  }
  toString = () => `advance(${this.dt})`;
}

class Grant implements fc.Command<Model, Real> {
  constructor(
    readonly id: string,
    readonly granted: number,
    readonly ttl: number,
  ) {}
  check = () => true;
  run(m: Model, r: Real): void {
    const expiresAt = m.now + this.ttl;
    const known = m.leases.some((l) => l.id === this.id) || seen.has(this.id);
    const result = r.ledger.grant({ id: this.id, granted: this.granted, expiresAt, scriptExpiresAt: expiresAt }, m.now);
    if (known) expect(result).toBe('known');
    else {
      seen.add(this.id);
      expect(result).toBe(this.ttl > 0 ? 'added' : 'expired');
      if (this.ttl > 0) m.leases.push({ id: this.id, left: this.granted, returned: 0, expiresAt });
    }
    expect(r.ledger.balance).toBe(balance(m));
  }
  toString = () => `grant(${this.id}, ${this.granted}, ttl ${this.ttl})`;
}

class Take implements fc.Command<Model, Real> {
  constructor(readonly want: number) {}
  check = () => true;
  run(m: Model, r: Real): void {
    r.lost += r.ledger.expire(m.now);
    const g = r.ledger.take(this.want);
    const expected = Math.min(this.want, balance(m));
    expect(g).toBe(expected);
    // The lease that expires first, first.
    m.took = [];
    let left = expected;
    for (const l of live(m)) {
      if (left === 0) break;
      const t = Math.min(l.left, left);
      if (t === 0) continue;
      l.left -= t;
      m.took.push([l, t]);
      left -= t;
    }
    expect(r.ledger.balance).toBe(balance(m));
  }
  toString = () => `take(${this.want})`;
}

class PutBack implements fc.Command<Model, Real> {
  constructor(readonly count: number) {}
  check = () => true;
  run(m: Model, r: Real): void {
    r.ledger.putBack(this.count, m.now);
    let left = this.count;
    for (let k = m.took.length - 1; k >= 0 && left > 0; k--) {
      const [lease, n] = m.took[k]!;
      const t = Math.min(n, left);
      if (lease.expiresAt <= m.now) continue;
      lease.left += t;
      m.took[k] = [lease, n - t];
      left -= t;
    }
    expect(r.ledger.balance).toBe(balance(m));
  }
  toString = () => `putBack(${this.count})`;
}

class Drain implements fc.Command<Model, Real> {
  check = () => true;
  run(m: Model, r: Real): void {
    r.lost += r.ledger.expire(m.now);
    const drained = r.ledger.drain();
    const expected = live(m)
      .filter((l) => l.left > 0)
      .reverse();
    expect(drained.map((l) => [l.id, l.returned])).toEqual(expected.map((l) => [l.id, l.returned + l.left]));
    for (const l of m.leases) {
      l.returned += l.left;
      l.left = 0;
    }
    // What the last reservation took was not unspent: it was not given back, and a release after
    // the give-back may still put it back (it is charged in Redis and still the instance's).
    expect(r.ledger.balance).toBe(0);
  }
  toString = () => 'drain()';
}

let seen = new Set<string>();

describe('NumberLedger', () => {
  it('model: balance, hand-outs, releases, expiry and give-backs agree with a list of leases', () => {
    const commands = [
      fc.integer({ min: 0, max: 3_000 }).map((dt) => new Advance(dt)),
      fc.tuple(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 50 }), fc.integer({ min: 0, max: 5_000 })).map(([id, g, ttl]) => new Grant(`l${id}`, g, ttl)),
      fc.integer({ min: 0, max: 60 }).map((w) => new Take(w)),
      fc.integer({ min: 0, max: 60 }).map((c) => new PutBack(c)),
      fc.constant(new Drain()),
    ];
    fc.assert(
      fc.property(fc.commands(commands, { maxCommands: 60 }), (cmds) => {
        seen = new Set();
        fc.modelRun(() => ({ model: { now: 0, leases: [], took: [], lost: 0 }, real: { ledger: new NumberLedger(), lost: 0 } }), cmds);
      }),
      { numRuns: 300 },
    );
  });

  it('tells others until when its unspent tokens may be spent: the latest lease that has some', () => {
    const ledger = new NumberLedger();
    expect(ledger.heldUntil()).toBe(0);
    ledger.grant({ id: 'a', granted: 5, expiresAt: 100, scriptExpiresAt: 1_100 }, 0);
    ledger.grant({ id: 'b', granted: 5, expiresAt: 200, scriptExpiresAt: 1_200 }, 0);
    expect(ledger.heldUntil()).toBe(1_200);
    // The newer lease spent: the older one's expiry is what remains.
    expect(ledger.take(10)).toBe(10);
    ledger.putBack(3, 50);
    expect(ledger.heldUntil()).toBe(1_200);
    expect(ledger.take(3)).toBe(3);
    expect(ledger.heldUntil()).toBe(0);
  });
});

describe('NumberLedger refunds', () => {
  const lease = (id: string, granted: number, expiresAt: number) => ({ id, granted, expiresAt, scriptExpiresAt: expiresAt });

  it('gives a refused token back to the lease it came from, found by the time of its take', () => {
    const l = new NumberLedger();
    l.grant(lease('a', 3, 1_000), 0);
    l.grant(lease('b', 5, 2_000), 0);
    expect(l.take(2, 10)).toBe(2); // from a
    expect(l.take(2, 20)).toBe(2); // a's last, then b's first: both span 20
    expect(l.take(1, 30)).toBe(1); // from b
    expect(l.balance).toBe(3);
    expect(l.refund(1, 10, 40)).toBe(1); // a, alone at 10
    expect(l.balance).toBe(4);
    expect(l.refund(1, 30, 40)).toBe(1); // b, alone at 30
    expect(l.refund(1, 20, 40)).toBe(0); // a and b both span 20: which one is unknown, nothing back
    expect(l.refund(1, 5, 40)).toBe(0); // no take then
    expect(l.balance).toBe(5);
  });

  it('gives back no more than the lease handed out, and nothing once it expired', () => {
    const l = new NumberLedger();
    l.grant(lease('a', 2, 1_000), 0);
    l.take(1, 10);
    expect(l.refund(3, 10, 20)).toBe(1);
    expect(l.refund(1, 10, 20)).toBe(0);
    l.take(1, 50);
    expect(l.refund(1, 50, 1_000)).toBe(0); // expired
  });

  it('never lets a lease spend more than it was granted, for any takes, refunds and give-backs', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.record({ take: fc.integer({ min: 1, max: 4 }) }), fc.record({ refund: fc.integer({ min: 1, max: 3 }), back: fc.nat(5) }), fc.constant({ drain: true })), {
          maxLength: 60,
        }),
        (ops) => {
          const l = new NumberLedger();
          l.grant(lease('a', 6, 10_000), 0);
          l.grant(lease('b', 6, 20_000), 0);
          let now = 0;
          const taken: number[] = [];
          let spent = 0;
          let drained = 0;
          for (const op of ops) {
            now += 1;
            if ('take' in op) {
              const g = l.take(op.take, now);
              for (let i = 0; i < g; i++) taken.push(now);
              spent += g;
            } else if ('refund' in op) {
              const at = taken[taken.length - 1 - Math.min(op.back, taken.length - 1)];
              if (at !== undefined) spent -= l.refund(op.refund, at, now);
            } else {
              drained += l.balance;
              for (const x of l.drain()) void x;
            }
            // Spent + unspent + returned never exceeds what was granted.
            expect(spent + l.balance + drained).toBeLessThanOrEqual(12);
            expect(spent).toBeGreaterThanOrEqual(0);
          }
        },
      ),
    );
  });
});
