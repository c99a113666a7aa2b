import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Outbox, httpAttemptResult, type DeliveryAttempt, type OutboxEvent, type OutboxOptions } from '../../src/events/outbox.js';
import { isSnapshotError } from '../../src/core/errors.js';
import { T0, seededRandom } from './helpers.js';

function event(id: string, order?: string, url = 'https://receiver.test/hsm'): OutboxEvent {
  return { id, family: 'hsm', url, body: JSON.stringify({ event_id: id }), companyId: 1, ...(order === undefined ? {} : { order }) };
}

/** The model's events: e1-e3 one contact's, in that order; e4 another receiver's; e5 without an order. */
const MODEL_EVENTS: Record<string, OutboxEvent> = {
  e1: event('e1', 'c1'),
  e2: event('e2', 'c1'),
  e3: event('e3', 'c1'),
  e4: event('e4', 'c2', 'https://other.test/hsm'),
  e5: event('e5'),
};

describe('Outbox', () => {
  it('delivers on first success and reports it once', () => {
    const o = new Outbox({ random: seededRandom(1) });
    expect(o.enqueue(event('a'), T0)).toEqual({ kind: 'enqueued' });
    expect(o.enqueue(event('a'), T0)).toEqual({ kind: 'duplicate' });
    expect(o.nextWakeAt()).toBe(T0);
    const [a] = o.take(T0);
    expect(a).toMatchObject({ attempt: 1, deadline: T0 + 30_000 });
    expect(o.take(T0)).toEqual([]);
    expect(o.settle('a', 1, httpAttemptResult(204), T0 + 100)).toEqual({ kind: 'delivered' });
    expect(o.settle('a', 1, httpAttemptResult(200), T0 + 100)).toEqual({ kind: 'ignored', reason: 'already-final' });
    expect(o.takeOutcomes()).toEqual([{ kind: 'delivered', event: event('a'), attempts: 1, at: T0 + 100 }]);
    expect(o.takeOutcomes()).toEqual([]);
    expect(o.enqueue(event('a'), T0 + 200)).toEqual({ kind: 'duplicate' });
    expect(o.nextWakeAt()).toBeNull();
  });

  it('counts the unfinished events of the receiver a URL goes to (its origin)', () => {
    const o = new Outbox({ random: seededRandom(1) });
    o.enqueue(event('a', undefined, 'https://a.test/hsm'), T0);
    o.enqueue(event('b', undefined, 'https://a.test/campaigns'), T0);
    o.enqueue(event('c', undefined, 'https://b.test/hsm'), T0);
    expect(o.unfinishedAt('https://a.test/anything')).toBe(2);
    expect(o.unfinishedAt('https://b.test/hsm')).toBe(1);
    expect(o.unfinishedAt('https://c.test/hsm')).toBe(0);
    for (const a of o.take(T0)) if (a.event.id !== 'b') o.settle(a.event.id, a.attempt, { ok: true }, T0);
    expect(o.unfinishedAt('https://a.test/hsm')).toBe(1);
    expect(o.unfinishedAt('https://b.test/hsm')).toBe(0);
  });

  it('retries with exponential backoff and jitter, then dead-letters past the maximum age', () => {
    const o = new Outbox({ random: seededRandom(2), initialDelayMs: 1_000, maxDelayMs: 8_000, maxAgeMs: 60_000 });
    o.enqueue(event('a'), T0);
    let now = T0;
    const delays: number[] = [];
    for (;;) {
      const [att] = o.take(now);
      expect(att).toBeDefined();
      const r = o.settle('a', (att as DeliveryAttempt).attempt, httpAttemptResult(503), now);
      if (r.kind === 'dead-lettered') break;
      expect(r.kind).toBe('retry');
      const at = (r as { at: number }).at;
      delays.push(at - now);
      now = at;
    }
    // Equal jitter: each delay in [base/2, base], base = 1s, 2s, 4s, 8s, 8s, …
    delays.forEach((d, i) => {
      const base = Math.min(8_000, 1_000 * 2 ** i);
      expect(d).toBeGreaterThanOrEqual(base / 2);
      expect(d).toBeLessThanOrEqual(base);
    });
    const [dead] = o.takeOutcomes();
    expect(dead).toMatchObject({ kind: 'dead-lettered', lastError: 'HTTP 503' });
    expect(now - T0).toBeLessThanOrEqual(60_000);
  });

  it('times out unanswered attempts and retries them; a late success still delivers', () => {
    const o = new Outbox({ random: seededRandom(3), attemptTimeoutMs: 10_000 });
    o.enqueue(event('a'), T0);
    o.take(T0);
    expect(o.nextWakeAt()).toBe(T0 + 10_000);
    o.tick(T0 + 10_000);
    expect(o.stateOf('a')).toBe('pending');
    // A failure of the timed-out attempt is stale; its late success proves delivery.
    expect(o.settle('a', 1, { ok: false, error: 'HTTP 500' }, T0 + 10_001)).toEqual({ kind: 'ignored', reason: 'stale-attempt' });
    expect(o.settle('a', 1, { ok: true }, T0 + 10_002)).toEqual({ kind: 'delivered' });
    expect(o.takeOutcomes()).toHaveLength(1);
  });

  it('restores from a JSON snapshot without losing pending deliveries', () => {
    const o = new Outbox({ random: seededRandom(4) });
    o.enqueue(event('a'), T0);
    o.enqueue(event('b'), T0);
    o.take(T0, 1);
    const r = Outbox.restore(JSON.parse(JSON.stringify(o.snapshot())), { random: seededRandom(4) });
    expect(r.stateOf('a')).toBe('in-flight');
    expect(r.stateOf('b')).toBe('pending');
    expect(r.take(T0).map((x) => x.event.id)).toEqual(['b']);
    expect(r.take(T0 + 30_000).length).toBe(0); // a timed out, back off first
    expect(r.nextWakeAt()).toBeGreaterThan(T0 + 30_000);
    expect(() => Outbox.restore({ version: 2 } as never, { random: seededRandom(1) })).toSatisfy((f: () => unknown) => {
      try {
        f();
        return false;
      } catch (e) {
        return isSnapshotError(e);
      }
    });
  });

  it('classifies HTTP statuses: 2xx is success', () => {
    expect(httpAttemptResult(200).ok).toBe(true);
    expect(httpAttemptResult(299).ok).toBe(true);
    expect(httpAttemptResult(301)).toEqual({ ok: false, error: 'HTTP 301' });
    expect(httpAttemptResult(410).ok).toBe(false);
  });

  it('holds a down receiver to one probe at a time, and sends its whole backlog once it answers', () => {
    const o = new Outbox({ random: seededRandom(5), initialDelayMs: 1_000 });
    for (let i = 0; i < 100; i++) o.enqueue(event(`e${i}`), T0);
    const first = o.take(T0, 8);
    expect(first).toHaveLength(8);
    for (const a of first) o.settle(a.event.id, a.attempt, { ok: false, error: 'ECONNREFUSED' }, T0 + 1);
    // Down: nothing before the probe time, then one probe at a time.
    expect(o.take(T0 + 2)).toEqual([]);
    let now = T0 + 2;
    /** Wakes when the outbox says until it hands something out. */
    const next = (): DeliveryAttempt[] => {
      for (let i = 0; i < 200; i++) {
        now = o.nextWakeAt()!;
        const taken = o.take(now);
        if (taken.length > 0) return taken;
      }
      return [];
    };
    const probe = next();
    expect(probe).toHaveLength(1);
    expect(o.take(now)).toEqual([]);
    o.settle(probe[0]!.event.id, probe[0]!.attempt, { ok: false, error: 'ECONNREFUSED' }, now);
    const second = next();
    expect(second).toHaveLength(1);
    // Up again: every other event is due at once, those that failed before included.
    o.settle(second[0]!.event.id, second[0]!.attempt, { ok: true }, now);
    const rest = o.take(now);
    expect(rest).toHaveLength(99);
    for (const a of rest) o.settle(a.event.id, a.attempt, { ok: true }, now);
    expect(o.takeOutcomes().filter((x) => x.kind === 'delivered')).toHaveLength(100);
    expect(o.size).toBe(0);
  });

  it('sends the events of one order key one after another, in enqueue order', () => {
    const o = new Outbox({ random: seededRandom(6) });
    o.enqueue(event('a1', 'a'), T0);
    o.enqueue(event('b1', 'b'), T0);
    o.enqueue(event('a2', 'a'), T0);
    expect(o.stateOf('a2')).toBe('held');
    expect(o.take(T0).map((a) => a.event.id)).toEqual(['a1', 'b1']);
    o.settle('a1', 1, { ok: true }, T0 + 1);
    expect(o.take(T0 + 1).map((a) => a.event.id)).toEqual(['a2']);
    // Held survives a snapshot as held.
    const p = new Outbox({ random: seededRandom(6) });
    p.enqueue(event('x1', 'x'), T0);
    p.enqueue(event('x2', 'x'), T0);
    const q = Outbox.restore(JSON.parse(JSON.stringify(p.snapshot())), { random: seededRandom(6) });
    expect([q.stateOf('x1'), q.stateOf('x2')]).toEqual(['pending', 'held']);
  });

  describe('model-based: never loses or duplicates a final outcome', () => {
    interface Model {
      now: number;
      enqueued: Set<string>;
      succeeded: Set<string>;
      outcomes: Map<string, string>;
      wire: DeliveryAttempt[];
      /** Ids in enqueue order. */
      order: string[];
    }
    interface Real {
      outbox: Outbox;
    }
    const options: OutboxOptions = {
      random: seededRandom(11),
      initialDelayMs: 1_000,
      maxDelayMs: 60_000,
      maxAgeMs: 10 * 60_000,
      attemptTimeoutMs: 5_000,
      rememberFinishedMs: 1e12,
    };

    function drain(m: Model, r: Real): void {
      for (const o of r.outbox.takeOutcomes()) {
        expect(m.outcomes.has(o.event.id), `second outcome for ${o.event.id}`).toBe(false);
        expect(m.enqueued.has(o.event.id)).toBe(true);
        if (o.kind === 'delivered') expect(m.succeeded.has(o.event.id)).toBe(true);
        m.outcomes.set(o.event.id, o.kind);
      }
    }

    /** An event with an order key goes only once every event enqueued before it with that key has finished. */
    function checkOrder(m: Model, r: Real, e: OutboxEvent): void {
      if (e.order === undefined) return;
      for (const id of m.order.slice(0, m.order.indexOf(e.id))) {
        const before = MODEL_EVENTS[id]!;
        if (before.order === e.order && before.url === e.url) expect(r.outbox.stateOf(id), `${e.id} sent before ${id} ended`).toBe('finished');
      }
    }

    function checkNoneLost(m: Model, r: Real): void {
      for (const id of m.enqueued) expect(r.outbox.stateOf(id)).toBeDefined();
    }

    class Enqueue implements fc.Command<Model, Real> {
      constructor(readonly id: string) {}
      check = () => true;
      run(m: Model, r: Real): void {
        const res = r.outbox.enqueue(MODEL_EVENTS[this.id]!, m.now);
        expect(res.kind).toBe(m.enqueued.has(this.id) ? 'duplicate' : 'enqueued');
        if (!m.enqueued.has(this.id)) m.order.push(this.id);
        m.enqueued.add(this.id);
      }
      toString = () => `enqueue(${this.id})`;
    }
    class Advance implements fc.Command<Model, Real> {
      constructor(readonly ms: number) {}
      check = () => true;
      run(m: Model, r: Real): void {
        m.now += this.ms;
        for (const a of r.outbox.take(m.now)) {
          expect(m.outcomes.has(a.event.id)).toBe(false);
          checkOrder(m, r, a.event);
          m.wire.push(a);
        }
        checkNoneLost(m, r);
      }
      toString = () => `advance(${this.ms})`;
    }
    class Settle implements fc.Command<Model, Real> {
      constructor(
        readonly pick: number,
        readonly result: 'ok' | 'fail',
      ) {}
      check = (m: Readonly<Model>) => m.wire.length > 0;
      run(m: Model, r: Real): void {
        const [a] = m.wire.splice(this.pick % m.wire.length, 1) as [DeliveryAttempt];
        const res = r.outbox.settle(a.event.id, a.attempt, this.result === 'ok' ? { ok: true } : { ok: false, error: 'HTTP 500' }, m.now);
        if (this.result === 'ok' && res.kind === 'delivered') m.succeeded.add(a.event.id);
        if (m.outcomes.has(a.event.id)) expect(res.kind).toBe('ignored');
        checkNoneLost(m, r);
      }
      toString = () => `settle(${this.pick}, ${this.result})`;
    }
    class Restart implements fc.Command<Model, Real> {
      check = () => true;
      run(m: Model, r: Real): void {
        r.outbox = Outbox.restore(JSON.parse(JSON.stringify(r.outbox.snapshot())), options);
        m.wire = []; // the host's requests in flight died with it
        checkNoneLost(m, r);
      }
      toString = () => 'restart';
    }
    class Drain implements fc.Command<Model, Real> {
      check = () => true;
      run(m: Model, r: Real): void {
        drain(m, r);
      }
      toString = () => 'drain';
    }

    const commands = [
      fc.constantFrom('e1', 'e2', 'e3', 'e4', 'e5').map((id) => new Enqueue(id)),
      fc.integer({ min: 0, max: 120_000 }).map((ms) => new Advance(ms)),
      fc.tuple(fc.nat(), fc.constantFrom<'ok' | 'fail'>('ok', 'fail', 'fail')).map(([p, r]) => new Settle(p, r)),
      fc.constant(new Restart()),
      fc.constant(new Drain()),
    ];

    it('under random failures, timeouts and restarts, each event ends exactly once', () => {
      fc.assert(
        fc.property(fc.commands(commands, { maxCommands: 80 }), (cmds) => {
          let model!: Model;
          let real!: Real;
          fc.modelRun(() => {
            model = { now: T0, enqueued: new Set(), succeeded: new Set(), outcomes: new Map(), wire: [], order: [] };
            real = { outbox: new Outbox(options) };
            return { model, real };
          }, cmds);
          // Drive to the end: nothing answers any more, so every event delivers (late success) or dead-letters.
          for (let i = 0; i < 1_000 && real.outbox.size > 0; i++) {
            const wake = real.outbox.nextWakeAt();
            model.now = Math.max(model.now, wake ?? model.now);
            for (const a of real.outbox.take(model.now)) {
              checkOrder(model, real, a.event);
              real.outbox.settle(a.event.id, a.attempt, { ok: false, error: 'HTTP 502' }, model.now);
            }
          }
          drain(model, real);
          expect(real.outbox.size).toBe(0);
          expect([...model.outcomes.keys()].sort()).toEqual([...model.enqueued].sort());
          for (const [id, kind] of model.outcomes) {
            if (!model.succeeded.has(id)) expect(kind).toBe('dead-lettered');
          }
        }),
      );
    });
  });
});
