import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Outbox, httpAttemptResult, type AttemptResult, type DeliveryAttempt, type OutboxEvent, type OutboxOptions } from '../../src/events/outbox.js';
import { backoffDelay } from '../../src/events/backoff.js';
import { isSnapshotError } from '../../src/core/errors.js';
import { T0, seededRandom } from './helpers.js';

function event(id: string, order?: string, url = 'https://receiver.test/hsm'): OutboxEvent {
  return { id, family: 'hsm', url, body: JSON.stringify({ event_id: id }), companyId: 1, ...(order === undefined ? {} : { order }) };
}

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

  it('classifies HTTP statuses: a failing answer keeps its first characters, control characters replaced', () => {
    expect(httpAttemptResult(413, 'payload\r\ntoo large\u0000')).toEqual({ ok: false, error: 'HTTP 413: payload too large' });
    expect(httpAttemptResult(500, ' \n ')).toEqual({ ok: false, error: 'HTTP 500' });
    expect(httpAttemptResult(500, 'z'.repeat(1_000))).toEqual({ ok: false, error: `HTTP 500: ${'z'.repeat(256)}` });
    expect(httpAttemptResult(204, 'ignored')).toEqual({ ok: true });
  });

  /** Wakes when the outbox says until it hands something out (or 200 wake-ups passed). */
  function nextAttempts(o: Outbox, clock: { now: number }): DeliveryAttempt[] {
    for (let i = 0; i < 200; i++) {
      const at = o.nextWakeAt();
      if (at === null) return [];
      clock.now = Math.max(clock.now, at);
      const taken = o.take(clock.now);
      if (taken.length > 0) return taken;
    }
    return [];
  }
  const refused = { ok: false, error: 'ECONNREFUSED', connect: true } as const;

  it('rule (a): a connection that cannot be opened makes the receiver down at once; one probe at a time, and its first success sends what waited for it', () => {
    const o = new Outbox({ random: seededRandom(5), initialDelayMs: 1_000 });
    for (let i = 0; i < 100; i++) o.enqueue(event(`e${i}`), T0);
    const first = o.take(T0, 8);
    expect(first).toHaveLength(8);
    o.settle(first[0]!.event.id, first[0]!.attempt, refused, T0 + 1);
    expect(o.targets(T0 + 1)[0]).toMatchObject({ down: true, downReason: 'connect', failures: 1, lastError: 'ECONNREFUSED' });
    for (const a of first.slice(1)) o.settle(a.event.id, a.attempt, refused, T0 + 1);
    // Down: nothing before the probe time, then one probe at a time.
    expect(o.take(T0 + 2)).toEqual([]);
    const clock = { now: T0 + 2 };
    const probe = nextAttempts(o, clock);
    expect(probe).toHaveLength(1);
    // The probe is an event that has not failed yet.
    expect(first.map((a) => a.event.id)).not.toContain(probe[0]!.event.id);
    expect(o.take(clock.now)).toEqual([]);
    o.settle(probe[0]!.event.id, probe[0]!.attempt, refused, clock.now);
    const second = nextAttempts(o, clock);
    expect(second).toHaveLength(1);
    expect(second[0]!.event.id).not.toBe(probe[0]!.event.id);
    // Up again: everything deferred for it is due at once; those in their own backoff keep it.
    o.settle(second[0]!.event.id, second[0]!.attempt, { ok: true }, clock.now);
    const view = o.targets(clock.now)[0]!;
    expect(view).toMatchObject({ down: false, downReason: null, probeAt: null, pending: 99 });
    const rest = o.take(clock.now);
    expect(rest.length).toBe(view.due);
    const backingOff = new Set([...first, ...probe].map((a) => a.event.id).filter((id) => o.stateOf(id) === 'pending'));
    expect(rest.length + backingOff.size).toBe(99);
    for (const a of rest) expect(backingOff.has(a.event.id)).toBe(false);
    for (const a of rest) o.settle(a.event.id, a.attempt, { ok: true }, clock.now);
    // The rest go at their own retry times.
    for (let a = nextAttempts(o, clock); a.length > 0; a = nextAttempts(o, clock)) for (const x of a) o.settle(x.event.id, x.attempt, { ok: true }, clock.now);
    expect(o.takeOutcomes().filter((x) => x.kind === 'delivered')).toHaveLength(100);
    expect(o.size).toBe(0);
  });

  it('one event failing on its path neither holds back the other events to its receiver nor is retried by their successes (the reported case)', () => {
    const o = new Outbox({ random: seededRandom(7) });
    const report = event('report', undefined, 'http://host/fail');
    o.enqueue(report, T0);
    const [r1] = o.take(T0);
    const retry = o.settle('report', r1!.attempt, httpAttemptResult(500), T0 + 10);
    expect(retry.kind).toBe('retry');
    const retryAt = (retry as { at: number }).at;
    // HSM notifications to the same origin, each answered at once: sent as soon as they come.
    let now = T0 + 20;
    for (let i = 0; i < 15; i++, now += 2) {
      o.enqueue(event(`hsm${i}`, `c${i}`, 'http://host/hsm'), now);
      const taken = o.take(now);
      expect(taken.map((a) => a.event.id)).toEqual([`hsm${i}`]);
      o.settle(`hsm${i}`, taken[0]!.attempt, { ok: true }, now);
    }
    // The report event keeps its own schedule: not one retry brought forward by those successes.
    expect(o.stateOf('report')).toBe('pending');
    expect(o.nextWakeAt()).toBe(retryAt);
    expect(o.targets(now)).toEqual([expect.objectContaining({ origin: 'http://host', down: false, failures: 1, lastError: 'HTTP 500', retrying: 1, due: 0, pending: 1 })]);
    expect(o.take(retryAt).map((a) => a.event.id)).toEqual(['report']);
  });

  it('rule (b): down when most of the recent distinct events failed, at least 5 known; one event failing again and again counts once', () => {
    const o = new Outbox({ random: seededRandom(8), initialDelayMs: 1_000 });
    const url = (path: string) => `https://r.test/${path}`;
    // One event failing ten times (resets, timeouts, 500s) is one failed event of the window.
    o.enqueue(event('bad', undefined, url('bad')), T0);
    const clock = { now: T0 };
    const errors = ['ECONNRESET', 'timeout', 'HTTP 500'];
    for (let i = 0; i < 10; i++) {
      const [a] = nextAttempts(o, clock);
      expect(a?.event.id).toBe('bad');
      o.settle('bad', a!.attempt, { ok: false, error: errors[i % 3]! }, clock.now);
      expect(o.targets(clock.now)[0]).toMatchObject({ down: false, failures: 1 });
    }
    // Distinct failing events: 4 known are not enough ...
    for (const id of ['f1', 'f2', 'f3']) o.enqueue(event(id, undefined, url(id)), clock.now);
    for (const a of o.take(clock.now)) o.settle(a.event.id, a.attempt, httpAttemptResult(500), clock.now);
    expect(o.targets(clock.now)[0]).toMatchObject({ down: false, failures: 4 });
    // ... 5 of 5 are (more than half).
    o.enqueue(event('f4', undefined, url('f4')), clock.now);
    for (const a of o.take(clock.now)) o.settle(a.event.id, a.attempt, { ok: false, error: 'ECONNRESET' }, clock.now);
    expect(o.targets(clock.now)[0]).toMatchObject({ down: true, downReason: 'failing', failures: 5 });
  });

  it('rule (b): not down while more than half of the recent events succeed; old results leave the window', () => {
    const o = new Outbox({ random: seededRandom(9), healthWindow: 6, healthMinEvents: 3 });
    const send = (id: string, ok: boolean, now: number) => {
      o.enqueue(event(id), now);
      const [a] = o.take(now);
      expect(a?.event.id).toBe(id);
      o.settle(id, a!.attempt, ok ? { ok: true } : httpAttemptResult(500), now);
      return o.targets(now)[0]!;
    };
    // 3 of 6 failed: half, not more.
    send('s1', true, T0);
    send('s2', true, T0);
    send('s3', true, T0);
    send('x1', false, T0);
    send('x2', false, T0);
    expect(send('x3', false, T0)).toMatchObject({ down: false, failures: 3 });
    // s1 leaves the window: 4 of 6 failed.
    expect(send('x4', false, T0)).toMatchObject({ down: true, downReason: 'failing', failures: 4 });
  });

  it('probes a receiver down with an event that has not failed yet, else rotates over the failed ones', () => {
    const o = new Outbox({ random: seededRandom(10), initialDelayMs: 1_000, maxDelayMs: 1_000, probeIntervalMs: 5_000 });
    const clock = { now: T0 };
    // Five report events that always fail: the receiver is down (rule b).
    for (let i = 0; i < 5; i++) o.enqueue(event(`p${i}`, undefined, 'https://r.test/report'), T0);
    for (const a of o.take(T0)) o.settle(a.event.id, a.attempt, httpAttemptResult(500), T0);
    expect(o.targets(T0)[0]).toMatchObject({ down: true, downReason: 'failing' });
    // Probes rotate: each failed event in turn, not the same one again and again.
    const probes: string[] = [];
    for (let i = 0; i < 10; i++) {
      const taken = nextAttempts(o, clock);
      expect(taken).toHaveLength(1);
      probes.push(taken[0]!.event.id);
      o.settle(taken[0]!.event.id, taken[0]!.attempt, httpAttemptResult(500), clock.now);
    }
    expect(new Set(probes).size).toBe(5);
    for (let i = 1; i < probes.length; i++) expect(probes[i]).not.toBe(probes[i - 1]);
    // Probes come at the latest every probeIntervalMs.
    // An HSM notification comes: it has not failed, so it is the next probe; it succeeds and the receiver is up.
    o.enqueue(event('hsm', undefined, 'https://r.test/hsm'), clock.now);
    const before = clock.now;
    const probe = nextAttempts(o, clock);
    expect(probe.map((a) => a.event.id)).toEqual(['hsm']);
    expect(clock.now - before).toBeLessThanOrEqual(5_000);
    o.settle('hsm', probe[0]!.attempt, { ok: true }, clock.now);
    expect(o.targets(clock.now)[0]).toMatchObject({ down: false });
  });

  it('probes a receiver down at the latest every probeIntervalMs, however long the events’ own backoff', () => {
    const o = new Outbox({ random: seededRandom(12), initialDelayMs: 60_000, maxDelayMs: 3_600_000, probeIntervalMs: 30_000 });
    for (let i = 0; i < 20; i++) o.enqueue(event(`e${i}`), T0);
    const clock = { now: T0 };
    for (const a of o.take(T0, 2)) o.settle(a.event.id, a.attempt, refused, T0);
    let last = T0;
    for (let i = 0; i < 10; i++) {
      const taken = nextAttempts(o, clock);
      expect(taken).toHaveLength(1);
      expect(clock.now - last).toBeLessThanOrEqual(30_000);
      last = clock.now;
      o.settle(taken[0]!.event.id, taken[0]!.attempt, { ok: false, error: 'EHOSTUNREACH', connect: true }, clock.now);
    }
    expect(o.targets(clock.now)[0]).toMatchObject({ down: true, downReason: 'connect', lastError: 'EHOSTUNREACH' });
  });

  it('dead-letters an event deferred for a receiver down past its maximum age, with the receiver’s last error', () => {
    const o = new Outbox({ random: seededRandom(13), maxAgeMs: 60_000, probeIntervalMs: 30_000 });
    o.enqueue(event('a'), T0);
    o.enqueue(event('b'), T0);
    const [a] = o.take(T0, 1);
    o.settle(a!.event.id, a!.attempt, refused, T0);
    const clock = { now: T0 };
    for (let p = nextAttempts(o, clock); p.length > 0; p = nextAttempts(o, clock)) for (const x of p) o.settle(x.event.id, x.attempt, refused, clock.now);
    expect(o.size).toBe(0);
    const outcomes = o.takeOutcomes();
    expect(outcomes.map((x) => x.kind)).toEqual(['dead-lettered', 'dead-lettered']);
    for (const x of outcomes) {
      expect(x).toMatchObject({ lastError: 'ECONNREFUSED' });
      expect(x.at).toBeLessThanOrEqual(T0 + 60_000);
    }
  });

  it('restores a version-1 snapshot', () => {
    const snapshot = {
      version: 1,
      entries: [
        { event: event('a'), createdAt: T0, attempts: 2, state: { kind: 'pending', dueAt: T0 + 1_000 }, lastError: 'HTTP 500' },
        { event: event('b', 'k'), createdAt: T0, attempts: 0, state: { kind: 'pending', dueAt: T0 }, lastError: null },
        { event: event('c', 'k'), createdAt: T0, attempts: 0, state: { kind: 'held' }, lastError: null },
      ],
      finished: [['z', T0]],
      outcomes: [],
    } as const;
    const o = Outbox.restore(JSON.parse(JSON.stringify(snapshot)), { random: seededRandom(1) });
    expect(['a', 'b', 'c', 'z'].map((id) => o.stateOf(id))).toEqual(['pending', 'pending', 'held', 'finished']);
    expect(o.take(T0).map((x) => x.event.id)).toEqual(['b']);
    expect(o.take(T0 + 1_000).map((x) => x.event.id)).toEqual(['a']);
    expect(o.snapshot().version).toBe(1);
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

  describe('model-based: a receiver where some events fail forever and others succeed', () => {
    /** How the receiver answers an event (whatever the attempt), while its origin is reachable. */
    type Behaviour = 'accept' | 'http500' | 'reset' | 'hang';
    const R = 'https://receiver.test';
    const O = 'https://other.test';
    const ev = (id: string, url: string, behaviour: Behaviour, order?: string) => ({ event: event(id, order, url), behaviour });
    /**
     * h1-h3 one contact's notifications, in that order; f1 a contact's notification the receiver
     * refuses, h7 the same contact's next one (held behind it); p1-p4 a report path that answers
     * HTTP 500, resets or never answers; h4 and q1 another receiver's.
     */
    const EVENTS: Record<string, { event: OutboxEvent; behaviour: Behaviour }> = {
      h1: ev('h1', `${R}/hsm`, 'accept', 'c1'),
      h2: ev('h2', `${R}/hsm`, 'accept', 'c1'),
      h3: ev('h3', `${R}/hsm`, 'accept', 'c1'),
      h5: ev('h5', `${R}/hsm`, 'accept'),
      h6: ev('h6', `${R}/campaigns`, 'accept'),
      f1: ev('f1', `${R}/hsm`, 'http500', 'c3'),
      h7: ev('h7', `${R}/hsm`, 'accept', 'c3'),
      p1: ev('p1', `${R}/report`, 'http500'),
      p2: ev('p2', `${R}/report`, 'http500'),
      p3: ev('p3', `${R}/report`, 'reset'),
      p4: ev('p4', `${R}/slow`, 'hang'),
      h4: ev('h4', `${O}/hsm`, 'accept', 'c2'),
      q1: ev('q1', `${O}/report`, 'http500'),
    };
    const IDS = Object.keys(EVENTS);
    /** Jitter fixed, so the model knows each retry time exactly. */
    const fixed = { randomBytes: (n: number) => new Uint8Array(n).fill(0x9e) };
    const options: OutboxOptions = {
      random: fixed,
      initialDelayMs: 1_000,
      maxDelayMs: 60_000,
      maxAgeMs: 10 * 60_000,
      attemptTimeoutMs: 5_000,
      probeIntervalMs: 20_000,
      rememberFinishedMs: 1e12,
      // Few events here: rule (b) from 3 known events; the window holds them all.
      healthMinEvents: 3,
      healthWindow: 20,
    };
    const delay = (failures: number) => backoffDelay({ initialMs: 1_000, factor: 2, maxMs: 60_000, random: fixed }, failures);

    interface EventModel {
      readonly createdAt: number;
      attempts: number;
      /** Its own due time while pending (undefined: held, in flight, finished). */
      due: number | undefined;
      inFlight: { attempt: number; deadline: number } | undefined;
      /** Its attempt in flight was started while its origin was down: a probe. */
      probe: boolean;
    }
    interface OriginModel {
      down: boolean;
      /** The health window: event id -> its latest attempt failed. */
      recent: Map<string, boolean>;
    }
    interface Model {
      now: number;
      enqueued: Set<string>;
      succeeded: Set<string>;
      outcomes: Map<string, string>;
      wire: DeliveryAttempt[];
      /** Ids in enqueue order. */
      order: string[];
      events: Map<string, EventModel>;
      origins: Map<string, OriginModel>;
      offline: Set<string>;
      /** Dead letters the model expects (the next retry falls after the maximum age). */
      dead: Set<string>;
    }
    interface Real {
      outbox: Outbox;
    }

    const originModel = (m: Model, id: string): OriginModel => {
      const origin = new URL(EVENTS[id]!.event.url).origin;
      let o = m.origins.get(origin);
      if (o === undefined) m.origins.set(origin, (o = { down: false, recent: new Map() }));
      return o;
    };
    const finished = (r: Real, id: string) => r.outbox.stateOf(id) === 'finished';
    /** An earlier event of its order chain is unfinished. */
    const held = (m: Model, r: Real, id: string): boolean => {
      const e = EVENTS[id]!.event;
      if (e.order === undefined) return false;
      return m.order.slice(0, m.order.indexOf(id)).some((b) => EVENTS[b]!.event.order === e.order && EVENTS[b]!.event.url === e.url && !finished(r, b));
    };

    /** The stated rule: (a) a connection-level failure, (b) at least 3 known and more than half failed. */
    function recordFailure(m: Model, id: string, connect: boolean): void {
      const o = originModel(m, id);
      o.recent.set(id, true);
      const failed = [...o.recent.values()].filter(Boolean).length;
      if (connect || (o.recent.size >= 3 && failed > o.recent.size / 2)) o.down = true;
    }
    function recordSuccess(m: Model, id: string): void {
      const o = originModel(m, id);
      if (o.down) {
        o.down = false;
        o.recent.clear();
        for (const [other, e] of m.events) if (originModel(m, other) === o) e.probe = false;
      }
      o.recent.set(id, false);
    }

    function drain(m: Model, r: Real): void {
      for (const o of r.outbox.takeOutcomes()) {
        expect(m.outcomes.has(o.event.id), `second outcome for ${o.event.id}`).toBe(false);
        expect(m.enqueued.has(o.event.id)).toBe(true);
        if (o.kind === 'delivered') expect(m.succeeded.has(o.event.id)).toBe(true);
        // A dead letter only when the model expects one, or past the maximum age (deferred for its receiver).
        else expect(m.dead.has(o.event.id) || o.at >= m.events.get(o.event.id)!.createdAt + options.maxAgeMs!, `early dead letter ${o.event.id}`).toBe(true);
        m.outcomes.set(o.event.id, o.kind);
      }
    }

    /** An event with an order key goes only once every event enqueued before it with that key has finished. */
    function checkOrder(m: Model, r: Real, e: OutboxEvent): void {
      expect(held(m, r, e.id), `${e.id} sent before an earlier event of its chain ended`).toBe(false);
    }

    /** After every step: none lost, states as the model says, receivers down exactly by the rule. */
    function check(m: Model, r: Real): void {
      const views = new Map(r.outbox.targets(m.now).map((t) => [t.origin, t]));
      for (const [origin, o] of m.origins) expect(views.get(origin)?.down ?? false, `${origin} down`).toBe(o.down);
      for (const id of m.enqueued) {
        const state = r.outbox.stateOf(id);
        expect(state).toBeDefined();
        const e = m.events.get(id)!;
        if (state === 'finished') {
          e.due = undefined;
          e.inFlight = undefined;
          continue;
        }
        if (e.inFlight !== undefined) expect(state, id).toBe('in-flight');
        else if (held(m, r, id)) expect(state, id).toBe('held');
        else expect(state, id).toBe('pending');
      }
    }

    /** Events whose chain predecessor ended since the last step are due now. */
    function unhold(m: Model, r: Real): void {
      for (const id of m.enqueued) {
        const e = m.events.get(id)!;
        if (!finished(r, id) && e.due === undefined && e.inFlight === undefined && !held(m, r, id)) e.due = m.now;
      }
    }

    class Enqueue implements fc.Command<Model, Real> {
      constructor(readonly id: string) {}
      check = () => true;
      run(m: Model, r: Real): void {
        const res = r.outbox.enqueue(EVENTS[this.id]!.event, m.now);
        expect(res.kind).toBe(m.enqueued.has(this.id) ? 'duplicate' : 'enqueued');
        if (!m.enqueued.has(this.id)) {
          m.order.push(this.id);
          m.enqueued.add(this.id);
          m.events.set(this.id, { createdAt: m.now, attempts: 0, due: held(m, r, this.id) ? undefined : m.now, inFlight: undefined, probe: false });
        }
        check(m, r);
      }
      toString = () => `enqueue(${this.id})`;
    }
    class Advance implements fc.Command<Model, Real> {
      constructor(readonly ms: number) {}
      check = () => true;
      run(m: Model, r: Real): void {
        m.now += this.ms;
        const downBefore = new Set([...m.origins].filter(([, o]) => o.down).map(([k]) => k));
        // Attempts unanswered by their deadline fail then (a response timeout: the event's, not the origin's).
        for (const [id, e] of m.events) {
          if (e.inFlight === undefined || e.inFlight.deadline > m.now || finished(r, id)) continue;
          const at = e.inFlight.deadline + delay(e.attempts);
          recordFailure(m, id, false);
          e.inFlight = undefined;
          e.probe = false;
          if (at > e.createdAt + options.maxAgeMs!) m.dead.add(id);
          else e.due = at;
        }
        const taken = r.outbox.take(m.now);
        const probes = new Map<string, number>();
        for (const a of taken) {
          const id = a.event.id;
          const e = m.events.get(id)!;
          expect(m.outcomes.has(id)).toBe(false);
          checkOrder(m, r, a.event);
          // Never before its own due time: no other event's success brings a retry forward.
          if (e.due !== undefined) expect(m.now, `${id} attempted before it was due`).toBeGreaterThanOrEqual(e.due);
          expect(a.attempt).toBe(e.attempts + 1);
          e.attempts = a.attempt;
          e.inFlight = { attempt: a.attempt, deadline: a.deadline };
          e.due = undefined;
          const origin = new URL(a.event.url).origin;
          if (downBefore.has(origin)) {
            e.probe = true;
            probes.set(origin, (probes.get(origin) ?? 0) + 1);
          }
          m.wire.push(a);
        }
        // A receiver down is probed by one attempt at a time.
        for (const origin of downBefore) {
          const inFlight = [...m.events].filter(([id, e]) => e.probe && e.inFlight !== undefined && !finished(r, id) && new URL(EVENTS[id]!.event.url).origin === origin);
          expect(inFlight.length, `probes of ${origin}`).toBeLessThanOrEqual(1);
        }
        unhold(m, r);
        check(m, r);
        // An event due is attempted unless its receiver is down by the rule or its chain holds it:
        // never deferred because another event failed.
        for (const id of m.enqueued) {
          const e = m.events.get(id)!;
          if (finished(r, id) || e.due === undefined || e.due > m.now) continue;
          expect(originModel(m, id).down, `${id} due at ${e.due - T0} not attempted at ${m.now - T0} with its receiver up`).toBe(true);
        }
      }
      toString = () => `advance(${this.ms})`;
    }
    class Settle implements fc.Command<Model, Real> {
      constructor(readonly pick: number) {}
      check = (m: Readonly<Model>) => m.wire.length > 0;
      run(m: Model, r: Real): void {
        const [a] = m.wire.splice(this.pick % m.wire.length, 1) as [DeliveryAttempt];
        const id = a.event.id;
        const e = m.events.get(id)!;
        const { behaviour } = EVENTS[id]!;
        const result: AttemptResult = m.offline.has(new URL(a.event.url).origin)
          ? { ok: false, error: 'ECONNREFUSED', connect: true }
          : behaviour === 'accept'
            ? { ok: true }
            : behaviour === 'http500'
              ? httpAttemptResult(500, 'internal error')
              : { ok: false, error: behaviour === 'reset' ? 'ECONNRESET' : 'timeout' };
        const wasFinished = finished(r, id);
        const res = r.outbox.settle(id, a.attempt, result, m.now);
        if (wasFinished) expect(res.kind).toBe('ignored');
        else if (result.ok) {
          expect(res.kind).toBe('delivered');
          m.succeeded.add(id);
          recordSuccess(m, id);
          e.inFlight = undefined;
        } else if (e.inFlight?.attempt === a.attempt) {
          recordFailure(m, id, result.connect === true);
          e.inFlight = undefined;
          e.probe = false;
          // Its own schedule: the backoff of its own failures, from now.
          const at = m.now + delay(e.attempts);
          if (at > e.createdAt + options.maxAgeMs!) {
            expect(res.kind).toBe('dead-lettered');
            m.dead.add(id);
          } else {
            expect(res).toEqual({ kind: 'retry', at });
            e.due = at;
          }
        } else expect(res.kind).toBe('ignored');
        unhold(m, r);
        check(m, r);
      }
      toString = () => `settle(${this.pick})`;
    }
    class Drop implements fc.Command<Model, Real> {
      constructor(readonly pick: number) {}
      check = (m: Readonly<Model>) => m.wire.length > 0;
      run(m: Model): void {
        m.wire.splice(this.pick % m.wire.length, 1); // the answer is lost: the attempt times out
      }
      toString = () => `drop(${this.pick})`;
    }
    class Outage implements fc.Command<Model, Real> {
      constructor(
        readonly origin: string,
        readonly offline: boolean,
      ) {}
      check = () => true;
      run(m: Model): void {
        if (this.offline) m.offline.add(this.origin);
        else m.offline.delete(this.origin);
      }
      toString = () => `outage(${this.origin}, ${this.offline})`;
    }
    class Restart implements fc.Command<Model, Real> {
      check = () => true;
      run(m: Model, r: Real): void {
        r.outbox = Outbox.restore(JSON.parse(JSON.stringify(r.outbox.snapshot())), options);
        m.wire = []; // the host's requests in flight died with it
        m.origins.clear(); // receivers start up
        for (const e of m.events.values()) e.probe = false;
        check(m, r);
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
      fc.constantFrom(...IDS).map((id) => new Enqueue(id)),
      // Steps shorter than a backoff, and longer than the probe interval.
      fc.oneof(fc.integer({ min: 0, max: 3_000 }), fc.integer({ min: 0, max: 60_000 })).map((ms) => new Advance(ms)),
      fc.nat().map((p) => new Settle(p)),
      fc.nat().map((p) => new Settle(p)),
      fc.nat().map((p) => new Drop(p)),
      fc.tuple(fc.constantFrom(R, O), fc.boolean()).map(([o, off]) => new Outage(o, off)),
      fc.constant(new Restart()),
      fc.constant(new Drain()),
    ];

    it('never loses or duplicates an outcome; attempts each event on its own schedule unless its receiver is down or its chain holds it', () => {
      fc.assert(
        fc.property(fc.commands(commands, { maxCommands: 150, size: 'max' }), (cmds) => {
          let model!: Model;
          let real!: Real;
          fc.modelRun(() => {
            model = { now: T0, enqueued: new Set(), succeeded: new Set(), outcomes: new Map(), wire: [], order: [], events: new Map(), origins: new Map(), offline: new Set(), dead: new Set() };
            real = { outbox: new Outbox(options) };
            return { model, real };
          }, cmds);
          drain(model, real);
          // Drive to the end: nothing answers any more, so every event delivers (late success) or dead-letters.
          for (let i = 0; i < 2_000 && real.outbox.size > 0; i++) {
            const wake = real.outbox.nextWakeAt();
            model.now = Math.max(model.now, wake ?? model.now);
            for (const a of real.outbox.take(model.now)) {
              checkOrder(model, real, a.event);
              real.outbox.settle(a.event.id, a.attempt, { ok: false, error: 'HTTP 502' }, model.now);
            }
          }
          for (const o of real.outbox.takeOutcomes()) {
            expect(model.outcomes.has(o.event.id), `second outcome for ${o.event.id}`).toBe(false);
            if (o.kind === 'delivered') expect(model.succeeded.has(o.event.id)).toBe(true);
            model.outcomes.set(o.event.id, o.kind);
          }
          expect(real.outbox.size).toBe(0);
          expect([...model.outcomes.keys()].sort()).toEqual([...model.enqueued].sort());
          for (const [id, kind] of model.outcomes) {
            if (!model.succeeded.has(id)) expect(kind).toBe('dead-lettered');
            if (EVENTS[id]!.behaviour !== 'accept') expect(kind).toBe('dead-lettered');
          }
        }),
      );
    });
  });
});
