/**
 * What changes in a loaded fleet while the engine runs: each number's and template's status (set by
 * a call, by a failover of the dispatch loop, or back to active when a timed pause falls due) and
 * each number's limits. Every change goes to the pools the number or template feeds, is marked for
 * a durable host, lets waiting queues look again, and is told to the listeners.
 *
 * Timers are data (docs/engine.md, "Timers are data"): a timed pause is an entry in a min-heap with
 * the generation of its number or template, and any later change of the same one bumps the
 * generation and so cancels the timer.
 */
import type { ChangeMarks } from './change-marks.js';
import { numberStatusOf, templateStatusOf } from './engine-snapshot.js';
import type { EngineChanges, NumberChange, StatusChange } from './engine-types.js';
import type { FleetTables } from './fleet-tables.js';
import type { Fleet } from './fleet-validate.js';
import type { TemplateStatus } from './fleet.js';
import type { Store, StoreSnapshot } from './limits/store.js';
import { limitsOf } from './number-limits.js';
import type { Pool, TemplateView } from './pool.js';
import type { NumberStatusSnapshot, TemplateStatusSnapshot } from './snapshot.js';
import { TimedHeap } from './timed-heap.js';

export class FleetState {
  readonly #store: Store;
  /** Called after every change that may unblock waiting queues (or move when they unblock). */
  readonly #changed: () => void;
  readonly #numberMarks: ChangeMarks;
  readonly #templateMarks: ChangeMarks;
  readonly #listeners = new Set<(change: StatusChange) => void>();
  #t!: FleetTables;
  #fleet!: Fleet;
  /** Timed resumes as (time, 2 x index + kind, generation); kind 0: number, 1: template. */
  #timers = new TimedHeap();
  /** The engine's last clock reading: the time of the changes told. */
  #at = 0;
  readonly #view: TemplateView = {
    isActive: (t) => this.#t.templateStatus[t] === 'active',
    account: (t) => this.#t.templateAccount[t],
    id: (t) => this.#t.templateIds[t]!,
  };

  constructor(store: Store, changed: () => void, numberMarks: ChangeMarks, templateMarks: ChangeMarks) {
    this.#store = store;
    this.#changed = changed;
    this.#numberMarks = numberMarks;
    this.#templateMarks = templateMarks;
  }

  /** New tables of `fleet`: its statuses applied through the same paths as run-time changes, so pools start consistent. */
  load(t: FleetTables, fleet: Fleet): void {
    this.#t = t;
    this.#fleet = fleet;
    this.#timers = new TimedHeap();
    // A new fleet changes every number and template for a durable host: all are written again.
    this.#numberMarks.reset(t.numberCount);
    this.#templateMarks.reset(t.templates.length);
    for (const b of t.businesses) for (const pool of b.pools) pool.refreshTemplates(this.#view);
    fleet.templates.forEach((template, i) => {
      if (template.status === 'paused' && template.pausedUntil !== undefined) this.setTemplate(i, 'paused', template.pausedUntil);
    });
    let slot = 0;
    for (const b of fleet.businesses) {
      for (const n of b.numbers) this.setNumber(slot++, n.status === 'active', n.status === 'paused' ? n.pausedUntil : undefined);
    }
  }

  /** Statuses as a snapshot had them, for the numbers and templates the fleet still lists. */
  restore(numbers: readonly NumberStatusSnapshot[], templates: readonly TemplateStatusSnapshot[]): void {
    const t = this.#t;
    for (const n of numbers) {
      const slot = t.numberIndex.get(n.phone);
      if (slot !== undefined) this.setNumber(slot, n.status === 'active', n.status === 'paused' ? n.pausedUntil : undefined);
    }
    for (const s of templates) {
      const i = t.templateIndex.get(s.id);
      if (i !== undefined) this.setTemplate(i, s.status, s.status === 'paused' ? s.pausedUntil : undefined);
    }
  }

  /** The clock read `now`: timed resumes due by then are applied. */
  tick(now: number): void {
    this.#at = now;
    const timers = this.#timers;
    while (timers.size > 0 && timers.topAt() <= now) {
      const id = timers.topId();
      const gen = timers.topGen();
      timers.pop();
      const index = id >> 1;
      if ((id & 1) === 0) {
        if (this.#t.numberGen[index] === gen) this.setNumber(index, true, undefined, 'timer');
      } else if (this.#t.templateGen[index] === gen) {
        this.setTemplate(index, 'active', undefined, 'timer');
      }
    }
  }

  /** Clock time of the next timed resume, or undefined. */
  nextResumeAt(): number | undefined {
    const timers = this.#timers;
    while (timers.size > 0) {
      const id = timers.topId();
      const index = id >> 1;
      if (((id & 1) === 0 ? this.#t.numberGen[index] : this.#t.templateGen[index]) === timers.topGen()) return timers.topAt();
      timers.pop();
    }
    return undefined;
  }

  /**
   * What changed since the last call (every number and template with `full`), as
   * `engine.takeChanges()` carries it: statuses, and the numbers' usage from the store.
   */
  changes(full: boolean): Pick<EngineChanges, 'numbers' | 'templates' | 'store'> {
    const t = this.#t;
    const slots = this.#numberMarks.take(full, t.numberCount);
    const partial = this.#store.snapshotNumbers!(slots.map((slot) => t.handle[slot]!));
    const { numbers: usage, ...store } = partial as StoreSnapshot & { numbers?: Record<string, unknown> };
    const numbers = slots.map((slot): NumberChange => ({ ...numberStatusOf(t, slot), usage: usage?.[t.phones[slot]!] ?? null }));
    const templates = this.#templateMarks.take(full, t.templates.length).map((i) => templateStatusOf(t, i));
    return { numbers, templates, store };
  }

  /** Adds a listener of status changes; answers the function that removes it. */
  onChange(listener: (change: StatusChange) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Sets a number's status; `source` (a call, a failover, a timer) tells the listeners, none when a fleet or snapshot is loaded. */
  setNumber(slot: number, active: boolean, until: number | undefined, source?: string): void {
    const t = this.#t;
    this.#numberMarks.mark(slot);
    t.numberGen[slot]!++;
    t.numberActive[slot] = active ? 1 : 0;
    if (until === undefined) t.numberUntil.delete(slot);
    else t.numberUntil.set(slot, until);
    if (until !== undefined) this.#timers.push(until, slot * 2, t.numberGen[slot]!);
    const b = t.businesses[t.numberBusiness[slot]!]!;
    const m = t.numberMember[slot]!;
    const perHour = t.perHour[slot]!;
    for (const pool of b.pools) pool.setEligible(m, active && pool.hasTemplateFor(m), perHour);
    this.#changed();
    if (source !== undefined && this.#listeners.size > 0) {
      this.#emit({ kind: 'number', phone: t.phones[slot]!, status: active ? 'active' : 'paused', ...(until !== undefined ? { until } : {}), at: this.#at, source });
    }
  }

  /** Sets a template's status, as `setNumber` a number's. */
  setTemplate(i: number, status: TemplateStatus, until: number | undefined, source?: string): void {
    const t = this.#t;
    this.#templateMarks.mark(i);
    t.templateGen[i]!++;
    t.templateStatus[i] = status;
    t.templateUntil[i] = until ?? NaN;
    if (until !== undefined) this.#timers.push(until, i * 2 + 1, t.templateGen[i]!);
    for (const pool of t.templatePools[i]!) {
      if (pool.refreshTemplates(this.#view)) this.#refreshMembers(pool);
    }
    this.#changed();
    if (source !== undefined && this.#listeners.size > 0) {
      this.#emit({ kind: 'template', templateId: t.templateIds[i]!, status, ...(until !== undefined ? { until } : {}), at: this.#at, source });
    }
  }

  /**
   * A failure takes the number out until `until` (undefined: until resumed), never for less than it
   * is out already: a rest of seconds (130429) after a pause of an hour (131048) leaves the hour.
   */
  failoverNumber(slot: number, until: number | undefined): void {
    if (this.#t.numberActive[slot] === 0) {
      const current = this.#t.numberUntil.get(slot);
      if (current === undefined || (until !== undefined && current >= until)) return;
    }
    this.setNumber(slot, false, until, 'failover');
  }

  /** A failure pauses or disables the template, never less than it is out already (disabled stays disabled). */
  failoverTemplate(i: number, status: 'paused' | 'disabled', until: number | undefined): void {
    const current = this.#t.templateStatus[i];
    if (current === 'disabled') return;
    if (current === 'paused' && status === 'paused') {
      const end = this.#t.templateUntil[i]!;
      if (Number.isNaN(end) || (until !== undefined && end >= until)) return;
    }
    this.setTemplate(i, status, status === 'disabled' ? undefined : until, 'failover');
  }

  /** Changes a number's limits; what it already sent keeps counting against the new ones. */
  setLimits(slot: number, perHour: number, per24h: number, perSecond: number): void {
    const t = this.#t;
    const phone = t.phones[slot]!;
    const oldPerHour = t.perHour[slot]!;
    t.perHour[slot] = perHour;
    t.per24h[slot] = per24h;
    t.perSecond[slot] = perSecond;
    this.#store.open(phone, limitsOf(perHour, per24h, perSecond), this.#at);
    this.#numberMarks.mark(slot);
    const b = t.businesses[t.numberBusiness[slot]!]!;
    const m = t.numberMember[slot]!;
    for (const pool of b.pools) pool.rateChanged(m, oldPerHour, perHour);
    this.requeue(slot);
  }

  /**
   * The per-second rate of numbers whose fleet entry sets none went from `before` to `perSecond`:
   * every such number still at `before` takes it (one changed since by a call keeps its own).
   */
  defaultRateChanged(before: number, perSecond: number): void {
    const t = this.#t;
    let slot = 0;
    for (const b of this.#fleet.businesses) {
      for (const n of b.numbers) {
        if (n.messagesPerSecond === undefined && t.perSecond[slot] === before) this.setLimits(slot, t.perHour[slot]!, t.per24h[slot]!, perSecond);
        slot++;
      }
    }
  }

  /** The number may send again sooner than its place in the waiting heap says: it leaves the heap for its pools' rings, and the queues look again. */
  requeue(slot: number): void {
    const b = this.#t.businesses[this.#t.numberBusiness[slot]!]!;
    const m = this.#t.numberMember[slot]!;
    for (const pool of b.pools) pool.requeue(m);
    this.#changed();
  }

  #emit(change: StatusChange): void {
    for (const listener of this.#listeners) listener(change);
  }

  #refreshMembers(pool: Pool): void {
    for (let m = 0; m < pool.members.length; m++) {
      const slot = pool.members[m]!;
      pool.setEligible(m, this.#t.numberActive[slot] === 1 && pool.hasTemplateFor(m), this.#t.perHour[slot]!);
    }
  }
}
