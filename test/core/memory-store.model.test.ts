/**
 * Model-based test of MemoryStore's 24 h counter: random commands (time steps, reservations with
 * part given back, snapshot and restore, limit changes) run against the store and against a send
 * log that counts by definition: a send weighs while its bucket is the current one or one of the
 * day of buckets before it. The hour window is set out of reach so the 24 h counter alone answers,
 * and both must agree exactly on `available` and `availableAt` after every command.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../src/index.js';

const MINUTE = 60_000;
const PHONES = ['5511900000001', '5511900000002', '5511900000003'];
const AMPLE_HOUR = 1_000_000_000;

interface Model {
  now: number;
  bucketMs: number;
  /** Buckets counted besides the current one: a day of them. */
  rows: number;
  per24h: number[];
  log: { bucket: number; count: number }[][];
}

interface Real {
  store: MemoryStore;
  handles: number[];
}

function used(m: Model, n: number, now: number): number {
  const bucket = Math.floor(now / m.bucketMs);
  return m.log[n]!.filter((s) => s.bucket >= bucket - m.rows && s.bucket <= bucket).reduce((x, s) => x + s.count, 0);
}

function modelAvailable(m: Model, n: number, now: number): number {
  return Math.max(0, m.per24h[n]! - used(m, n, now));
}

/** First time >= now at which `count` may go: the start of a bucket, found by walking them. */
function modelAvailableAt(m: Model, n: number, count: number): number {
  if (count > m.per24h[n]!) return Infinity;
  if (modelAvailable(m, n, m.now) >= count) return m.now;
  for (let b = Math.floor(m.now / m.bucketMs) + 1; ; b++) {
    if (modelAvailable(m, n, b * m.bucketMs) >= count) return b * m.bucketMs;
  }
}

function check(m: Model, r: Real): void {
  for (let n = 0; n < PHONES.length; n++) {
    expect(r.store.available(r.handles[n]!, m.now)).toBe(modelAvailable(m, n, m.now));
    expect(r.store.windows(r.handles[n]!, m.now).day).toEqual({ used: used(m, n, m.now), limit: m.per24h[n] });
    for (const count of [1, 7]) expect(r.store.availableAt(r.handles[n]!, count, m.now)).toBe(modelAvailableAt(m, n, count));
  }
}

const limitsOf = (per24h: number) => ({ perHour: AMPLE_HOUR, per24h });

class Advance implements fc.Command<Model, Real> {
  constructor(readonly ms: number) {}
  check = () => true;
  run(m: Model, r: Real): void {
    m.now += this.ms;
    check(m, r);
  }
  toString = () => `advance(${this.ms})`;
}

/** Whole buckets at a time: lands exactly on the bucket where an old one leaves the window. */
class AdvanceBuckets implements fc.Command<Model, Real> {
  constructor(readonly buckets: number) {}
  check = () => true;
  run(m: Model, r: Real): void {
    m.now += this.buckets * m.bucketMs;
    check(m, r);
  }
  toString = () => `advanceBuckets(${this.buckets})`;
}

class Reserve implements fc.Command<Model, Real> {
  constructor(
    readonly n: number,
    readonly want: number,
    readonly keep: number,
  ) {}
  check = () => true;
  run(m: Model, r: Real): void {
    const h = r.handles[this.n]!;
    const granted = r.store.reserve(h, this.want, m.now);
    expect(granted).toBe(Math.min(this.want, modelAvailable(m, this.n, m.now)));
    const kept = Math.min(granted, this.keep);
    r.store.release(h, granted - kept, m.now);
    if (kept > 0) m.log[this.n]!.push({ bucket: Math.floor(m.now / m.bucketMs), count: kept });
    check(m, r);
  }
  toString = () => `reserve(${this.n}, ${this.want}, keep ${this.keep})`;
}

class Restart implements fc.Command<Model, Real> {
  check = () => true;
  run(m: Model, r: Real): void {
    const copy = new MemoryStore({ bucketMinutes: m.bucketMs / MINUTE });
    copy.restore(JSON.parse(JSON.stringify(r.store.snapshot())), m.now);
    r.store = copy;
    r.handles = PHONES.map((p, n) => copy.open(p, limitsOf(m.per24h[n]!), m.now));
    check(m, r);
  }
  toString = () => 'restart';
}

class SetLimit implements fc.Command<Model, Real> {
  constructor(
    readonly n: number,
    readonly per24h: number,
  ) {}
  check = () => true;
  run(m: Model, r: Real): void {
    m.per24h[this.n] = this.per24h;
    r.store.open(PHONES[this.n]!, limitsOf(this.per24h), m.now);
    check(m, r);
  }
  toString = () => `setLimit(${this.n}, ${this.per24h})`;
}

describe('MemoryStore 24 h counter against a send log', () => {
  it('agrees on available and availableAt under any commands, at any bucket width', () => {
    const number = fc.integer({ min: 0, max: PHONES.length - 1 });
    const commands = fc.commands(
      [
        // Steps from within a bucket to more than a day, so buckets are crossed one, a few or all at once.
        fc.oneof(fc.integer({ min: 0, max: 20 * MINUTE }), fc.integer({ min: 0, max: 5 * 60 * MINUTE }), fc.integer({ min: 20 * 60 * MINUTE, max: 30 * 60 * MINUTE })).map((ms) => new Advance(ms)),
        fc.integer({ min: 1, max: 26 }).map((k) => new AdvanceBuckets(k)),
        fc.tuple(number, fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 40 })).map(([n, want, keep]) => new Reserve(n, want, keep)),
        fc.constant(new Restart()),
        fc.tuple(number, fc.integer({ min: 1, max: 120 })).map(([n, per24h]) => new SetLimit(n, per24h)),
      ],
      { maxCommands: 120 },
    );
    fc.assert(
      fc.property(fc.constantFrom(60, 180, 360), fc.integer({ min: 1, max: 120 }), commands, (minutes, per24h, cmds) => {
        const bucketMs = minutes * MINUTE;
        const model: Model = { now: 0, bucketMs, rows: 1440 / minutes, per24h: PHONES.map(() => per24h), log: PHONES.map(() => []) };
        const store = new MemoryStore({ bucketMinutes: minutes });
        const real: Real = { store, handles: PHONES.map((p) => store.open(p, limitsOf(per24h), 0)) };
        fc.modelRun(() => ({ model, real }), cmds);
      }),
      { numRuns: 400 },
    );
  });
});
