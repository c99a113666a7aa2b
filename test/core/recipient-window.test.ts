/**
 * The portfolio's limit of distinct recipients in a moving 24 h (src/core/limits/recipient-window.ts):
 * examples, a property over random send streams (the distinct recipients of every 24 h span stay
 * within the limit, checked from the record of what was sent), and a model-based test against a
 * log of sends counted by brute force.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RecipientWindow } from '../../src/core/limits/recipient-window.js';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const RECIPIENTS = ['5511900000001', '5511900000002', '5511900000003', '5511900000004', '5511900000005', '5511900000006', '5511900000007'];

describe('RecipientWindow', () => {
  it('charges a new recipient one, a recipient in the span nothing, and refuses a new one without room', () => {
    const w = new RecipientWindow(2);
    expect(w.charge('a', 0)).toBe(true);
    expect(w.charge('a', 10)).toBe(true);
    expect(w.charge('b', 20)).toBe(true);
    expect(w.size(20)).toBe(2);
    expect(w.charge('c', 30)).toBe(false);
    expect(w.charge('a', 40)).toBe(true);
    expect(w.room(40)).toBe(0);
    // b's only send was at 20: it leaves the span at 20 + 24 h exactly; a's last send was at 40.
    expect(w.nextRoomAt(40)).toBe(20 + DAY);
    expect(w.charge('c', 20 + DAY - 1)).toBe(false);
    expect(w.charge('c', 20 + DAY)).toBe(true);
    expect(w.has('a', 40 + DAY - 1)).toBe(true);
    expect(w.has('a', 40 + DAY)).toBe(false);
  });

  it('release gives back the charge that made a recipient new, only while it is the last send', () => {
    const w = new RecipientWindow(1);
    expect(w.charge('a', 100)).toBe(true);
    w.release('a', 100);
    expect(w.size(100)).toBe(0);
    expect(w.charge('b', 200)).toBe(true);
    expect(w.charge('b', 300)).toBe(true);
    // The send at 300 found b in the span: b counted already, so releasing it changes nothing.
    w.release('b', 300);
    expect(w.size(300)).toBe(1);
    // Not the last send any more.
    w.release('b', 200);
    expect(w.size(300)).toBe(1);
  });

  it('anonymous charges each count as a new recipient', () => {
    const w = new RecipientWindow(3);
    expect([w.chargeAnonymous(0), w.chargeAnonymous(0), w.charge('a', 0), w.chargeAnonymous(0)]).toEqual([true, true, true, false]);
    const copy = new RecipientWindow(3);
    copy.restore(JSON.parse(JSON.stringify(w.snapshot())), 1);
    expect(copy.size(1)).toBe(3);
    // Keys are not reused after a restore: the window is still full.
    expect(copy.chargeAnonymous(2)).toBe(false);
    expect(copy.chargeAnonymous(DAY)).toBe(true);
  });

  it('a lowered limit keeps counting the recipients already in the span', () => {
    const w = new RecipientWindow(3);
    for (const r of ['a', 'b', 'c']) w.charge(r, 0);
    w.charge('b', HOUR);
    w.setLimit(1);
    expect(w.room(HOUR)).toBe(0);
    expect(w.charge('a', HOUR)).toBe(true);
    // Three in the span, one allowed: the oldest last sends must leave, c (0) and b (1 h); a was refreshed.
    expect(w.nextRoomAt(HOUR)).toBe(DAY + HOUR);
    expect(() => w.setLimit(-1)).toThrow(/0 or more/);
    expect(() => new RecipientWindow(1.5)).toThrow(/whole number/);
  });

  it('never counts more distinct recipients in any 24 h than its limit, over random streams with releases', () => {
    const op = fc.record({
      step: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: HOUR }), fc.integer({ min: 20 * HOUR, max: 25 * HOUR })),
      recipient: fc.integer({ min: 0, max: RECIPIENTS.length - 1 }),
      release: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 5 }), fc.array(op, { maxLength: 200 }), (limit, ops) => {
        const w = new RecipientWindow(limit);
        // What was sent: a refused attempt is released and leaves the record.
        const sent: { at: number; to: string }[] = [];
        let now = 0;
        for (const o of ops) {
          now += o.step;
          const to = RECIPIENTS[o.recipient]!;
          if (!w.charge(to, now)) continue;
          const send = { at: now, to };
          sent.push(send);
          if (o.release) {
            const inSpan = sent.some((s) => s !== send && s.to === to && s.at > now - DAY);
            w.release(to, now);
            // A release gives back only a send that made its recipient new; one that found it in the span stays.
            if (!inSpan) sent.splice(sent.indexOf(send), 1);
          }
        }
        // Every span (t - 24 h, t] ending at a send holds at most `limit` distinct recipients.
        for (const end of sent) {
          const distinct = new Set(sent.filter((s) => s.at > end.at - DAY && s.at <= end.at).map((s) => s.to));
          expect(distinct.size).toBeLessThanOrEqual(limit);
        }
      }),
      { numRuns: 300 },
    );
  });
});

// ------------------------------------------------------------------ model-based

interface Model {
  now: number;
  limit: number;
  /** Every send, in order; `madeNew`: no send of the recipient was in the span when it was charged. */
  sends: { to: string; at: number; madeNew: boolean }[];
}

interface Real {
  w: RecipientWindow;
  /** Rows a durable host keeps from `takeChanges`: one per recipient, never pruned here. */
  rows: Map<string, readonly [number, boolean]>;
}

/** Takes the window's changes into the rows, as a durable host does after each step. */
function keepRows(r: Real, now: number): void {
  const c = r.w.takeChanges(now);
  for (const key of c.removed) r.rows.delete(key);
  for (const [key, at, madeNew] of c.recipients) r.rows.set(key, [at, madeNew]);
}

function inSpan(m: Model, now: number): Set<string> {
  return new Set(m.sends.filter((s) => s.at > now - DAY && s.at <= now).map((s) => s.to));
}

function lastSend(m: Model, to: string): { to: string; at: number; madeNew: boolean } | undefined {
  for (let i = m.sends.length - 1; i >= 0; i--) if (m.sends[i]!.to === to) return m.sends[i];
  return undefined;
}

/** First t >= now with room for a new recipient, by trying every moment a send leaves the span. */
function modelNextRoomAt(m: Model): number {
  if (m.limit === 0) return Infinity;
  const candidates = [m.now, ...m.sends.map((s) => s.at + DAY).filter((t) => t > m.now)].sort((a, b) => a - b);
  for (const t of candidates) if (inSpan(m, t).size < m.limit) return t;
  return Infinity;
}

function check(m: Model, r: Real): void {
  keepRows(r, m.now);
  const span = inSpan(m, m.now);
  expect(r.w.size(m.now)).toBe(span.size);
  expect(r.w.room(m.now)).toBe(Math.max(0, m.limit - span.size));
  for (const to of RECIPIENTS) expect(r.w.has(to, m.now)).toBe(span.has(to));
  expect(r.w.nextRoomAt(m.now)).toBe(modelNextRoomAt(m));
}

class Advance implements fc.Command<Model, Real> {
  constructor(readonly ms: number) {}
  check = () => true;
  run(m: Model, r: Real): void {
    m.now += this.ms;
    check(m, r);
  }
  toString = () => `advance(${this.ms})`;
}

class Charge implements fc.Command<Model, Real> {
  constructor(readonly to: string) {}
  check = () => true;
  run(m: Model, r: Real): void {
    const span = inSpan(m, m.now);
    const known = span.has(this.to);
    const ok = known || span.size < m.limit;
    expect(r.w.charge(this.to, m.now)).toBe(ok);
    if (ok) m.sends.push({ to: this.to, at: m.now, madeNew: !known });
    check(m, r);
  }
  toString = () => `charge(${this.to})`;
}

class Release implements fc.Command<Model, Real> {
  /** `back`: release the charge made this many ms ago. */
  constructor(
    readonly to: string,
    readonly back: number,
  ) {}
  check = () => true;
  run(m: Model, r: Real): void {
    const at = m.now - this.back;
    const last = lastSend(m, this.to);
    if (last !== undefined && last.at === at && last.madeNew && last.at > m.now - DAY) m.sends.splice(m.sends.lastIndexOf(last), 1);
    r.w.release(this.to, at);
    check(m, r);
  }
  toString = () => `release(${this.to}, -${this.back})`;
}

class SetLimit implements fc.Command<Model, Real> {
  constructor(readonly limit: number) {}
  check = () => true;
  run(m: Model, r: Real): void {
    m.limit = this.limit;
    r.w.setLimit(this.limit);
    check(m, r);
  }
  toString = () => `setLimit(${this.limit})`;
}

class Restart implements fc.Command<Model, Real> {
  check = () => true;
  run(m: Model, r: Real): void {
    const copy = new RecipientWindow(m.limit);
    copy.track();
    copy.restore(JSON.parse(JSON.stringify(r.w.snapshot())), m.now);
    r.w = copy;
    check(m, r);
  }
  toString = () => 'restart';
}

/** A restart from the rows (recipients in any order, old ones included): the restore sorts and drops. */
class RestartFromRows implements fc.Command<Model, Real> {
  check = () => true;
  run(m: Model, r: Real): void {
    const copy = new RecipientWindow(m.limit);
    copy.track();
    copy.restore({ limit: m.limit, anonymous: r.w.anonymous, recipients: [...r.rows].map(([key, [at, madeNew]]) => [key, at, madeNew] as const).reverse() }, m.now);
    r.w = copy;
    check(m, r);
  }
  toString = () => 'restartFromRows';
}

describe('RecipientWindow against a log of sends', () => {
  it('answers size, room, membership and the next room exactly as brute force over the log', () => {
    const to = fc.constantFrom(...RECIPIENTS);
    const commands = fc.commands(
      [
        fc.oneof(fc.constant(0), fc.integer({ min: 1, max: HOUR }), fc.integer({ min: 22 * HOUR, max: 26 * HOUR }), fc.constant(DAY)).map((ms) => new Advance(ms)),
        to.map((r) => new Charge(r)),
        to.map((r) => new Charge(r)),
        fc.tuple(to, fc.constantFrom(0, 0, 1, HOUR)).map(([r, back]) => new Release(r, back)),
        fc.integer({ min: 0, max: 6 }).map((l) => new SetLimit(l)),
        fc.constant(new Restart()),
        fc.constant(new RestartFromRows()),
      ],
      { maxCommands: 150 },
    );
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 6 }), commands, (limit, cmds) => {
        const model: Model = { now: 0, limit, sends: [] };
        const w = new RecipientWindow(limit);
        w.track();
        fc.modelRun(() => ({ model, real: { w, rows: new Map() } }), cmds);
      }),
      { numRuns: 300 },
    );
  });
});
