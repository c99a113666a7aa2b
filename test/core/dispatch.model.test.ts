/**
 * Model-based test of the dispatch queue: random command sequences (submits to several businesses,
 * types and campaigns with deadlines and retries; polls with limits; every kind of report, late and
 * duplicate ones included; the clock; pauses of numbers and templates; snapshot and restore at any
 * point) run against the engine and a small reference model of each contact's state.
 *
 * After every command: no exception; every handed-out message carries a template of its own
 * business and type, rendered with its own contact's values, on an active number of its business;
 * each contact is in exactly one state, the model's; `stats()`, `queueStatus()` and
 * `submissionStatus()` agree with the model (so with each other); each contact's final outcome is
 * reported exactly once; no number exceeds a window (checked from the send log); `nextWakeAt()` is
 * `now` exactly when `poll()` hands something out and never later than a retry or deadline due.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  MAX_BACKOFF_MS,
  MAX_TRANSPORT_ATTEMPTS,
  ManualClock,
  actionForCode,
  applyChanges,
  createEngine,
  emptyRows,
  snapshotFromRows,
  type EngineRows,
  type ContactOutcome,
  type Engine,
  type ReportResult,
  type SendOutcome,
  type TerminalState,
} from '../../src/index.js';
import { type Send, windowViolation } from './window-check.js';

const HOUR = 3_600_000;

const NUMBERS = [
  { phone: '5511990000001', business: 1, throughputPerHour: 30, messagingLimit24h: 60 },
  { phone: '5511990000002', business: 1, throughputPerHour: 20, messagingLimit24h: 40, messagesPerSecond: 2 },
  { phone: '5521990000003', business: 2, throughputPerHour: 10, messagingLimit24h: 15 },
];
const TEMPLATES = [
  { id: 100, business: 1, text: 'Bill {{1}}' },
  { id: 101, business: 1, text: 'Invoice for {{1}}' },
  { id: 200, business: 1, text: 'Welcome {{1}}' },
  { id: 300, business: 2, text: 'Hi {{1}}, {{2}} is due' },
  { id: 301, business: 2, text: 'Alert {{2}} for {{1}}' },
];
/** (business, type) -> its templates; type 10 exists in both businesses with different templates. */
const POOLS = [
  { businessId: 1, typeId: 10, templates: [100, 101], placeholders: 1 },
  { businessId: 1, typeId: 20, templates: [200], placeholders: 1 },
  { businessId: 2, typeId: 10, templates: [300], placeholders: 2 },
  { businessId: 2, typeId: 30, templates: [301], placeholders: 2 },
];

function fleet() {
  return {
    businesses: [1, 2].map((id) => ({
      id,
      name: `B${id}`,
      numbers: NUMBERS.filter((n) => n.business === id).map(({ business: _, ...n }) => ({ ...n, status: 'active' })),
      templateTypes: POOLS.filter((p) => p.businessId === id).map((p) => ({ id: p.typeId, name: `t${p.typeId}`, templateIds: p.templates })),
    })),
    templates: TEMPLATES.map((t) => ({ id: t.id, name: `tpl${t.id}`, text: t.text, businessIds: [t.business], status: 'active' })),
  };
}

// ------------------------------------------------------------------ the model

type MState = 'queued' | 'waiting' | 'inflight' | TerminalState;
interface MContact {
  state: MState;
  retries: number;
  handouts: number;
  /** In flight at a restart: the next hand-out repeats the last message id. */
  resend: boolean;
  retryAt: number;
  /** Failures that used no retry (transport, pair rate). */
  attempts: number;
  /** A transport failure was seen: every later such try repeats the id. */
  unknown?: boolean;
  readonly phone: string;
  readonly variables: string[];
}
interface MSubmission {
  readonly id: string;
  readonly seq: number;
  readonly pool: (typeof POOLS)[number];
  readonly deadline: number | undefined;
  readonly maxRetries: number;
  readonly retryInterval: number;
  readonly contacts: MContact[];
}
interface Model {
  now: number;
  /** `nextWakeAt()` as asked first thing after the last command (before any view), for the next poll. */
  wake: number | null;
  nextSeq: number;
  readonly subs: MSubmission[];
  /** Every hand-out ever made, for late and duplicate reports. */
  readonly handouts: { readonly messageId: string; readonly seq: number; readonly index: number; readonly handout: number }[];
}

const FINAL: readonly MState[] = ['sent', 'failed', 'expired', 'rejected'];
const isFinal = (s: MState) => FINAL.includes(s);
const finished = (s: MSubmission) => s.contacts.every((c) => isFinal(c.state));

/** What falls due by `now`: retries first, then deadlines (the engine's order). */
function due(m: Model): void {
  for (const s of m.subs) {
    for (const c of s.contacts) if (c.state === 'waiting' && c.retryAt <= m.now) c.state = 'queued';
    if (s.deadline !== undefined && s.deadline <= m.now) for (const c of s.contacts) if (c.state === 'queued' || c.state === 'waiting') c.state = 'expired';
  }
}

function counts(contacts: readonly MContact[]) {
  const c = { submitted: contacts.length, queued: 0, waitingRetry: 0, inFlight: 0, sent: 0, failed: 0, expired: 0, rejected: 0 };
  for (const x of contacts) {
    if (x.state === 'queued') c.queued++;
    else if (x.state === 'waiting') c.waitingRetry++;
    else if (x.state === 'inflight') c.inFlight++;
    else c[x.state]++;
  }
  return c;
}

/** The model's answer to a report, applied to the model. */
function modelReport(m: Model, seq: number, index: number, handout: number, outcome: SendOutcome): ReportResult {
  if (seq >= m.nextSeq) return { ok: false, reason: 'unknown-message' };
  const s = m.subs.find((x) => x.seq === seq)!;
  if (finished(s)) return { ok: false, reason: 'already-final' };
  const c = s.contacts[index];
  if (c === undefined || handout >= c.handouts) return { ok: false, reason: 'unknown-message' };
  if (isFinal(c.state)) return { ok: false, reason: 'already-final' };
  const current = c.state === 'inflight' && handout === c.handouts - 1;
  if (!current) {
    if (outcome.status !== 'sent') return { ok: false, reason: 'stale-hand-out' };
    c.state = 'sent';
    return { ok: true, effect: 'sent' };
  }
  if (outcome.status === 'sent' || outcome.status === 'expired') {
    c.state = outcome.status;
    return { ok: true, effect: outcome.status };
  }
  const action = actionForCode(outcome.code);
  switch (action.kind) {
    case 'requeue':
    case 'number-out':
    case 'template-out': {
      if (s.deadline !== undefined && s.deadline <= m.now) {
        c.state = 'expired';
        return { ok: true, effect: 'expired' };
      }
      c.state = 'queued';
      // A contact whose try had an unknown outcome keeps its message id through a failover too.
      if (c.unknown === true) c.resend = true;
      return { ok: true, effect: action.kind === 'requeue' ? 'requeued' : 'failover' };
    }
    case 'transport':
    case 'recipient-wait': {
      if (c.attempts + 1 >= MAX_TRANSPORT_ATTEMPTS) {
        c.state = 'failed';
        return { ok: true, effect: 'failed' };
      }
      const base = action.kind === 'transport' ? action.backoffMs : action.waitMs;
      const at = m.now + Math.min(base * 2 ** c.attempts, Math.max(base, MAX_BACKOFF_MS));
      if (s.deadline !== undefined && at >= s.deadline) {
        c.state = 'expired';
        return { ok: true, effect: 'expired' };
      }
      c.attempts++;
      c.state = 'waiting';
      c.retryAt = at;
      // A transport failure goes again under the same message id, and so does every later try that
      // uses no retry (a pair rate limit met by the repeat may be the first try's own message).
      if (action.kind === 'transport') c.unknown = true;
      if (c.unknown === true) c.resend = true;
      return { ok: true, effect: 'requeued', retryAt: at };
    }
    case 'give-up':
      c.state = 'failed';
      return { ok: true, effect: 'failed' };
    case 'retry': {
      if (c.retries >= s.maxRetries) {
        c.state = 'failed';
        return { ok: true, effect: 'failed' };
      }
      const at = m.now + Math.max(s.retryInterval, action.notBeforeMs);
      if (s.deadline !== undefined && at >= s.deadline) {
        c.state = 'expired';
        return { ok: true, effect: 'expired' };
      }
      c.retries++;
      c.state = 'waiting';
      c.retryAt = at;
      return { ok: true, effect: 'retry-scheduled', retryAt: at };
    }
  }
}

// ------------------------------------------------------------------ the real thing

interface Real {
  engine: Engine;
  /** What a durable host keeps: `takeChanges()` applied after every command. */
  readonly rows: EngineRows;
  readonly clock: ManualClock;
  readonly sends: Map<string, Send[]>;
  /** The number and time of each message id's latest hand-out: a refusal takes that send back out of `sends`. */
  readonly flights: Map<string, { readonly phone: string; readonly at: number }>;
  readonly outcomes: Map<string, ContactOutcome>;
  /** Steps so far: every other one takes its outcomes as rows (`takeOutcomesInto`). */
  steps: number;
  /** Steps whose changes the host leaves for a later one (a host that writes its rows every few steps). */
  held: number;
  /** Contacts kept packed from this many queued (0: always). */
  readonly packContactsFrom: number | undefined;
}

function render(templateId: number, values: readonly string[]): string {
  return TEMPLATES.find((t) => t.id === templateId)!.text.replace(/\{\{(\d+)\}\}/g, (_, k: string) => values[Number(k) - 1]!);
}

/** Everything that must hold between commands. */
function checkAll(m: Model, r: Real): void {
  due(m);
  const wake = r.engine.nextWakeAt();
  m.wake = wake;
  const all = m.subs.flatMap((s) => s.contacts);
  expect(r.engine.stats()).toEqual(counts(all));
  for (const p of POOLS) {
    const mine = m.subs.filter((s) => s.pool === p).flatMap((s) => s.contacts);
    const q = r.engine.queueStatus(p.businessId, p.typeId);
    expect({ queued: q.queued, waitingRetry: q.waitingRetry }).toEqual({ queued: counts(mine).queued, waitingRetry: counts(mine).waitingRetry });
  }
  for (const s of m.subs) {
    const { blocked: _b, retryAt: _r, ...status } = r.engine.submissionStatus(s.id);
    expect(status).toEqual({ submissionId: s.id, finished: finished(s), ...counts(s.contacts) });
  }
  // The end of a host's step: outcomes handled, then the step's changes written (the rows).
  // Every other step through the rows of an outcome batch: the same outcomes, each once.
  const batch = r.engine.createOutcomeBatch(1);
  const taken = r.steps++ % 2 === 0 ? r.engine.takeOutcomes() : Array.from({ length: r.engine.takeOutcomesInto(batch) }, (_, i) => batch.outcome(i));
  for (const o of taken) {
    expect(r.outcomes.has(o.contactId), `outcome of ${o.contactId} reported twice`).toBe(false);
    r.outcomes.set(o.contactId, o);
  }
  if (r.held > 0) r.held--;
  else takeChanges(m, r);
  for (const s of m.subs) {
    s.contacts.forEach((c, i) => {
      const o = r.outcomes.get(`${s.id}.${i}`);
      if (isFinal(c.state)) expect(o?.state, `outcome of ${s.id}.${i}`).toBe(c.state);
      else expect(o, `${s.id}.${i} is ${c.state} but has an outcome`).toBeUndefined();
    });
  }
  for (const n of NUMBERS) {
    const violation = windowViolation(r.sends.get(n.phone) ?? [], { perHour: n.throughputPerHour, per24h: n.messagingLimit24h, perSecond: n.messagesPerSecond });
    expect(violation, n.phone).toBeUndefined();
  }
  // Never later than a retry or a deadline that something still waits for.
  const timers = m.subs.flatMap((s) => [
    ...s.contacts.filter((c) => c.state === 'waiting').map((c) => c.retryAt),
    ...(s.deadline !== undefined && s.contacts.some((c) => c.state === 'queued' || c.state === 'waiting') ? [s.deadline] : []),
  ]);
  if (timers.length > 0) {
    expect(wake).not.toBeNull();
    expect(wake!).toBeLessThanOrEqual(Math.max(m.now, Math.min(...timers)));
  }
  if (all.every((c) => c.state !== 'queued' && c.state !== 'waiting')) expect(wake).toBeNull();
}

/**
 * The host's changes into its rows: every submission with its contacts the first time (or every
 * time with `full`), and only the unfinished ones; a full take names every unfinished submission.
 */
function takeChanges(m: Model, r: Real, full = false): void {
  const changes = r.engine.takeChanges({ full });
  const unfinished = m.subs.filter((s) => !finished(s)).map((s) => s.seq);
  expect(new Set(changes.submissions.map((c) => c.seq)).size, 'each submission once').toBe(changes.submissions.length);
  for (const c of changes.submissions) {
    expect(unfinished).toContain(c.seq);
    if (full || !r.rows.submissions.has(c.seq)) expect(c.contacts, `the contacts of s${c.seq}`).toBeDefined();
    else expect(c.contacts, `the contacts of s${c.seq}, given again`).toBeUndefined();
  }
  if (full) expect(changes.submissions.map((c) => c.seq).sort((a, b) => a - b)).toEqual(unfinished);
  applyChanges(r.rows, changes);
}

// ------------------------------------------------------------------ commands

type Cmd = fc.Command<Model, Real>;
let phoneSeq = 0;

class Submit implements Cmd {
  constructor(
    readonly pool: number,
    readonly n: number,
    readonly bad: number,
    readonly campaign: number | undefined,
    readonly maxRetries: number,
    readonly retryInterval: number,
    readonly deadlineIn: number | undefined,
    /** A contact submitted again: retries it used already, and a wait before it goes. */
    readonly again: { readonly used: number; readonly waitMs: number } | undefined = undefined,
  ) {}
  check = () => true;
  run(m: Model, r: Real): void {
    const pool = POOLS[this.pool % POOLS.length]!;
    const used = this.again ? Math.min(this.again.used, this.maxRetries) : 0;
    const notBefore = this.again ? m.now + this.again.waitMs : undefined;
    const deadline = this.deadlineIn === undefined ? undefined : m.now + this.deadlineIn;
    const contacts = Array.from({ length: this.n }, (_, i) => ({
      phone: i < this.bad ? '12' : String(5531900000000 + phoneSeq++),
      variables: Array.from({ length: pool.placeholders }, (_, k) => `c${phoneSeq}v${k}`),
    }));
    const ticket = r.engine.submit({
      businessId: pool.businessId,
      typeId: pool.typeId,
      ...(this.campaign !== undefined ? { campaignId: this.campaign } : {}),
      maxRetries: this.maxRetries,
      retryInterval: this.retryInterval,
      ...(deadline !== undefined ? { deadline } : {}),
      ...(this.again ? { retriesUsed: used, notBefore } : {}),
      contacts,
    });
    const seq = m.nextSeq++;
    expect(ticket.submissionId).toBe(`s${seq}`);
    const expired = deadline !== undefined && deadline <= m.now;
    m.subs.push({
      id: ticket.submissionId,
      seq,
      pool,
      deadline,
      maxRetries: this.maxRetries,
      retryInterval: this.retryInterval,
      contacts: contacts.map((c, i) => {
        const waits = notBefore !== undefined && notBefore > m.now;
        const state: MState = i < this.bad ? 'rejected' : expired ? 'expired' : waits ? 'waiting' : 'queued';
        return { state, retries: used, handouts: 0, resend: false, retryAt: waits ? notBefore : 0, attempts: 0, ...c };
      }),
    });
    expect(ticket.accepted).toBe(expired ? 0 : this.n - this.bad);
    checkAll(m, r);
  }
  toString = () =>
    `submit(pool ${this.pool % POOLS.length}, ${this.n} (${this.bad} bad), campaign ${this.campaign}, retries ${this.maxRetries}/${this.retryInterval}, deadline +${this.deadlineIn}${this.again ? `, again: used ${this.again.used}, wait ${this.again.waitMs}` : ''})`;
}

class Poll implements Cmd {
  constructor(
    readonly limit: number,
    /** Through `pollInto` and the batch's rows rather than `poll()`'s objects. */
    readonly viaBatch = false,
  ) {}
  check = () => true;
  run(m: Model, r: Real): void {
    due(m);
    const wake = m.wake;
    const batch = r.engine.createMessageBatch(this.limit);
    const out = this.viaBatch ? Array.from({ length: r.engine.pollInto(batch) }, (_, i) => batch.message(i)) : r.engine.poll({ limit: this.limit });
    expect(out.length).toBeLessThanOrEqual(this.limit);
    if (wake === m.now) expect(out.length, 'nextWakeAt said now').toBeGreaterThan(0);
    else expect(out.length, `nextWakeAt said ${wake}`).toBe(0);
    const numbers = new Map(r.engine.numbers().map((n) => [n.phone, n]));
    const templates = new Map(r.engine.templates().map((t) => [t.id, t]));
    for (const msg of out) {
      const s = m.subs.find((x) => x.id === msg.submissionId)!;
      const c = s.contacts[msg.index]!;
      expect(c.state, `${msg.contactId} handed out while ${c.state}`).toBe('queued');
      expect([msg.businessId, msg.typeId]).toEqual([s.pool.businessId, s.pool.typeId]);
      expect(s.pool.templates).toContain(msg.templateId);
      expect(msg.contact.phone).toBe(c.phone);
      expect(msg.text).toBe(render(msg.templateId, c.variables));
      expect(msg.contactId).toBe(`${s.id}.${msg.index}`);
      // After a restart that found it in flight, the same hand-out again (the idempotency key).
      const handout = c.resend ? c.handouts - 1 : c.handouts;
      expect(msg.messageId).toBe(`${s.id}.${msg.index}.${handout}`);
      expect(msg.handedOutAt).toBe(m.now);
      expect([msg.isRetry, msg.retryIndex]).toEqual(c.retries > 0 ? [true, c.retries - 1] : [false, null]);
      expect(numbers.get(msg.phone)).toMatchObject({ businessId: s.pool.businessId, status: 'active' });
      expect(templates.get(msg.templateId)?.status).toBe('active');
      if (c.resend) c.resend = false;
      else {
        m.handouts.push({ messageId: msg.messageId, seq: s.seq, index: msg.index, handout: c.handouts });
        c.handouts++;
      }
      c.state = 'inflight';
      const log = r.sends.get(msg.phone) ?? [];
      log.push({ at: m.now, count: 1 });
      r.sends.set(msg.phone, log);
      r.flights.set(msg.messageId, { phone: msg.phone, at: m.now });
    }
    checkAll(m, r);
  }
  toString = () => `poll${this.viaBatch ? 'Into' : ''}(${this.limit})`;
}

type OutcomePick = 'sent' | 'expired' | number;
const toOutcome = (o: OutcomePick, refused = false): SendOutcome => (typeof o === 'number' ? { status: 'failed', code: o, ...(refused ? { refused } : {}) } : { status: o });

/** A report for a hand-out: the current one of a contact in flight, or any earlier one (late, duplicate). */
class Report implements Cmd {
  constructor(
    readonly current: boolean,
    readonly pick: number,
    readonly outcome: OutcomePick,
    /** A failure the provider answered at once: the hand-out's charge goes back. */
    readonly refused = false,
  ) {}
  check = () => true;
  run(m: Model, r: Real): void {
    due(m);
    const candidates = this.current
      ? m.handouts.filter((h) => {
          const c = m.subs.find((s) => s.seq === h.seq)!.contacts[h.index]!;
          return c.state === 'inflight' && c.handouts - 1 === h.handout;
        })
      : m.handouts;
    if (candidates.length === 0) return;
    const h = candidates[this.pick % candidates.length]!;
    const outcome = toOutcome(this.outcome, this.refused);
    const c = m.subs.find((x) => x.seq === h.seq)!.contacts[h.index]!;
    const inFlight = c.state === 'inflight' && c.handouts - 1 === h.handout;
    const expected = modelReport(m, h.seq, h.index, h.handout, outcome);
    expect(r.engine.report(h.messageId, outcome)).toEqual(expected);
    // A refusal of the hand-out in flight: that send never happened, for the independent window check.
    const flight = r.flights.get(h.messageId);
    if (this.refused && outcome.status === 'failed' && inFlight && flight !== undefined) {
      const log = r.sends.get(flight.phone)!;
      log.splice(
        log.findIndex((x) => x.at === flight.at),
        1,
      );
      r.flights.delete(h.messageId);
    }
    checkAll(m, r);
  }
  toString = () => `report(${this.current ? 'current' : 'any'} #${this.pick}, ${this.outcome}${this.refused ? ' refused' : ''})`;
}

/** Reports under ids the engine never handed out. */
class ReportUnknown implements Cmd {
  constructor(readonly kind: number) {}
  check = () => true;
  run(m: Model, r: Real): void {
    due(m);
    const s = m.subs[0];
    const ids: [string, number, number, number][] = [
      ['nonsense', 0, 0, 0],
      [`s${m.nextSeq + 3}.0.0`, m.nextSeq + 3, 0, 0],
    ];
    if (s) ids.push([`${s.id}.${s.contacts.length}.0`, s.seq, s.contacts.length, 0], [`${s.id}.0.${s.contacts[0]!.handouts + 2}`, s.seq, 0, s.contacts[0]!.handouts + 2]);
    const [id, seq, index, handout] = ids[this.kind % ids.length]!;
    const expected = id === 'nonsense' ? { ok: false, reason: 'unknown-message' } : modelReport(m, seq, index, handout, { status: 'sent' });
    expect(r.engine.report(id, { status: 'sent' })).toEqual(expected);
    checkAll(m, r);
  }
  toString = () => `reportUnknown(${this.kind})`;
}

class Advance implements Cmd {
  constructor(readonly ms: number) {}
  check = () => true;
  run(m: Model, r: Real): void {
    m.now += this.ms;
    r.clock.advance(this.ms);
    checkAll(m, r);
  }
  toString = () => `advance(${this.ms})`;
}

class NumberStatus implements Cmd {
  constructor(
    readonly index: number,
    readonly active: boolean,
    readonly forMs: number | undefined,
  ) {}
  check = () => true;
  run(m: Model, r: Real): void {
    const phone = NUMBERS[this.index % NUMBERS.length]!.phone;
    if (this.active) r.engine.setNumberStatus(phone, 'active');
    else r.engine.setNumberStatus(phone, 'paused', this.forMs === undefined ? {} : { until: m.now + this.forMs });
    checkAll(m, r);
  }
  toString = () => `number(${this.index % NUMBERS.length}, ${this.active ? 'active' : `paused ${this.forMs}`})`;
}

class TemplateStatus implements Cmd {
  constructor(
    readonly index: number,
    readonly status: 'active' | 'paused' | 'disabled',
    readonly forMs: number | undefined,
  ) {}
  check = () => true;
  run(m: Model, r: Real): void {
    const id = TEMPLATES[this.index % TEMPLATES.length]!.id;
    r.engine.setTemplateStatus(id, this.status, this.status === 'paused' && this.forMs !== undefined ? { until: m.now + this.forMs } : {});
    checkAll(m, r);
  }
  toString = () => `template(${TEMPLATES[this.index % TEMPLATES.length]!.id}, ${this.status} ${this.forMs})`;
}

/** Snapshot (or the durable host's rows), JSON round trip, new engine: what was in flight is queued again. */
class Restart implements Cmd {
  constructor(readonly fromRows: boolean) {}
  check = () => true;
  run(m: Model, r: Real): void {
    // A host's step ends before it stops: the changes it held are written (it holds the next ones as before).
    takeChanges(m, r);
    const snapshot = JSON.parse(JSON.stringify(this.fromRows ? snapshotFromRows(r.rows, m.now) : r.engine.snapshot()));
    r.engine = createEngine(fleet(), { clock: r.clock, snapshot, trackChanges: true, packContactsFrom: r.packContactsFrom });
    for (const s of m.subs) {
      for (const c of s.contacts) {
        // A contact waiting after a transport failure goes under a new id after a restart (the
        // flag is kept for queued contacts only), and every count of such failures starts again.
        c.attempts = 0;
        c.unknown = false;
        if (c.state === 'waiting') c.resend = false;
        if (c.state !== 'inflight') continue;
        c.state = 'queued';
        c.resend = true;
      }
    }
    checkAll(m, r);
  }
  toString = () => (this.fromRows ? 'restart from rows' : 'restart');
}

/** The host writes its rows only every few steps from now: changes pile up in the engine meanwhile. */
class HoldChanges implements Cmd {
  constructor(readonly steps: number) {}
  check = () => true;
  run(m: Model, r: Real): void {
    r.held = this.steps;
    checkAll(m, r);
  }
  toString = () => `holdChanges(${this.steps})`;
}

/** The host takes every live submission with its contacts (one starting to keep rows), then goes on. */
class TakeFull implements Cmd {
  check = () => true;
  run(m: Model, r: Real): void {
    takeChanges(m, r, true);
    r.held = 0;
    checkAll(m, r);
  }
  toString = () => 'takeFull';
}

const CODES = [131000, 131026, 132015, 132016, 131048, 130429, 131049, 131056, 190, 131016, 999];
const outcomeArb: fc.Arbitrary<OutcomePick> = fc.oneof(
  { weight: 3, arbitrary: fc.constant('sent' as const) },
  { weight: 1, arbitrary: fc.constant('expired' as const) },
  { weight: 3, arbitrary: fc.constantFrom(...CODES) },
);

const commands = [
  fc
    .tuple(
      fc.nat(),
      fc.integer({ min: 1, max: 8 }),
      fc.integer({ min: 0, max: 2 }),
      fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined }),
      fc.integer({ min: 0, max: 2 }),
      fc.constantFrom(0, 1000, 60_000, 600_000),
      fc.option(fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 3 * HOUR })), { nil: undefined }),
    )
    .map(([pool, n, bad, campaign, retries, interval, deadline]) => new Submit(pool, n, Math.min(bad, n), campaign, retries, interval, deadline)),
  fc
    .tuple(fc.nat(), fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 2 }), fc.integer({ min: 0, max: 2 }), fc.constantFrom(0, 6_000, 60_000))
    .map(([pool, n, retries, used, waitMs]) => new Submit(pool, n, 0, undefined, retries, 1000, undefined, { used, waitMs })),
  fc.integer({ min: 1, max: 20 }).map((limit) => new Poll(limit)),
  fc.integer({ min: 1, max: 20 }).map((limit) => new Poll(limit, true)),
  fc.tuple(fc.nat(), outcomeArb).map(([pick, o]) => new Report(true, pick, o)),
  fc.tuple(fc.nat(), outcomeArb).map(([pick, o]) => new Report(true, pick, o, true)),
  fc.tuple(fc.nat(), outcomeArb).map(([pick, o]) => new Report(false, pick, o)),
  fc.nat().map((k) => new ReportUnknown(k)),
  fc.oneof(fc.integer({ min: 0, max: 2000 }), fc.integer({ min: 0, max: 2 * HOUR }), fc.constantFrom(HOUR, 25 * HOUR)).map((ms) => new Advance(ms)),
  fc.tuple(fc.nat(), fc.boolean(), fc.option(fc.integer({ min: 1, max: 2 * HOUR }), { nil: undefined })).map(([i, a, f]) => new NumberStatus(i, a, f)),
  fc
    .tuple(fc.nat(), fc.constantFrom('active' as const, 'active' as const, 'paused' as const, 'disabled' as const), fc.option(fc.integer({ min: 1, max: 2 * HOUR }), { nil: undefined }))
    .map(([i, s, f]) => new TemplateStatus(i, s, f)),
  fc.constant(new Restart(false)),
  fc.constant(new Restart(true)),
  fc.integer({ min: 1, max: 4 }).map((steps) => new HoldChanges(steps)),
  fc.constant(new TakeFull()),
];

describe('dispatch queue against a reference model', () => {
  it('holds every invariant after every command (1,000 runs)', () => {
    fc.assert(
      // Half the runs keep every submission's contacts packed (contact-list.ts).
      fc.property(fc.commands(commands, { maxCommands: 80, size: 'max' }), fc.boolean(), (cmds, packed) => {
        const clock = new ManualClock(0);
        const packContactsFrom = packed ? 0 : undefined;
        const setup = () => ({
          model: { now: 0, wake: null, nextSeq: 1, subs: [], handouts: [] } as Model,
          real: {
            engine: createEngine(fleet(), { clock, trackChanges: true, packContactsFrom }),
            rows: emptyRows(),
            clock,
            sends: new Map(),
            flights: new Map(),
            outcomes: new Map(),
            steps: 0,
            held: 0,
            packContactsFrom,
          } as Real,
        });
        fc.modelRun(setup, cmds);
      }),
      { numRuns: 1000 },
    );
  });
});
