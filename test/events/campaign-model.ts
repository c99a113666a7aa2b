/**
 * A model-based test of a campaign's statistics (docs/events.md, "Campaign statistics"): random
 * streams of submits (accepted and every rejection), sends, failures at the send and reported
 * later with every error-action outcome (sent again or not), retries, deliveries, reads, replies,
 * expiries, duplicate and out-of-order statuses, time passing the failure window, batches and
 * restarts, run against the aggregator under test (in process, or on Redis) and a tiny reference
 * written plainly from the model. After every step: the counts equal the reference's, add up, the
 * progress counts never decrease, and the campaign is never FINISHED while the server may still
 * send one of its contacts (the model's server only sends what the reference says can be sent).
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import { countProblems, emptyCounts, type Admission, type CampaignCounts } from '../../src/events/campaign-counts.js';
import type { ContactStatusChange } from '../../src/events/campaign-stats-types.js';
import type { HsmStatus } from '../../src/events/schemas/hsm.js';

/** The failure window of the model, in ms (small: time advances by a few steps). */
export const WINDOW = 1_000;
export const CAMPAIGN = 1;
export const DOES_NOT_EXIST_CODE = 131026;

/** The statistics under test, behind one async interface. */
export interface StatsUnderTest {
  admit(contactId: string, admission: Admission): Promise<void>;
  record(change: ContactStatusChange): Promise<void>;
  /** The counts as they stand at `now` (contacts whose window ended by then settled first). */
  countsAt(now: number): Promise<CampaignCounts>;
  /** A batch period at `now`. */
  batch(now: number): Promise<void>;
  /** A restart: from rows written step by step, or from a snapshot. */
  restart(kind: 'rows' | 'snapshot'): Promise<void>;
}

// ------------------------------------------------------------------ the reference

type Bucket = 'remaining' | 'sent' | 'failed' | 'doesNotExist' | 'expired';
const REJECTIONS: readonly [Admission, keyof CampaignCounts][] = [
  ['invalid-phone', 'invalidPhone'],
  ['invalid-data', 'invalidData'],
  ['duplicated', 'duplicated'],
  ['blocked', 'blocked'],
  ['already-sent', 'alreadySent'],
  ['does-not-exist', 'doesNotExist'],
];

interface RefContact {
  readonly admissions: Set<Admission>;
  /** Latest attempt seen (-1 the first try). */
  attempt: number;
  /** 'remaining' while open; a settled bucket for good. */
  stage: Bucket;
  /** The attempt it settled with (its funnel's). */
  settledAttempt: number;
  /** Open: when the failure window of its SENT ends, or null. */
  windowEnd: number | null;
  delivered: boolean;
  read: boolean;
  replied: boolean;
  blocklist: boolean;
}

/** The model, written out plainly: one contact's stage as the model file says. */
export class Reference {
  readonly contacts = new Map<string, RefContact>();

  constructor(readonly window = WINDOW) {}

  #contact(id: string): RefContact {
    let c = this.contacts.get(id);
    if (!c) {
      c = { admissions: new Set(), attempt: -1, stage: 'remaining', settledAttempt: -1, windowEnd: null, delivered: false, read: false, replied: false, blocklist: false };
      this.contacts.set(id, c);
    }
    return c;
  }

  admit(id: string, a: Admission): void {
    const c = this.#contact(id);
    c.admissions.add(a);
    if (this.#rejection(c) !== undefined) c.windowEnd = null;
  }

  #rejection(c: RefContact): keyof CampaignCounts | undefined {
    return REJECTIONS.find(([a]) => c.admissions.has(a))?.[1];
  }

  #settle(c: RefContact, bucket: Bucket): void {
    c.stage = bucket;
    c.settledAttempt = c.attempt;
    c.windowEnd = null;
  }

  #funnel(c: RefContact, status: HsmStatus, blocklist: boolean): void {
    if (status === 'DEVICE' || status === 'READ' || status === 'REPLIED') c.delivered = true;
    if (status === 'READ' || status === 'REPLIED') c.read = true;
    if (status === 'REPLIED') {
      c.replied = true;
      if (blocklist) c.blocklist = true;
    }
  }

  /** True when the server may still send the contact (again): accepted and open. */
  canSend(id: string): boolean {
    const c = this.contacts.get(id);
    return c !== undefined && c.stage === 'remaining' && this.#rejection(c) === undefined;
  }

  record(ch: ContactStatusChange): void {
    // A contact reported before its admission counts as accepted.
    const c = this.#contact(ch.contactId);
    const attempt = ch.retryIndex ?? -1;
    if (c.stage === 'remaining' && c.windowEnd !== null && ch.at >= c.windowEnd) this.#settle(c, 'sent');
    if (c.stage !== 'remaining') {
      if (c.stage === 'sent' && attempt === c.settledAttempt) this.#funnel(c, ch.status, ch.blocklistResponse === true);
      return;
    }
    if (attempt < c.attempt) return;
    if (attempt > c.attempt) {
      c.attempt = attempt;
      c.windowEnd = null;
    }
    if (this.#rejection(c) !== undefined) return;
    switch (ch.status) {
      case 'DEVICE':
      case 'READ':
      case 'REPLIED':
        this.#settle(c, 'sent');
        this.#funnel(c, ch.status, ch.blocklistResponse === true);
        return;
      case 'SENT':
      case 'SERVER':
        if (this.window === 0) this.#settle(c, 'sent');
        else c.windowEnd ??= ch.at + this.window;
        return;
      case 'EXPIRED':
        this.#settle(c, 'expired');
        return;
      case 'FAILED':
        if (ch.retrying === true) c.windowEnd = null;
        else this.#settle(c, ch.failureCode === DOES_NOT_EXIST_CODE ? 'doesNotExist' : 'failed');
        return;
      default:
        return;
    }
  }

  /** Settles the contacts whose window ended by `now`. */
  settle(now: number): void {
    for (const c of this.contacts.values()) if (c.stage === 'remaining' && c.windowEnd !== null && c.windowEnd <= now) this.#settle(c, 'sent');
  }

  counts(): CampaignCounts {
    const out = emptyCounts();
    for (const c of this.contacts.values()) {
      out.total++;
      if (c.stage === 'remaining') {
        const r = this.#rejection(c);
        if (r === undefined) out.remaining++;
        else {
          out.processed++;
          out[r]++;
        }
        continue;
      }
      out.processed++;
      out[c.stage]++;
      if (c.stage !== 'sent') continue;
      if (c.delivered) out.delivered++;
      if (c.read) out.read++;
      if (c.replied) out.replied++;
      if (c.blocklist) out.blocklistResponse++;
    }
    return out;
  }
}

// ------------------------------------------------------------------ the model's server

/** What the model's server knows of one accepted contact. */
interface ServerSide {
  readonly id: string;
  attempt: number;
  /** queued: to be sent (again); sent: sent, its provider statuses may come; ended: never sent again. */
  phase: 'queued' | 'sent' | 'ended';
  sentAt: number;
  delivered: boolean;
  /** Statuses of the current send (for duplicates). */
  sendStatuses: ContactStatusChange[];
}

export interface Model {
  readonly ref: Reference;
  readonly server: Map<string, ServerSide>;
  now: number;
  nextId: number;
  previous: CampaignCounts;
}

export interface Real {
  stats: StatsUnderTest;
}

/** Counts that never decrease. */
const MONOTONE: readonly (keyof CampaignCounts)[] = [
  'total',
  'processed',
  'sent',
  'delivered',
  'read',
  'replied',
  'blocklistResponse',
  'failed',
  'expired',
  'doesNotExist',
  'invalidPhone',
  'invalidData',
  'duplicated',
  'blocked',
  'alreadySent',
];

async function record(m: Model, r: Real, change: Omit<ContactStatusChange, 'campaignId' | 'at'>): Promise<ContactStatusChange> {
  const full: ContactStatusChange = { campaignId: CAMPAIGN, at: m.now, ...change };
  m.ref.record(full);
  await r.stats.record(full);
  return full;
}

/** The checks after every step. */
async function checkAll(m: Model, r: Real): Promise<void> {
  m.ref.settle(m.now);
  const got = await r.stats.countsAt(m.now);
  expect(countProblems(got)).toEqual([]);
  expect(got).toEqual(m.ref.counts());
  for (const k of MONOTONE) expect(got[k], k).toBeGreaterThanOrEqual(m.previous[k]);
  const finished = got.total > 0 && got.remaining === 0;
  // The server never sends a contact of a FINISHED campaign: whatever it may still send keeps it RUNNING.
  for (const s of m.server.values()) {
    if (s.phase === 'queued') expect(m.ref.canSend(s.id), `contact ${s.id} queued but settled`).toBe(true);
    if (s.phase === 'queued' || (s.phase === 'sent' && m.ref.canSend(s.id))) expect(finished).toBe(false);
  }
  m.previous = got;
}

function pick(m: Model, k: number, p: (s: ServerSide) => boolean): ServerSide | undefined {
  const list = [...m.server.values()].filter(p);
  return list.length === 0 ? undefined : list[k % list.length];
}

type Step = fc.AsyncCommand<Model, Real>;

class Submit implements Step {
  constructor(readonly admission: Admission) {}
  check = (m: Readonly<Model>) => m.nextId < 9;
  async run(m: Model, r: Real): Promise<void> {
    const id = String(m.nextId++);
    m.ref.admit(id, this.admission);
    await r.stats.admit(id, this.admission);
    if (this.admission === 'accepted') m.server.set(id, { id, attempt: -1, phase: 'queued', sentAt: 0, delivered: false, sendStatuses: [] });
    await checkAll(m, r);
  }
  toString = () => `submit(${this.admission})`;
}

/** The engine refuses a queued contact after intake (an invalid phone). */
class EngineReject implements Step {
  constructor(readonly k: number) {}
  check = (m: Readonly<Model>) => pick(m, this.k, (s) => s.phase === 'queued' && s.attempt === -1) !== undefined;
  async run(m: Model, r: Real): Promise<void> {
    const s = pick(m, this.k, (x) => x.phase === 'queued' && x.attempt === -1)!;
    s.phase = 'ended';
    m.ref.admit(s.id, 'invalid-phone');
    await r.stats.admit(s.id, 'invalid-phone');
    await checkAll(m, r);
  }
  toString = () => `engineReject(${this.k})`;
}

class Send implements Step {
  constructor(readonly k: number) {}
  check = (m: Readonly<Model>) => pick(m, this.k, (s) => s.phase === 'queued') !== undefined;
  async run(m: Model, r: Real): Promise<void> {
    const s = pick(m, this.k, (x) => x.phase === 'queued')!;
    // The server sends only what can still be sent.
    expect(m.ref.canSend(s.id)).toBe(true);
    s.phase = 'sent';
    s.sentAt = m.now;
    s.delivered = false;
    s.sendStatuses = [await record(m, r, { contactId: s.id, retryIndex: s.attempt < 0 ? null : s.attempt, status: 'SENT' })];
    await checkAll(m, r);
  }
  toString = () => `send(${this.k})`;
}

type Again = 'none' | 'retry' | 'failover';

/** A failure: at the send (`late` false) or reported later by the provider, with the error table's outcome. */
class Fail implements Step {
  constructor(
    readonly k: number,
    readonly late: boolean,
    readonly again: Again,
    readonly code: number,
  ) {}
  #phase(): ServerSide['phase'] {
    return this.late ? 'sent' : 'queued';
  }
  check = (m: Readonly<Model>) => pick(m, this.k, (s) => s.phase === this.#phase()) !== undefined;
  async run(m: Model, r: Real): Promise<void> {
    const s = pick(m, this.k, (x) => x.phase === this.#phase())!;
    // The server sends again only within the window of the send, and never after a delivery.
    const again: Again = this.late && (s.delivered || m.now - s.sentAt >= WINDOW) ? 'none' : this.again;
    const retryIndex = s.attempt < 0 ? null : s.attempt;
    // A retry waits: its ENQUEUED is recorded first (as the server's retryPending), then the FAILED.
    if (again === 'retry') await record(m, r, { contactId: s.id, retryIndex: s.attempt + 1, status: 'ENQUEUED' });
    await record(m, r, { contactId: s.id, retryIndex, status: 'FAILED', failureCode: this.code, retrying: again !== 'none' });
    if (again === 'retry') s.attempt++;
    s.phase = again === 'none' ? 'ended' : 'queued';
    s.sendStatuses = [];
    await checkAll(m, r);
  }
  toString = () => `fail(${this.k}, ${this.late ? 'late' : 'at send'}, ${this.again}, ${this.code})`;
}

/** A provider status of a sent message: SERVER, DEVICE, READ or REPLIED, in any order. */
class Progress implements Step {
  constructor(
    readonly k: number,
    readonly status: HsmStatus,
    readonly blocklist: boolean,
  ) {}
  check = (m: Readonly<Model>) => pick(m, this.k, (s) => s.phase === 'sent') !== undefined;
  async run(m: Model, r: Real): Promise<void> {
    const s = pick(m, this.k, (x) => x.phase === 'sent')!;
    const change = await record(m, r, {
      contactId: s.id,
      retryIndex: s.attempt < 0 ? null : s.attempt,
      status: this.status,
      ...(this.status === 'REPLIED' ? { blocklistResponse: this.blocklist } : {}),
    });
    if (this.status !== 'SERVER') s.delivered = true;
    s.sendStatuses.push(change);
    await checkAll(m, r);
  }
  toString = () => `progress(${this.k}, ${this.status}${this.blocklist ? ', blocklist' : ''})`;
}

class Expire implements Step {
  constructor(readonly k: number) {}
  check = (m: Readonly<Model>) => pick(m, this.k, (s) => s.phase !== 'ended') !== undefined;
  async run(m: Model, r: Real): Promise<void> {
    const s = pick(m, this.k, (x) => x.phase !== 'ended')!;
    await record(m, r, { contactId: s.id, retryIndex: s.attempt < 0 ? null : s.attempt, status: 'EXPIRED' });
    s.phase = 'ended';
    await checkAll(m, r);
  }
  toString = () => `expire(${this.k})`;
}

/** A status of the current send delivered again (a provider's duplicate), later. */
class Duplicate implements Step {
  constructor(
    readonly k: number,
    readonly j: number,
  ) {}
  check = (m: Readonly<Model>) => pick(m, this.k, (s) => s.phase === 'sent' && s.sendStatuses.length > 1) !== undefined;
  async run(m: Model, r: Real): Promise<void> {
    const s = pick(m, this.k, (x) => x.phase === 'sent' && x.sendStatuses.length > 1)!;
    // Provider statuses only (the server's own SENT is recorded once).
    const list = s.sendStatuses.slice(1);
    const { campaignId: _c, at: _a, ...change } = list[this.j % list.length]!;
    await record(m, r, change);
    await checkAll(m, r);
  }
  toString = () => `duplicate(${this.k}, ${this.j})`;
}

/** A status of an earlier attempt arriving after a later one (out of order): changes nothing. */
class Stale implements Step {
  constructor(
    readonly k: number,
    readonly status: HsmStatus,
  ) {}
  check = (m: Readonly<Model>) => pick(m, this.k, (s) => s.attempt >= 0) !== undefined;
  async run(m: Model, r: Real): Promise<void> {
    const s = pick(m, this.k, (x) => x.attempt >= 0)!;
    await record(m, r, { contactId: s.id, retryIndex: s.attempt === 0 ? null : s.attempt - 1, status: this.status });
    await checkAll(m, r);
  }
  toString = () => `stale(${this.k}, ${this.status})`;
}

class Advance implements Step {
  constructor(readonly ms: number) {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    m.now += this.ms;
    await checkAll(m, r);
  }
  toString = () => `advance(${this.ms})`;
}

class Batch implements Step {
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    await r.stats.batch(m.now);
    await checkAll(m, r);
  }
  toString = () => 'batch';
}

class Restart implements Step {
  constructor(readonly kind: 'rows' | 'snapshot') {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    await r.stats.restart(this.kind);
    await checkAll(m, r);
  }
  toString = () => `restart(${this.kind})`;
}

const k = fc.nat(20);

/** Every step of the model, weighted toward what moves a campaign. */
export const campaignCommands = fc.commands(
  [
    fc.constantFrom<Admission>('accepted', 'accepted', 'accepted', 'invalid-phone', 'invalid-data', 'duplicated', 'blocked', 'already-sent', 'does-not-exist').map((a) => new Submit(a)),
    k.map((x) => new EngineReject(x)),
    k.map((x) => new Send(x)),
    k.map((x) => new Send(x)),
    fc.tuple(k, fc.boolean(), fc.constantFrom<Again>('none', 'retry', 'failover'), fc.constantFrom(131000, DOES_NOT_EXIST_CODE)).map(([x, late, again, code]) => new Fail(x, late, again, code)),
    fc.tuple(k, fc.boolean(), fc.constantFrom<Again>('retry', 'failover')).map(([x, late, again]) => new Fail(x, late, again, 131000)),
    fc.tuple(k, fc.constantFrom<HsmStatus>('SERVER', 'DEVICE', 'READ', 'REPLIED'), fc.boolean()).map(([x, s, b]) => new Progress(x, s, b)),
    k.map((x) => new Expire(x)),
    fc.tuple(k, fc.nat(5)).map(([x, j]) => new Duplicate(x, j)),
    fc.tuple(k, fc.constantFrom<HsmStatus>('SERVER', 'DEVICE', 'READ', 'FAILED', 'EXPIRED')).map(([x, s]) => new Stale(x, s)),
    fc.constantFrom(1, 300, WINDOW - 1, WINDOW, 2_500).map((ms) => new Advance(ms)),
    fc.constant(new Batch()),
    fc.constantFrom<'rows' | 'snapshot'>('rows', 'snapshot').map((kind) => new Restart(kind)),
  ],
  { maxCommands: 30, size: 'medium' },
);

/** A fresh model at `start`. */
export function newModel(start: number): Model {
  return { ref: new Reference(), server: new Map(), now: start, nextId: 1, previous: emptyCounts() };
}
