/**
 * Runs of ENQUEUED notifications (src/server/enqueued-runs.ts) against the real outbox, checked
 * against a model of what was accepted and sent: every accepted contact's ENQUEUED is delivered,
 * once unless a restart came between; a contact's later notification is never delivered before
 * its ENQUEUED, nor one dead-lettered delivered later (restarts from a snapshot or from a durable
 * server's rows included); a receiver is fed at most `ahead` deep; every run ends, and a durable
 * server's rows go with it.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Outbox, type OutboxEvent, type OutboxOptions } from '../../src/events/outbox.js';
import { uuidV4, uuidV4At, UUID_V4_PATTERN } from '../../src/events/uuid.js';
import { EnqueuedRuns, hsmOrder, isReplay, isRun, runEventId, storedRun } from '../../src/server/enqueued-runs.js';
import type { EnqueuedRun, WrittenEvent } from '../../src/server/ports/persistence.js';
import { T0, seededRandom } from '../events/helpers.js';

/** Two receivers: a.test (two URLs, one origin, so they share its room) and b.test. */
const URLS = ['https://a.test/hsm', 'https://a.test/other', 'https://b.test/hsm'] as const;
const AHEAD = 5;
const options: OutboxOptions = { random: seededRandom(3), initialDelayMs: 1_000, maxDelayMs: 10_000, maxAgeMs: 30_000, rememberFinishedMs: 60_000 };

function build(run: EnqueuedRun, index: number): OutboxEvent {
  const c = run.contacts[index]!;
  return { id: runEventId(run.id, index), family: 'hsm', url: run.url, body: JSON.stringify({ status: 'ENQUEUED', id: c.id }), companyId: run.companyId, order: hsmOrder(c.id) };
}

function sent(contactId: number, url: string): OutboxEvent {
  return { id: `sent-${contactId}`, family: 'hsm', url, body: JSON.stringify({ status: 'SENT', id: contactId }), companyId: 1, order: hsmOrder(contactId) };
}

interface Model {
  now: number;
  nextId: number;
  /** Accepted contacts and the receiver their notifications go to. */
  accepted: Map<number, string>;
  sent: Set<number>;
  /** The receiver's view: first delivery of each event id, in order (it drops duplicates by id). */
  firsts: { id: number; status: string }[];
  seenIds: Set<string>;
  /** ENQUEUED dead-lettered (by contact), and when in `firsts` it happened. */
  deadEnqueued: Map<number, number>;
  runsAdded: Set<string>;
  runsDone: Set<string>;
  /** What a durable server has written: runs (as changed) and single events, until they end. */
  rows: Map<string, WrittenEvent>;
}
interface Real {
  outbox: Outbox;
  runs: EnqueuedRuns;
}

function makeRuns(m: Model, outbox: Outbox): EnqueuedRuns {
  return new EnqueuedRuns({
    outbox,
    build,
    ahead: AHEAD,
    onDone: (id) => {
      m.runsDone.add(id);
      m.rows.delete(id);
    },
    onDead: (run) => {
      if (m.rows.has(run.id)) m.rows.set(run.id, { run: JSON.parse(JSON.stringify(storedRun(run))) as EnqueuedRun });
    },
  });
}

/** Outcomes to the runs and the rows, as the server's delivery worker hands them. */
function outcomes(m: Model, r: Real): void {
  for (const o of r.outbox.takeOutcomes()) {
    const body = JSON.parse(o.event.body) as { id: number; status: string };
    if (o.kind === 'dead-lettered' && body.status === 'ENQUEUED' && !m.deadEnqueued.has(body.id)) m.deadEnqueued.set(body.id, m.firsts.length);
    if (!r.runs.ended(o.event.id, o.kind === 'dead-lettered')) m.rows.delete(o.event.id);
  }
}

class Accept implements fc.Command<Model, Real> {
  constructor(
    readonly count: number,
    readonly url: number,
  ) {}
  check = () => true;
  run(m: Model, r: Real): void {
    const url = URLS[this.url]!;
    const contacts = Array.from({ length: this.count }, (_, i) => ({ id: m.nextId + i, phone: `55119${String(m.nextId + i).padStart(8, '0')}` }));
    m.nextId += this.count + 1; // a rejected contact's id between requests
    const run: EnqueuedRun = { id: uuidV4(seededRandom(m.nextId)), companyId: 1, url, campaignId: 1, requestId: 'r', costCenterId: 0, at: m.now, contacts };
    const before = r.runs.size;
    r.runs.add(run);
    r.runs.add(run); // a run taken twice (a lease lost and claimed again) counts once
    expect(r.runs.size).toBe(before + this.count);
    for (const c of contacts) m.accepted.set(c.id, url);
    if (this.count > 0) {
      m.runsAdded.add(run.id);
      m.rows.set(run.id, { run: storedRun(run) });
    }
  }
  toString = () => `accept(${this.count}, ${URLS[this.url]})`;
}

class Feed implements fc.Command<Model, Real> {
  check = () => true;
  run(m: Model, r: Real): void {
    const before = ['https://a.test/', 'https://b.test/'].map((u) => r.outbox.unfinishedAt(u));
    r.runs.feed(m.now);
    // Fed at most `ahead` deep per receiver; what the outbox held already (later statuses) is not counted over.
    ['https://a.test/', 'https://b.test/'].forEach((u, i) => expect(r.outbox.unfinishedAt(u)).toBeLessThanOrEqual(Math.max(AHEAD, before[i]!)));
  }
  toString = () => 'feed';
}

/** The channel accepted a contact's message: its SENT is queued, after its ENQUEUED. */
class Send implements fc.Command<Model, Real> {
  constructor(readonly pick: number) {}
  check = (m: Readonly<Model>) => m.accepted.size > m.sent.size;
  run(m: Model, r: Real): void {
    const open = [...m.accepted.keys()].filter((id) => !m.sent.has(id));
    const id = open[this.pick % open.length]!;
    const event = sent(id, m.accepted.get(id)!);
    r.runs.release(id, m.now);
    r.outbox.enqueue(event, m.now);
    m.rows.set(event.id, event);
    m.sent.add(id);
  }
  toString = () => `send(${this.pick})`;
}

/** The receivers answer what is due: all succeed, or all fail (a failure marks a receiver down). */
class Deliver implements fc.Command<Model, Real> {
  constructor(
    readonly limit: number,
    readonly fail: boolean,
  ) {}
  check = () => true;
  run(m: Model, r: Real): void {
    for (const a of r.outbox.take(m.now, this.limit)) {
      if (this.fail) {
        r.outbox.settle(a.event.id, a.attempt, { ok: false, error: 'HTTP 503' }, m.now);
        continue;
      }
      if (!m.seenIds.has(a.event.id)) {
        m.seenIds.add(a.event.id);
        m.firsts.push(JSON.parse(a.event.body) as { id: number; status: string });
      }
      r.outbox.settle(a.event.id, a.attempt, { ok: true }, m.now);
    }
    outcomes(m, r);
  }
  toString = () => `deliver(${this.limit}${this.fail ? ', failing' : ''})`;
}

class Advance implements fc.Command<Model, Real> {
  constructor(readonly ms: number) {}
  check = () => true;
  run(m: Model): void {
    m.now += this.ms;
  }
  toString = () => `advance(${this.ms})`;
}

/**
 * A restart. `snapshot`: from a snapshot file (the outbox's snapshot and the runs with their
 * progress). `durable`: from what a durable server wrote (a fresh outbox; runs and events read back,
 * runs first, each event's contact's ENQUEUED released before it, as Notifier.written does).
 */
class Restart implements fc.Command<Model, Real> {
  constructor(readonly kind: 'snapshot' | 'durable') {}
  check = () => true;
  run(m: Model, r: Real): void {
    outcomes(m, r);
    if (this.kind === 'snapshot') {
      const runs = JSON.parse(JSON.stringify(r.runs.runs())) as EnqueuedRun[];
      r.outbox = Outbox.restore(JSON.parse(JSON.stringify(r.outbox.snapshot())), options);
      r.runs = makeRuns(m, r.outbox);
      for (const run of runs) r.runs.add(run);
      return;
    }
    const rows = JSON.parse(JSON.stringify([...m.rows.values()])) as WrittenEvent[];
    r.outbox = new Outbox(options);
    r.runs = makeRuns(m, r.outbox);
    for (const row of rows) if (isRun(row)) r.runs.add(row.run);
    for (const row of rows) {
      // This model writes no replayed dead letters.
      if (isRun(row) || isReplay(row)) continue;
      r.runs.releaseOrder(row.order, m.now);
      r.outbox.enqueue(row, m.now);
    }
  }
  toString = () => `restart(${this.kind})`;
}

const commands = [
  fc.tuple(fc.integer({ min: 0, max: 12 }), fc.integer({ min: 0, max: URLS.length - 1 })).map(([n, u]) => new Accept(n, u)),
  fc.constant(new Feed()),
  fc.nat().map((p) => new Send(p)),
  fc.tuple(fc.integer({ min: 1, max: 8 }), fc.boolean()).map(([n, f]) => new Deliver(n, f)),
  fc.integer({ min: 0, max: 20_000 }).map((ms) => new Advance(ms)),
  fc.constant(new Advance(31_000)),
  fc.constantFrom<'snapshot' | 'durable'>('snapshot', 'durable').map((k) => new Restart(k)),
];

describe('ENQUEUED runs', () => {
  it('deliver every accepted contact ENQUEUED first or dead-letter it for good, feed a receiver at most `ahead` deep, and end each run', () => {
    fc.assert(
      fc.property(fc.commands(commands, { maxCommands: 80 }), (cmds) => {
        let model!: Model;
        let real!: Real;
        fc.modelRun(() => {
          model = { now: T0, nextId: 1, accepted: new Map(), sent: new Set(), firsts: [], seenIds: new Set(), deadEnqueued: new Map(), runsAdded: new Set(), runsDone: new Set(), rows: new Map() };
          const outbox = new Outbox(options);
          real = { outbox, runs: makeRuns(model, outbox) };
          return { model, real };
        }, cmds);
        // Drive to the end: the receivers answer everything.
        for (let i = 0; i < 10_000 && (real.runs.size > 0 || real.outbox.size > 0); i++) {
          real.runs.feed(model.now);
          const wake = real.outbox.nextWakeAt();
          if (wake !== null) model.now = Math.max(model.now, wake);
          new Deliver(50, false).run(model, real);
        }
        expect(real.runs.size).toBe(0);
        expect(real.outbox.size).toBe(0);
        const firstAt = (id: number, status: string) => model.firsts.findIndex((d) => d.id === id && d.status === status);
        for (const [id] of model.accepted) {
          const enqueued = firstAt(id, 'ENQUEUED');
          const dead = model.deadEnqueued.get(id);
          // Delivered, or dead-lettered and never delivered after.
          expect(enqueued >= 0 || dead !== undefined, `contact ${id}: no ENQUEUED delivered nor dead-lettered`).toBe(true);
          if (dead !== undefined && enqueued >= 0) expect(enqueued, `contact ${id}: ENQUEUED delivered after it was dead-lettered`).toBeLessThan(dead);
          const sentAt = firstAt(id, 'SENT');
          if (sentAt >= 0 && enqueued >= 0) expect(enqueued, `contact ${id}: SENT before ENQUEUED`).toBeLessThan(sentAt);
        }
        // Every run ended (in this life or before a restart), and a durable server keeps no row of it.
        expect(real.runs.runs()).toEqual([]);
        for (const id of model.runsAdded) expect(model.runsDone.has(id), `run ${id} never ended`).toBe(true);
        expect([...model.rows.keys()]).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('never build again an ENQUEUED dead-lettered before a restart from written rows', () => {
    const m = { rows: new Map<string, WrittenEvent>(), runsDone: new Set<string>() } as unknown as Model;
    let outbox = new Outbox(options);
    let runs = makeRuns(m, outbox);
    const contacts = Array.from({ length: AHEAD + 3 }, (_, i) => ({ id: i + 1, phone: `551190000000${i}` }));
    const run: EnqueuedRun = { id: uuidV4(seededRandom(7)), companyId: 1, url: URLS[2], campaignId: 1, requestId: 'r', costCenterId: 0, at: T0, contacts };
    m.rows.set(run.id, { run });
    runs.add(run);
    runs.feed(T0);
    // The receiver refuses every attempt until the first `AHEAD` are dead-lettered; the rest is not built yet.
    for (let now = T0; now < T0 + 40_000; now += 1_000) {
      for (const a of outbox.take(now)) outbox.settle(a.event.id, a.attempt, { ok: false, error: 'HTTP 500' }, now);
      for (const o of outbox.takeOutcomes()) runs.ended(o.event.id, o.kind === 'dead-lettered');
    }
    const row = m.rows.get(run.id) as { run: EnqueuedRun };
    expect(row.run.dead?.slice().sort()).toEqual([0, 1, 2, 3, 4]);
    // Restart from the rows: a fresh outbox; only the three not built are built.
    outbox = new Outbox(options);
    runs = makeRuns(m, outbox);
    runs.add(JSON.parse(JSON.stringify(row.run)) as EnqueuedRun);
    expect(runs.size).toBe(3);
    runs.feed(T0 + 40_000);
    expect(outbox.take(T0 + 40_000).map((a) => a.event.id)).toEqual([5, 6, 7].map((i) => runEventId(run.id, i)));
  });

  it('end a run whose every ENQUEUED was built early, while its receiver has no room', () => {
    const m = { rows: new Map<string, WrittenEvent>(), runsDone: new Set<string>() } as unknown as Model;
    const outbox = new Outbox(options);
    const runs = makeRuns(m, outbox);
    // The receiver holds `AHEAD` other events unanswered: no room to feed.
    for (let i = 0; i < AHEAD; i++) outbox.enqueue(sent(100 + i, URLS[2]), T0);
    const others = outbox.take(T0);
    const run: EnqueuedRun = {
      id: uuidV4(seededRandom(8)),
      companyId: 1,
      url: URLS[2],
      campaignId: 1,
      requestId: 'r',
      costCenterId: 0,
      at: T0,
      contacts: [1, 2, 3].map((id) => ({ id, phone: `5511900000${id}` })),
    };
    runs.add(run);
    for (const id of [3, 1, 2]) runs.release(id, T0);
    expect(runs.size).toBe(0);
    runs.feed(T0);
    for (const a of outbox.take(T0)) outbox.settle(a.event.id, a.attempt, { ok: true }, T0);
    for (const o of outbox.takeOutcomes()) runs.ended(o.event.id, false);
    expect(m.runsDone.has(run.id)).toBe(true);
    expect(runs.runs()).toEqual([]);
    expect(others).toHaveLength(AHEAD);
  });

  it('derive each notification id from the run id: distinct, UUID v4, the same when built again', () => {
    const base = uuidV4(seededRandom(9));
    const ids = Array.from({ length: 10_000 }, (_, i) => runEventId(base, i));
    expect(new Set([base, ...ids]).size).toBe(ids.length + 1); // never the run's own id, which keys its row
    for (const id of ids) expect(id).toMatch(UUID_V4_PATTERN);
    expect(uuidV4At(base, 0)).toBe(base);
    expect(runEventId(base, 77)).toBe(ids[77]);
  });

  it('keep of a contact, when written, only what its ENQUEUED says', () => {
    const run: EnqueuedRun = {
      id: uuidV4(seededRandom(1)),
      companyId: 1,
      url: URLS[0],
      campaignId: 2,
      requestId: 'r',
      costCenterId: 0,
      at: T0,
      contacts: [{ id: 5, phone: '5511999990000', data: { a: 'b' }, contract: 'c', variables: ['x'], requestId: 'r', companyId: 1 } as never],
    };
    expect(storedRun(run).contacts).toEqual([{ id: 5, phone: '5511999990000', data: { a: 'b' }, contract: 'c' }]);
  });
});
