/**
 * Runs of ENQUEUED notifications (src/server/enqueued-runs.ts) against the real outbox, checked
 * against a model of what was accepted and sent: every accepted contact's ENQUEUED is delivered,
 * once unless a restart came between; a contact's later notification is never delivered before
 * its ENQUEUED; a receiver is fed at most `ahead` deep; a run ends once, after its notifications.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Outbox, type OutboxEvent, type OutboxOptions } from '../../src/events/outbox.js';
import { uuidV4, uuidV4At, UUID_V4_PATTERN } from '../../src/events/uuid.js';
import { EnqueuedRuns, hsmOrder, storedRun, type EnqueuedRun } from '../../src/server/enqueued-runs.js';
import { T0, seededRandom } from '../events/helpers.js';

const URLS = ['https://a.test/hsm', 'https://b.test/hsm'] as const;
const AHEAD = 5;
const options: OutboxOptions = { random: seededRandom(3), initialDelayMs: 1_000, maxDelayMs: 10_000, rememberFinishedMs: 1e12 };

function build(run: EnqueuedRun, index: number): OutboxEvent {
  const c = run.contacts[index]!;
  return { id: uuidV4At(run.id, index), family: 'hsm', url: run.url, body: JSON.stringify({ status: 'ENQUEUED', id: c.id }), companyId: run.companyId, order: hsmOrder(c.id) };
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
  /** Deliveries, in order: contact id and status. */
  delivered: { id: number; status: string }[];
  runsAdded: Set<string>;
  runsDone: string[];
  restarted: boolean;
}
interface Real {
  outbox: Outbox;
  runs: EnqueuedRuns;
}

function makeRuns(m: Model, outbox: Outbox): EnqueuedRuns {
  return new EnqueuedRuns({ outbox, build, ahead: AHEAD, onDone: (id) => m.runsDone.push(id) });
}

/** Outcomes to the runs, as the server's delivery worker hands them. */
function outcomes(r: Real): void {
  for (const o of r.outbox.takeOutcomes()) r.runs.ended(o.event.id);
}

class Accept implements fc.Command<Model, Real> {
  constructor(
    readonly count: number,
    readonly url: 0 | 1,
  ) {}
  check = () => true;
  run(m: Model, r: Real): void {
    const url = URLS[this.url];
    const contacts = Array.from({ length: this.count }, (_, i) => ({ id: m.nextId + i, phone: `55119${String(m.nextId + i).padStart(8, '0')}` }));
    m.nextId += this.count + 1; // a rejected contact's id between requests
    const run: EnqueuedRun = { id: uuidV4(seededRandom(m.nextId)), companyId: 1, url, campaignId: 1, requestId: 'r', costCenterId: 0, at: m.now, contacts };
    const before = r.runs.size;
    r.runs.add(run);
    expect(r.runs.size).toBe(before + this.count);
    for (const c of contacts) m.accepted.set(c.id, url);
    if (this.count > 0) m.runsAdded.add(run.id);
  }
  toString = () => `accept(${this.count}, ${URLS[this.url]})`;
}

class Feed implements fc.Command<Model, Real> {
  check = () => true;
  run(m: Model, r: Real): void {
    const before = URLS.map((u) => r.outbox.unfinishedAt(u));
    r.runs.feed(m.now);
    // Fed at most `ahead` deep; what the outbox held already (later statuses) is not counted over.
    URLS.forEach((u, i) => expect(r.outbox.unfinishedAt(u)).toBeLessThanOrEqual(Math.max(AHEAD, before[i]!)));
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
    r.runs.release(id, m.now);
    r.outbox.enqueue(sent(id, m.accepted.get(id)!), m.now);
    m.sent.add(id);
  }
  toString = () => `send(${this.pick})`;
}

/** The receivers answer what is due: some succeed, some fail (a failure marks a receiver down). */
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
      const body = JSON.parse(a.event.body) as { id: number; status: string };
      m.delivered.push(body);
      r.outbox.settle(a.event.id, a.attempt, { ok: true }, m.now);
    }
    outcomes(r);
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

/** A restart from a snapshot: the outbox's and the runs' (runs build again what they had built). */
class Restart implements fc.Command<Model, Real> {
  check = () => true;
  run(m: Model, r: Real): void {
    outcomes(r);
    const runs = JSON.parse(JSON.stringify(r.runs.runs())) as EnqueuedRun[];
    r.outbox = Outbox.restore(JSON.parse(JSON.stringify(r.outbox.snapshot())), options);
    r.runs = makeRuns(m, r.outbox);
    for (const run of runs) r.runs.add(run);
    m.restarted = true;
  }
  toString = () => 'restart';
}

const commands = [
  fc.tuple(fc.integer({ min: 0, max: 12 }), fc.constantFrom<0 | 1>(0, 1)).map(([n, u]) => new Accept(n, u)),
  fc.constant(new Feed()),
  fc.nat().map((p) => new Send(p)),
  fc.tuple(fc.integer({ min: 1, max: 8 }), fc.boolean()).map(([n, f]) => new Deliver(n, f)),
  fc.integer({ min: 0, max: 20_000 }).map((ms) => new Advance(ms)),
  fc.constant(new Restart()),
];

describe('ENQUEUED runs', () => {
  it('deliver every accepted contact ENQUEUED first, feed a receiver at most `ahead` deep, and end each run once', () => {
    fc.assert(
      fc.property(fc.commands(commands, { maxCommands: 60 }), (cmds) => {
        let model!: Model;
        let real!: Real;
        fc.modelRun(() => {
          model = { now: T0, nextId: 1, accepted: new Map(), sent: new Set(), delivered: [], runsAdded: new Set(), runsDone: [], restarted: false };
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
        const seen = new Map<number, string[]>();
        for (const d of model.delivered) seen.set(d.id, [...(seen.get(d.id) ?? []), d.status]);
        for (const [id] of model.accepted) {
          const statuses = seen.get(id) ?? [];
          expect(statuses[0], `contact ${id}: ${statuses.join(' ')}`).toBe('ENQUEUED');
          if (!model.restarted)
            expect(
              statuses.filter((s) => s === 'ENQUEUED'),
              `contact ${id}`,
            ).toHaveLength(1);
          if (model.sent.has(id)) expect(statuses.indexOf('SENT'), `contact ${id}: ${statuses.join(' ')}`).toBeGreaterThan(statuses.indexOf('ENQUEUED'));
        }
        if (!model.restarted) {
          expect(model.runsDone.slice().sort()).toEqual([...model.runsAdded].sort());
          expect(new Set(model.runsDone).size).toBe(model.runsDone.length);
        }
      }),
    );
  });

  it('derive each notification id from the run id: distinct, UUID v4, the same when built again', () => {
    const base = uuidV4(seededRandom(9));
    const ids = Array.from({ length: 10_000 }, (_, i) => uuidV4At(base, i));
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(UUID_V4_PATTERN);
    expect(uuidV4At(base, 0)).toBe(base);
    expect(uuidV4At(base, 77)).toBe(ids[77]);
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
