/**
 * The dispatch engine: the fleet as indexed arrays, one {@link Pool} per (business, template type),
 * limits in a {@link Store}, time from a {@link Clock}. Pure and synchronous: every call reads the
 * clock once, applies timed resumes that fell due, and answers.
 */
import type { Clock } from './clock.js';
import { ArgumentError, FleetValidationError, NotFoundError } from './errors.js';
import type { NumberStatus, TemplateStatus, TemplateVariable } from './fleet.js';
import { type Fleet, type FleetBusiness, type FleetTemplate, validateFleet } from './fleet-validate.js';
import { PhoneIndex } from './phone-index.js';
import { TimedHeap } from './timed-heap.js';
import { MemoryStore } from './limits/memory-store.js';
import type { NumberLimits, Store, StoreSnapshot } from './limits/store.js';
import { Pool, type TemplateView } from './pool.js';
import { type TemplateFields, fleetTemplateFields, templateTypeFields } from './template-fields.js';
import { describeValue } from './problems.js';
import { type NumberRates, sendDurationMs } from './send-estimate.js';
import { type EngineSnapshot, SNAPSHOT_FORMAT, SNAPSHOT_VERSION, type TemplateStatusSnapshot, checkSnapshot } from './snapshot.js';
import { type DispatchChanges, Dispatcher } from './dispatch/dispatcher.js';
import type {
  ContactOutcome,
  DispatchAnomaly,
  DispatchCounts,
  OutgoingMessage,
  PollOptions,
  QueueStatus,
  ReportResult,
  SendOutcome,
  SubmissionStatus,
  SubmitTicket,
} from './dispatch/types.js';
import type { Submission } from './submission.js';

/** Why `assign` handed out fewer pairs than asked. */
export type AssignReason = 'no-capacity' | 'no-template' | 'no-number';

/** One message's carrier: the number that sends it and the template it uses. */
export interface Assignment {
  readonly phone: string;
  readonly templateId: number;
}

/** Answer of {@link Engine.assign}. */
export interface AssignResult {
  readonly assignments: Assignment[];
  /** Present when fewer than `count` pairs were handed out. */
  readonly reason?: AssignReason;
  /** Clock time at which more may be handed out, when the engine can tell. */
  readonly retryAt?: number;
}

/** Answer of {@link Engine.assignInto}: how many slots of the output arrays were filled. */
export interface BatchResult {
  readonly count: number;
  readonly reason?: AssignReason;
  readonly retryAt?: number;
}

/** Typed arrays {@link Engine.assignInto} can fill. */
export type NumericArray = Int32Array | Uint32Array | Float64Array;

/**
 * One template type of the spec's GET /messenger/businesses/ response. `data`, `example` and
 * `variables` (spec 2.2, "under implementation") describe the type's active templates, in the order
 * of the fleet's `templateIds` (all of them when none is active); a type without templates has none
 * of the three.
 */
export interface TemplateTypeOutput {
  readonly id: number;
  readonly name: string;
  readonly output: number;
  /** Text of the first template described, with its `{{1}}`, `{{2}}`… placeholders. */
  readonly data?: string;
  /** That text with samples: the template's fleet `example`, or `[name]` for each placeholder. */
  readonly example?: string;
  /** One list per template described: `{ name, index }` per placeholder, in order of appearance. */
  readonly variables?: readonly (readonly TemplateVariable[])[];
}

/** One business of the spec's GET /messenger/businesses/ response. */
export interface BusinessOutput {
  readonly id: number;
  readonly name: string;
  readonly template_types: TemplateTypeOutput[];
}

/** A number as it stands now. */
export interface NumberView {
  readonly phone: string;
  readonly businessId: number;
  readonly status: NumberStatus;
  readonly pausedUntil?: number;
  readonly throughputPerHour: number;
  readonly messagingLimit24h: number;
  readonly messagesPerSecond?: number;
  /** Messages it may send now under all its windows. */
  readonly available: number;
}

/** A template as it stands now. */
export interface TemplateState {
  readonly id: number;
  readonly name: string;
  readonly status: TemplateStatus;
  readonly pausedUntil?: number;
  readonly businessIds: readonly number[];
  readonly placeholders: number;
}

/** A template type as the contract needs it to check contacts. */
export interface TemplateTypeInfo {
  readonly id: number;
  readonly name: string;
  readonly businessId: number;
  /** Values each contact must bring: every template of the type takes this many. */
  readonly placeholders: number;
  readonly templateIds: readonly number[];
}

/** New limits for a number; omitted fields keep their value, `messagesPerSecond: null` removes that window. */
export interface NumberLimitsChange {
  readonly throughputPerHour?: number;
  readonly messagingLimit24h?: number;
  readonly messagesPerSecond?: number | null;
}

/** Options of a status change. */
export interface StatusChangeOptions {
  /** With 'paused': clock time at which the pause ends by itself. */
  readonly until?: number;
  /**
   * Who made the change, passed on to status listeners (a shared fleet uses it not to echo a change
   * it received from another instance). @default 'api'
   */
  readonly source?: string;
}

/**
 * A status change of a number or template, as status listeners receive it. `source` is 'api'
 * (a call), 'failover' (a failure reported to the dispatch loop), 'timer' (a timed pause ended),
 * or what the caller passed.
 */
export type StatusChange =
  | { readonly kind: 'number'; readonly phone: string; readonly status: NumberStatus; readonly until?: number; readonly at: number; readonly source: string }
  | { readonly kind: 'template'; readonly templateId: number; readonly status: TemplateStatus; readonly until?: number; readonly at: number; readonly source: string };

/** Options of the pure engine; `createEngine` fills in the system clock. */
export interface CoreEngineOptions {
  /** Source of time, in milliseconds. */
  readonly clock: Clock;
  /** Where limit state lives. @default new MemoryStore() */
  readonly store?: Store;
  /** State to resume from, as written by {@link Engine.snapshot}. */
  readonly snapshot?: unknown;
  /** Keep a list of what changes, for {@link Engine.takeChanges}. @default false */
  readonly trackChanges?: boolean;
}

/** A number as a durable host keeps it: status and the store's limit usage. */
export interface NumberChange {
  readonly phone: string;
  readonly status: NumberStatus;
  readonly pausedUntil?: number;
  /** The store's state of the number, as its snapshot holds it under `numbers[phone]`. */
  readonly usage: unknown;
}

/**
 * What changed since the last `takeChanges()`: what a durable host writes in one commit. Rows kept
 * this way assemble into an engine snapshot again with {@link snapshotFromRows}.
 */
export interface EngineChanges extends DispatchChanges {
  /** Clock time the changes were taken. */
  readonly takenAt: number;
  /** Numbers whose status, limits or usage changed. */
  readonly numbers: readonly NumberChange[];
  /** Templates whose status changed. */
  readonly templates: readonly TemplateStatusSnapshot[];
  /** The store's snapshot without its numbers (e.g. `{ kind: 'memory', bucketMinutes: 60 }`). */
  readonly store: StoreSnapshot;
}

interface BusinessRecord {
  readonly id: number;
  readonly name: string;
  readonly companyId: number | undefined;
  readonly members: Int32Array;
  readonly pools: Pool[];
  readonly poolByType: Map<number, Pool>;
}

const NUMBER_STATUSES: readonly NumberStatus[] = ['active', 'paused'];
const TEMPLATE_STATUSES: readonly TemplateStatus[] = ['active', 'paused', 'disabled'];

export class Engine {
  readonly #clock: Clock;
  readonly #store: Store;
  #lastNow = 0;
  /** Templates as validated (texts, placeholders); numbers live only in the typed arrays below. */
  #templates: readonly FleetTemplate[] = [];
  /** Spec 2.2 fields of each template, derived on first use (the texts change only with the fleet). */
  #templateFields: (TemplateFields | undefined)[] = [];

  // Numbers, by slot.
  #phones: string[] = [];
  #numberIndex = new PhoneIndex(this.#phones);
  #numberBusiness = new Int32Array(0);
  #numberMember = new Int32Array(0);
  // Rates fit 32 bits exactly (at most 1e9 an hour, 1e6 a second); the 24 h limit does not.
  #perHour = new Uint32Array(0);
  #per24h = new Float64Array(0);
  #perSecond = new Uint32Array(0);
  #numberActive = new Uint8Array(0);
  /** End of a timed pause, for the few numbers that have one. */
  #numberUntil = new Map<number, number>();
  #numberGen = new Uint32Array(0);
  #handle = new Int32Array(0);

  // Templates, by index.
  #templateIds = new Float64Array(0);
  #templateIndex = new Map<number, number>();
  #templateStatus: TemplateStatus[] = [];
  #templateUntil = new Float64Array(0);
  #templateGen = new Uint32Array(0);
  #templateAccount: (string | undefined)[] = [];
  #templatePools: Pool[][] = [];
  readonly #view: TemplateView = {
    isActive: (t) => this.#templateStatus[t] === 'active',
    account: (t) => this.#templateAccount[t],
    id: (t) => this.#templateIds[t]!,
  };

  readonly #statusListeners = new Set<(change: StatusChange) => void>();
  readonly #anomalyListeners = new Set<(anomaly: DispatchAnomaly) => void>();
  #businesses: BusinessRecord[] = [];
  #businessIndex = new Map<number, number>();
  /** Timed resumes as (time, 2 x index + kind, generation); kind 0: number, 1: template. */
  #timers = new TimedHeap();

  // Per-call scratch: what each touched number may send and has been handed.
  #call = 0;
  /** Call number in which each number was last touched (wraps; cleared when it does). */
  #stamp = new Int32Array(0);
  /** Reserved for the number in this call and not handed out yet (at most one hour's capacity, < 2^31). */
  #avail = new Int32Array(0);
  /**
   * Flags per number in this call: DRAINED when the store granted less than asked (the number is
   * out, not merely under-estimated), LISTED once it is in `#touched` for the release pass.
   */
  #drained = new Uint8Array(0);
  #touched = new Int32Array(0);
  #outNumbers = new Int32Array(64);
  #outTemplates = new Float64Array(64);

  readonly #dispatch: Dispatcher;
  #tracking = false;
  /** Per number / template: changed since the last `takeChanges` (tracking on). */
  #numberDirty = new Uint8Array(0);
  #dirtyNumbers: number[] = [];
  #templateDirty = new Uint8Array(0);
  #dirtyTemplates: number[] = [];

  /**
   * @param fleet a fleet description (validated whole; nothing is built from one with problems)
   * @throws {FleetValidationError} listing every problem of the description
   */
  constructor(fleet: unknown, options: CoreEngineOptions) {
    this.#clock = options.clock;
    this.#store = options.store ?? new MemoryStore();
    this.#lastNow = this.#readClock();
    this.#dispatch = new Dispatcher({
      tick: () => this.#tick(),
      hasBusiness: (b) => this.#businessIndex.has(b),
      pool: (b, t) => {
        const index = this.#businessIndex.get(b);
        return index === undefined ? undefined : this.#businesses[index]!.poolByType.get(t);
      },
      placeholders: (b, t) => this.templateType(b, t)?.placeholders,
      fill: (pool, count, now, numbers, templates) => this.#fill(pool, count, now, numbers, templates),
      shortfall: (pool) => this.#shortfall(pool),
      probe: (pool, now) => this.#probe(pool, now),
      phoneAt: (slot) => this.#phones[slot]!,
      templateText: (id) => this.#templates[this.#templateIndex.get(id)!]!.text,
      pauseNumber: (phone, until) => {
        const slot = this.#numberIndex.get(phone);
        if (slot !== undefined) this.#setNumber(slot, false, until, 'failover');
      },
      setTemplate: (id, status, until) => {
        const t = this.#templateIndex.get(id);
        if (t !== undefined) this.#setTemplate(t, status, until, 'failover');
      },
      nextResumeAt: () => this.#nextTimer(),
      charged: (slot) => this.#markNumber(slot),
      anomaly: (message) => {
        const anomaly = { at: this.#lastNow, message };
        for (const listener of this.#anomalyListeners) listener(anomaly);
      },
    });
    const validation = validateFleet(fleet);
    if (!validation.ok) throw new FleetValidationError(validation.problems);
    this.#load(validation.fleet);
    if (options.snapshot !== undefined) this.#restore(options.snapshot);
    if (options.trackChanges === true) {
      if (typeof this.#store.snapshotNumbers !== 'function') {
        throw new ArgumentError('createEngine(options.trackChanges)', 'a store that can snapshot single numbers (snapshotNumbers), as MemoryStore', 'a store without it');
      }
      this.#tracking = true;
      this.#dispatch.track();
    }
  }

  // ---------------------------------------------------------------- queries

  /** The spec's GET /messenger/businesses/ response: every business with `output` per template type. */
  businesses(): BusinessOutput[] {
    const now = this.#tick();
    return this.#businesses.map((b) => ({
      id: b.id,
      name: b.name,
      template_types: b.pools.map((p) => ({ id: p.typeId, name: p.typeName, output: this.#output(p, now), ...this.#typeFields(p) })),
    }));
  }

  /** `data`, `example`, `variables` of a type: its active templates, or all when none is active. */
  #typeFields(pool: Pool): ReturnType<typeof templateTypeFields> {
    const active: TemplateFields[] = [];
    const all: TemplateFields[] = [];
    for (const t of pool.templates) {
      const fields = (this.#templateFields[t] ??= fleetTemplateFields(this.#templates[t]!));
      all.push(fields);
      if (this.#templateStatus[t] === 'active') active.push(fields);
    }
    return templateTypeFields(active.length > 0 ? active : all);
  }

  /** Messages that may be sent now for the type: the sum of what its eligible numbers may send. */
  output(businessId: number, typeId: number): number {
    const pool = this.#pool(businessId, typeId);
    return this.#output(pool, this.#tick());
  }

  /** Messages per hour of the type: the sum of `throughputPerHour` over its eligible numbers. */
  throughput(businessId: number, typeId: number): number {
    const pool = this.#pool(businessId, typeId);
    this.#tick();
    return pool.throughput;
  }

  /** The template type as the contract needs it, or undefined when the business has no such type. */
  templateType(businessId: number, typeId: number): TemplateTypeInfo | undefined {
    const b = this.#businessIndex.get(businessId);
    const pool = b === undefined ? undefined : this.#businesses[b]!.poolByType.get(typeId);
    if (!pool) return undefined;
    const templateIds = Array.from(pool.templates, (t) => this.#templateIds[t]!);
    const first = pool.templates[0];
    const placeholders = first === undefined ? 0 : this.#templates[first]!.placeholders;
    return { id: pool.typeId, name: pool.typeName, businessId, placeholders, templateIds };
  }

  /** Every number with its status, limits and what it may send now. */
  numbers(): NumberView[] {
    const now = this.#tick();
    return this.#phones.map((phone, slot) => {
      const until = this.#numberUntil.get(slot) ?? NaN;
      const perSecond = this.#perSecond[slot]!;
      return {
        phone,
        businessId: this.#businesses[this.#numberBusiness[slot]!]!.id,
        status: this.#numberActive[slot] === 1 ? 'active' : 'paused',
        ...(Number.isNaN(until) ? {} : { pausedUntil: until }),
        throughputPerHour: this.#perHour[slot]!,
        messagingLimit24h: this.#per24h[slot]!,
        ...(perSecond > 0 ? { messagesPerSecond: perSecond } : {}),
        available: this.#store.available(this.#handle[slot]!, now),
      };
    });
  }

  /** Every template with its status. */
  templates(): TemplateState[] {
    this.#tick();
    return this.#templates.map((t, i) => {
      const until = this.#templateUntil[i]!;
      return {
        id: t.id,
        name: t.name,
        status: this.#templateStatus[i]!,
        ...(Number.isNaN(until) ? {} : { pausedUntil: until }),
        businessIds: t.businessIds,
        placeholders: t.placeholders,
      };
    });
  }

  /** Phone of the number at `index`, as `assignInto` writes it. */
  phoneAt(index: number): string {
    const phone = this.#phones[index];
    if (phone === undefined) throw new NotFoundError('number', index, '(index)');
    return phone;
  }

  /** Phones by number index, for hosts that read `assignInto`'s output (do not modify). */
  phones(): readonly string[] {
    return this.#phones;
  }

  /** Company of a business (undefined when the fleet does not say). */
  companyOf(businessId: number): number | undefined {
    const b = this.#businessIndex.get(businessId);
    if (b === undefined) throw new NotFoundError('business', businessId);
    return this.#businesses[b]!.companyId;
  }

  /** Clock time of the next timed resume of a number or template, or undefined. */
  nextResumeAt(): number | undefined {
    this.#tick();
    return this.#nextTimer();
  }

  // ---------------------------------------------------------------- assignment

  /**
   * Hands out up to `count` (number, template) pairs that may go now and charges their capacity.
   * Fewer come back with a `reason` (and, when known, `retryAt`) when the pool runs short.
   */
  assign(businessId: number, typeId: number, count: number): AssignResult {
    checkCount('assign(count)', count);
    const pool = this.#pool(businessId, typeId);
    const now = this.#tick();
    if (this.#outNumbers.length < count) {
      this.#outNumbers = new Int32Array(count);
      this.#outTemplates = new Float64Array(count);
    }
    const n = this.#fill(pool, count, now, this.#outNumbers, this.#outTemplates);
    if (this.#tracking) for (let i = 0; i < n; i++) this.#markNumber(this.#outNumbers[i]!);
    const assignments: Assignment[] = new Array<Assignment>(n);
    for (let i = 0; i < n; i++) {
      assignments[i] = { phone: this.#phones[this.#outNumbers[i]!]!, templateId: this.#outTemplates[i]! };
    }
    if (n === count) return { assignments };
    return { assignments, ...this.#shortfall(pool) };
  }

  /**
   * The batch path: like `assign`, but writes number indexes (see `phones()`) and template ids into
   * caller-provided arrays from position 0, allocating nothing per pair.
   */
  assignInto(businessId: number, typeId: number, count: number, numbers: NumericArray, templates: NumericArray): BatchResult {
    checkCount('assignInto(count)', count);
    if (numbers.length < count || templates.length < count) {
      throw new ArgumentError('assignInto(numbers, templates)', `arrays of at least count = ${count} slots`, `${numbers.length} and ${templates.length}`);
    }
    const pool = this.#pool(businessId, typeId);
    const now = this.#tick();
    const n = this.#fill(pool, count, now, numbers, templates);
    if (this.#tracking) for (let i = 0; i < n; i++) this.#markNumber(numbers[i]!);
    if (n === count) return { count: n };
    return { count: n, ...this.#shortfall(pool) };
  }

  // ---------------------------------------------------------------- changes

  /**
   * Pauses or resumes a number (the platform's signal). A paused number leaves every pool of its
   * business at once; with `until`, it comes back by itself when the clock reaches that time.
   */
  setNumberStatus(phone: string, status: NumberStatus, options: StatusChangeOptions = {}): void {
    const slot = this.#slot(phone);
    if (!NUMBER_STATUSES.includes(status)) {
      throw new ArgumentError('setNumberStatus(status)', 'one of "active", "paused"', describeValue(status));
    }
    const until = checkUntil('setNumberStatus', status, options.until);
    this.#tick();
    this.#setNumber(slot, status === 'active', until, options.source ?? 'api');
  }

  /**
   * Pauses, disables or resumes a template. It leaves every pool it is in at once (a pool left with
   * no active template answers `no-template`); with `until`, a pause ends by itself.
   */
  setTemplateStatus(templateId: number, status: TemplateStatus, options: StatusChangeOptions = {}): void {
    const t = this.#templateIndex.get(templateId);
    if (t === undefined) throw new NotFoundError('template', templateId);
    if (!TEMPLATE_STATUSES.includes(status)) {
      throw new ArgumentError('setTemplateStatus(status)', 'one of "active", "paused", "disabled"', describeValue(status));
    }
    const until = checkUntil('setTemplateStatus', status, options.until);
    this.#tick();
    this.#setTemplate(t, status, until, options.source ?? 'api');
  }

  /**
   * Calls `listener` after every status change of a number or template from then on: calls, failovers
   * of the dispatch loop, timed resumes. Returns a function that removes the listener. Loading a
   * fleet or a snapshot does not call listeners.
   */
  onStatusChange(listener: (change: StatusChange) => void): () => void {
    this.#statusListeners.add(listener);
    return () => this.#statusListeners.delete(listener);
  }

  /**
   * Calls `listener` when the dispatch queue finds one of its own invariants broken (a bug in
   * sendpool): it repairs what it can and goes on instead of throwing inside `poll`, and this is
   * where a host logs it. Returns a function that removes the listener.
   */
  onAnomaly(listener: (anomaly: DispatchAnomaly) => void): () => void {
    this.#anomalyListeners.add(listener);
    return () => this.#anomalyListeners.delete(listener);
  }

  /**
   * Tells the engine that a number may send again sooner than the store said (a shared store's
   * lease arrived): the number leaves the waiting heap for its pools' rings, and the dispatch loop
   * looks again. Unknown phones are ignored (the fleet may have changed since).
   */
  capacityChanged(phone: string): void {
    const slot = this.#numberIndex.get(phone);
    if (slot === undefined) return;
    const b = this.#businesses[this.#numberBusiness[slot]!]!;
    const m = this.#numberMember[slot]!;
    for (const pool of b.pools) pool.requeue(m);
    this.#dispatch.poke();
  }

  /** Changes a number's limits; what it already sent keeps counting against the new ones. */
  setNumberLimits(phone: string, change: NumberLimitsChange): void {
    const slot = this.#slot(phone);
    const perHour = change.throughputPerHour ?? this.#perHour[slot]!;
    const per24h = change.messagingLimit24h ?? this.#per24h[slot]!;
    const perSecond = change.messagesPerSecond === null ? 0 : (change.messagesPerSecond ?? this.#perSecond[slot]!);
    const probe = validateFleet({
      businesses: [
        {
          id: 1,
          name: 'limits',
          numbers: [{ phone, throughputPerHour: perHour, messagingLimit24h: per24h, ...(perSecond > 0 ? { messagesPerSecond: perSecond } : {}) }],
          templateTypes: [],
        },
      ],
      templates: [],
    });
    if (!probe.ok) {
      throw new FleetValidationError(
        probe.problems.map((p) => ({ ...p, path: p.path.replace('$.businesses[0].numbers[0]', '$'), message: p.message.replace('$.businesses[0].numbers[0]', '$') })),
        `limits for ${phone}`,
      );
    }
    this.#tick();
    const oldPerHour = this.#perHour[slot]!;
    this.#perHour[slot] = perHour;
    this.#per24h[slot] = per24h;
    this.#perSecond[slot] = perSecond;
    this.#store.open(phone, limitsOf(perHour, per24h, perSecond), this.#lastNow);
    this.#markNumber(slot);
    const b = this.#businesses[this.#numberBusiness[slot]!]!;
    const m = this.#numberMember[slot]!;
    for (const pool of b.pools) pool.rateChanged(m, oldPerHour, perHour);
    this.capacityChanged(phone);
  }

  /**
   * Replaces the fleet description whole (numbers, templates, types and their statuses). Limit
   * usage is kept for every phone that stays; the description is validated before anything changes.
   * @throws {FleetValidationError} and changes nothing when the description has problems
   */
  replaceFleet(fleet: unknown): void {
    const validation = validateFleet(fleet);
    if (!validation.ok) throw new FleetValidationError(validation.problems);
    const now = this.#tick();
    this.#load(validation.fleet);
    this.#dispatch.fleetChanged(now);
  }

  // ---------------------------------------------------------------- dispatch loop

  /**
   * Queues the contacts of one send for its (business, template type). Contacts that can never go
   * (bad phone, wrong number of values) are rejected at once and reported as outcomes.
   * @throws {SubmissionError} for an unknown business or type, bad retries, or no contacts
   */
  submit(submission: Submission): SubmitTicket {
    return this.#dispatch.submit(submission);
  }

  /** The messages that may go now, with their pairs and rendered text; capacity is charged. */
  poll(options?: PollOptions): OutgoingMessage[] {
    return this.#dispatch.poll(options);
  }

  /**
   * Clock time at which `poll()` can hand out more, or a timer falls due (retry, deadline, timed
   * resume); `now` only when `poll()` would hand out at once; null when nothing will happen by the
   * clock alone (nothing waits, or only a call such as a resume can unblock what waits).
   */
  nextWakeAt(): number | null {
    return this.#dispatch.nextWakeAt();
  }

  /** What the channel said of a message handed out by `poll()`. */
  report(messageId: string, outcome: SendOutcome): ReportResult {
    return this.#dispatch.report(messageId, outcome);
  }

  /** Contacts per state over every submission; they always add up to `submitted`. Deadlines due by now are applied first. */
  stats(): DispatchCounts {
    this.#tick();
    return this.#dispatch.stats();
  }

  /** One submission's contacts per state, and what holds it back if anything. */
  submissionStatus(submissionId: string): SubmissionStatus {
    this.#tick();
    return this.#dispatch.submissionStatus(submissionId);
  }

  /** Contacts queued and waiting for a retry for a (business, type), and what holds them back, if anything. */
  queueStatus(businessId: number, typeId: number): QueueStatus {
    this.#pool(businessId, typeId);
    this.#tick();
    return this.#dispatch.queueStatus(businessId, typeId);
  }

  /**
   * An estimate of the clock time by which the type's numbers could have sent `count` more
   * messages, from where they stand: what they may send now goes at once; the rest at their rates
   * (hourly, or per second when lower; their 24 h limits over longer spans: `sendDurationMs`),
   * from now; when none may send now, the first goes when a number regains capacity (its window
   * resets) or a timed pause of a number or template ends, and the rest at their rates from then. For a caller's wait, such as an HTTP
   * `Retry-After`; the engine does not schedule by it. undefined when only a call (a resume, a
   * limit change) can make the type send again.
   * @throws {NotFoundError} for an unknown business or type
   */
  estimateSendTime(businessId: number, typeId: number, count: number): number | undefined {
    checkCount('estimateSendTime(count)', count);
    const pool = this.#pool(businessId, typeId);
    const now = this.#tick();
    if (count === 0) return now;
    const held = this.#probe(pool, now);
    let start = now;
    let left = count;
    if (held === undefined) {
      left -= this.#output(pool, now);
      if (left <= 0) return now;
    } else if (held.retryAt === undefined) return undefined;
    else {
      // At `retryAt` the first number may send at least one.
      start = held.retryAt;
      left -= 1;
      if (left === 0) return start;
    }
    const ms = sendDurationMs(left, this.#ratesOf(pool));
    return Number.isFinite(ms) ? start + ms : undefined;
  }

  /** Clock time at which the earliest contact waiting for its retry falls due; undefined when none waits. */
  nextRetryAt(): number | undefined {
    this.#tick();
    return this.#dispatch.nextRetryAt();
  }

  /** Terminal outcomes (sent, failed, expired, rejected) since the last call, each exactly once. */
  takeOutcomes(): ContactOutcome[] {
    return this.#dispatch.takeOutcomes();
  }

  // ---------------------------------------------------------------- changes for a durable host

  /**
   * What changed since the last call (needs `trackChanges`): submissions (contacts the first time),
   * finished submissions, numbers' status and usage, templates' status. A host writes them in one
   * commit before it lets anything out (a 202, a send); rows kept this way give the engine back with
   * {@link snapshotFromRows}. With `full`, everything live, as after a restore from a snapshot file.
   * Usage charged by `assign`/`assignInto` is tracked too.
   *
   * Take changes last in a step, after `takeOutcomes()`: any call may apply what fell due (an expiry
   * read by `stats()` is an outcome too), and the rows must hold every outcome the host handled.
   * @throws {ArgumentError} when the engine was created without `trackChanges`
   */
  takeChanges(options: { readonly full?: boolean } = {}): EngineChanges {
    if (!this.#tracking) throw new ArgumentError('takeChanges()', 'an engine created with trackChanges: true', 'trackChanges off');
    const now = this.#tick();
    const full = options.full === true;
    const dispatch = this.#dispatch.takeChanges(full);
    const slots = full ? Array.from(this.#phones, (_, i) => i) : this.#dirtyNumbers;
    const partial = this.#store.snapshotNumbers!(slots.map((slot) => this.#handle[slot]!));
    const { numbers: usage, ...store } = partial as StoreSnapshot & { numbers?: Record<string, unknown> };
    const numbers = slots.map((slot): NumberChange => {
      this.#numberDirty[slot] = 0;
      const phone = this.#phones[slot]!;
      const until = this.#numberUntil.get(slot);
      return { phone, status: this.#numberActive[slot] === 1 ? 'active' : 'paused', ...(until !== undefined ? { pausedUntil: until } : {}), usage: usage?.[phone] ?? null };
    });
    const templateIndexes = full ? Array.from(this.#templates, (_, i) => i) : this.#dirtyTemplates;
    const templates = templateIndexes.map((t): TemplateStatusSnapshot => {
      this.#templateDirty[t] = 0;
      const until = this.#templateUntil[t]!;
      return { id: this.#templateIds[t]!, status: this.#templateStatus[t]!, ...(Number.isNaN(until) ? {} : { pausedUntil: until }) };
    });
    this.#dirtyNumbers = [];
    this.#dirtyTemplates = [];
    return { ...dispatch, takenAt: now, numbers, templates, store };
  }

  #markNumber(slot: number): void {
    if (!this.#tracking || this.#numberDirty[slot] === 1) return;
    this.#numberDirty[slot] = 1;
    this.#dirtyNumbers.push(slot);
  }

  #markTemplate(t: number): void {
    if (!this.#tracking || this.#templateDirty[t] === 1) return;
    this.#templateDirty[t] = 1;
    this.#dirtyTemplates.push(t);
  }

  // ---------------------------------------------------------------- snapshots

  /** Everything needed to resume after a restart without over-sending, as plain JSON. */
  snapshot(): EngineSnapshot {
    const now = this.#tick();
    return {
      format: SNAPSHOT_FORMAT,
      version: SNAPSHOT_VERSION,
      takenAt: now,
      store: this.#store.snapshot(),
      numbers: this.#phones.map((phone, slot) => {
        const until = this.#numberUntil.get(slot) ?? NaN;
        return { phone, status: this.#numberActive[slot] === 1 ? 'active' : 'paused', ...(Number.isNaN(until) ? {} : { pausedUntil: until }) };
      }),
      templates: this.#templates.map((t, i) => {
        const until = this.#templateUntil[i]!;
        return { id: t.id, status: this.#templateStatus[i]!, ...(Number.isNaN(until) ? {} : { pausedUntil: until }) };
      }),
      dispatch: this.#dispatch.snapshot(),
      pools: this.#businesses.flatMap((b) =>
        b.pools.map((p) => {
          const rotation = p.exportRotation();
          return {
            businessId: b.id,
            typeId: p.typeId,
            ring: rotation.ring.map((m) => this.#phones[p.members[m]!]!),
            waiting: rotation.waiting.map(([m, at]) => [this.#phones[p.members[m]!]!, at] as const),
            cursors: Array.from(p.classTemplates, (list, c) => list[p.classCursor[c]!] ?? null),
          };
        }),
      ),
    };
  }

  // ---------------------------------------------------------------- internals

  #readClock(): number {
    const now = this.#clock.now();
    if (!Number.isSafeInteger(now) || now < 0) {
      throw new ArgumentError('clock.now()', 'a whole number of milliseconds, 0 or more', describeValue(now));
    }
    // A system clock stepped back must not un-spend limits: time here never goes back.
    return now > this.#lastNow ? now : this.#lastNow;
  }

  /** Reads the clock once and applies timed resumes due by then. */
  #tick(): number {
    const now = this.#readClock();
    this.#lastNow = now;
    const timers = this.#timers;
    while (timers.size > 0 && timers.topAt() <= now) {
      const id = timers.topId();
      const gen = timers.topGen();
      timers.pop();
      const index = id >> 1;
      if ((id & 1) === 0) {
        if (this.#numberGen[index] === gen) this.#setNumber(index, true, undefined, 'timer');
      } else if (this.#templateGen[index] === gen) {
        this.#setTemplate(index, 'active', undefined, 'timer');
      }
    }
    return now;
  }

  #nextTimer(): number | undefined {
    const timers = this.#timers;
    while (timers.size > 0) {
      const id = timers.topId();
      const index = id >> 1;
      if (((id & 1) === 0 ? this.#numberGen[index] : this.#templateGen[index]) === timers.topGen()) return timers.topAt();
      timers.pop();
    }
    return undefined;
  }


  #setNumber(slot: number, active: boolean, until: number | undefined, source?: string): void {
    this.#markNumber(slot);
    this.#numberGen[slot]!++;
    this.#numberActive[slot] = active ? 1 : 0;
    if (until === undefined) this.#numberUntil.delete(slot);
    else this.#numberUntil.set(slot, until);
    if (until !== undefined) this.#timers.push(until, slot * 2, this.#numberGen[slot]!);
    const b = this.#businesses[this.#numberBusiness[slot]!]!;
    const m = this.#numberMember[slot]!;
    const perHour = this.#perHour[slot]!;
    for (const pool of b.pools) pool.setEligible(m, active && pool.hasTemplateFor(m), perHour);
    // Any change may move what blocks a queue (or when it lifts): queues look again on the next poll.
    this.#dispatch.poke();
    if (source !== undefined && this.#statusListeners.size > 0) {
      this.#emitStatus({ kind: 'number', phone: this.#phones[slot]!, status: active ? 'active' : 'paused', ...(until !== undefined ? { until } : {}), at: this.#lastNow, source });
    }
  }

  #setTemplate(t: number, status: TemplateStatus, until: number | undefined, source?: string): void {
    this.#markTemplate(t);
    this.#templateGen[t]!++;
    this.#templateStatus[t] = status;
    this.#templateUntil[t] = until ?? NaN;
    if (until !== undefined) this.#timers.push(until, t * 2 + 1, this.#templateGen[t]!);
    for (const pool of this.#templatePools[t]!) {
      if (pool.refreshTemplates(this.#view)) this.#refreshMembers(pool);
    }
    this.#dispatch.poke();
    if (source !== undefined && this.#statusListeners.size > 0) {
      this.#emitStatus({ kind: 'template', templateId: this.#templateIds[t]!, status, ...(until !== undefined ? { until } : {}), at: this.#lastNow, source });
    }
  }

  #emitStatus(change: StatusChange): void {
    for (const listener of this.#statusListeners) listener(change);
  }

  #refreshMembers(pool: Pool): void {
    for (let m = 0; m < pool.members.length; m++) {
      const slot = pool.members[m]!;
      pool.setEligible(m, this.#numberActive[slot] === 1 && pool.hasTemplateFor(m), this.#perHour[slot]!);
    }
  }

  #slot(phone: string): number {
    const slot = this.#numberIndex.get(phone);
    if (slot === undefined) throw new NotFoundError('number', phone);
    return slot;
  }

  #pool(businessId: number, typeId: number): Pool {
    const b = this.#businessIndex.get(businessId);
    if (b === undefined) throw new NotFoundError('business', businessId);
    const pool = this.#businesses[b]!.poolByType.get(typeId);
    if (pool === undefined) throw new NotFoundError('template type', typeId, `in business ${businessId}`);
    return pool;
  }

  /**
   * The windows of the numbers that will carry the pool: its eligible members; when it has none
   * (every number or template stopped), those that are active or come back by themselves.
   */
  #ratesOf(pool: Pool): NumberRates[] {
    const rates: NumberRates[] = [];
    const stopped = pool.eligibleCount === 0;
    for (let m = 0; m < pool.members.length; m++) {
      const slot = pool.members[m]!;
      const carries = stopped ? this.#numberActive[slot] === 1 || this.#numberUntil.has(slot) : pool.eligible[m] === 1;
      if (carries) rates.push({ perHour: this.#perHour[slot]!, per24h: this.#per24h[slot]!, perSecond: this.#perSecond[slot]! });
    }
    return rates;
  }

  #output(pool: Pool, now: number): number {
    let sum = 0;
    for (let m = 0; m < pool.members.length; m++) {
      if (pool.eligible[m] === 1) sum += this.#store.available(this.#handle[pool.members[m]!]!, now);
    }
    return sum;
  }

  /**
   * The hot path: serves the ring round-robin from `head`, the served member going to the tail.
   * Two loops, because the two shapes of call pay for different things and each loop keeps its own
   * few values in registers:
   * - sparse (`count` no more than the ring holds, as 10,000 of 100,000 numbers): a member gets one
   *   turn, more only if others leave the ring, and each turn reserves its one message;
   * - dense (as 10,000 of 100 numbers): at a number's first turn, the store reserves as many
   *   messages as the rotation will give it (`ceil(left / ring size)`), later turns count them down,
   *   and what is not handed out is released at the end. One store operation per number per call.
   * Reserving one message k times at one `now` is reserving k, so both give the same assignments.
   */
  #fill(pool: Pool, count: number, now: number, outNumbers: NumericArray, outTemplates: NumericArray): number {
    // A pool with nobody eligible is left as it is, so the rotation resumes where it stopped.
    if (pool.eligibleCount === 0) return 0;
    pool.wake(now);
    return count <= pool.size ? this.#fillSparse(pool, count, now, outNumbers, outTemplates) : this.#fillDense(pool, count, now, outNumbers, outTemplates);
  }

  #fillSparse(pool: Pool, count: number, now: number, outNumbers: NumericArray, outTemplates: NumericArray): number {
    const store = this.#store;
    const handle = this.#handle;
    const ring = pool.ring;
    const cap = ring.length;
    const firstSlot = pool.firstSlot;
    const firstHandle = pool.firstHandle;
    const eligible = pool.eligible;
    // One account class (no accounts in the fleet) is the common case: its template rotation is a
    // local cursor over one array, written back once.
    const oneClass = pool.classTemplates.length === 1;
    const ids = pool.classTemplates[0]!;
    const idCount = ids.length;
    let cursor = pool.classCursor[0]!;
    let head = pool.head;
    let size = pool.size;
    // Turns the store's short path answers run in the inner loop, which calls nothing; the rest
    // (an ineligible member, one out of capacity, an answer the short path cannot give) go below,
    // where the member is served by the same steps. Measured 5 to 10 % faster at 100,000 numbers
    // than one loop falling back to `reserve` in place (docs/engine.md, "The hot loops").
    const quick = typeof store.reserveOne === 'function';
    let i = 0;
    while (i < count && size > 0) {
      while (i < count && size > 0) {
        const m = ring[head]!;
        if (eligible[m] === 0 || !quick || store.reserveOne!(firstHandle >= 0 ? firstHandle + m : handle[firstSlot + m]!, now) !== 1) break;
        outNumbers[i] = firstSlot + m;
        if (oneClass) {
          outTemplates[i] = ids[cursor]!;
          cursor = cursor + 1 === idCount ? 0 : cursor + 1;
        } else {
          outTemplates[i] = this.#nextTemplate(pool, m);
        }
        i++;
        let tail = head + size;
        if (tail >= cap) tail -= cap;
        ring[tail] = m;
        head = head + 1 === cap ? 0 : head + 1;
      }
      if (i === count || size === 0) break;
      // The member at the head: ineligible (it leaves), or the store's full answer for its message.
      const m = ring[head]!;
      const slot = firstSlot + m;
      if (eligible[m] === 1 && store.reserve(firstHandle >= 0 ? firstHandle + m : handle[slot]!, 1, now) === 1) {
        outNumbers[i] = slot;
        outTemplates[i] = oneClass ? ids[cursor]! : this.#nextTemplate(pool, m);
        if (oneClass) cursor = cursor + 1 === idCount ? 0 : cursor + 1;
        i++;
        let tail = head + size;
        if (tail >= cap) tail -= cap;
        ring[tail] = m;
        head = head + 1 === cap ? 0 : head + 1;
      } else {
        this.#leaveRing(pool, m, slot, now);
        head = head + 1 === cap ? 0 : head + 1;
        size--;
      }
    }
    if (oneClass) pool.classCursor[0] = cursor;
    pool.head = head;
    pool.size = size;
    return i;
  }

  #fillDense(pool: Pool, count: number, now: number, outNumbers: NumericArray, outTemplates: NumericArray): number {
    if (this.#call === 0x3fffffff) {
      // The call counter wraps: forget old stamps so none can match a new call by chance. It stays
      // below 2^30, in V8's small-integer range, so the loop compares stamps as integers.
      this.#stamp.fill(0);
      this.#call = 0;
    }
    const call = ++this.#call;
    const stamp = this.#stamp;
    const avail = this.#avail;
    const drained = this.#drained;
    const touched = this.#touched;
    const handle = this.#handle;
    const store = this.#store;
    const ring = pool.ring;
    const cap = ring.length;
    const firstSlot = pool.firstSlot;
    const firstHandle = pool.firstHandle;
    const eligible = pool.eligible;
    const oneClass = pool.classTemplates.length === 1;
    const ids = pool.classTemplates[0]!;
    const idCount = ids.length;
    let cursor = pool.classCursor[0]!;
    let head = pool.head;
    let size = pool.size;
    let touchedCount = 0;
    let i = 0;
    while (i < count && size > 0) {
      // Turns that count down what the number already holds: no call in this loop, so the
      // compiler checks the arrays once for the loop rather than once per turn.
      while (i < count) {
        const m = ring[head]!;
        const slot = firstSlot + m;
        const a = avail[slot]!;
        if (stamp[slot] !== call || a === 0) break;
        avail[slot] = a - 1;
        outNumbers[i] = slot;
        if (oneClass) {
          outTemplates[i] = ids[cursor]!;
          cursor = cursor + 1 === idCount ? 0 : cursor + 1;
        } else {
          outTemplates[i] = this.#nextTemplate(pool, m);
        }
        i++;
        // Rotate: the served member goes to the tail (with a full ring, tail and head coincide).
        let tail = head + size;
        if (tail >= cap) tail -= cap;
        ring[tail] = m;
        head = head + 1 === cap ? 0 : head + 1;
      }
      if (i === count) break;
      // The number at the head has its first turn in this call, or its estimate ran out before
      // the rotation did (others left the ring). Eligibility is checked here only: it cannot change
      // during a call, and a member found ineligible leaves the ring.
      const m = ring[head]!;
      const slot = firstSlot + m;
      const first = stamp[slot] !== call;
      let a = 0;
      if (eligible[m] === 1 && (first || (drained[slot]! & Flag.DRAINED) === 0)) {
        const listed = first ? 0 : drained[slot]! & Flag.LISTED;
        stamp[slot] = call;
        const left = count - i;
        const want = left <= size ? 1 : Math.ceil(left / size);
        // `| 0`: a grant is a whole number under 2^31 (an hour's capacity at most).
        a = store.reserve(firstHandle >= 0 ? firstHandle + m : handle[slot]!, want, now) | 0;
        if (want > 1 && listed === 0) {
          // Only reservations of more than one may leave some to release: listed once per call.
          touched[touchedCount++] = slot;
          drained[slot] = a < want ? Flag.DRAINED | Flag.LISTED : Flag.LISTED;
        } else {
          drained[slot] = a < want ? Flag.DRAINED | listed : listed;
        }
      }
      if (a === 0) {
        // Nothing of this call's is left to release for it (drained, or never reserved if ineligible).
        avail[slot] = 0;
        this.#leaveRing(pool, m, slot, now);
        head = head + 1 === cap ? 0 : head + 1;
        size--;
      } else {
        // Held now: the next inner turn serves it.
        avail[slot] = a;
      }
    }
    if (oneClass) pool.classCursor[0] = cursor;
    pool.head = head;
    pool.size = size;
    for (let k = 0; k < touchedCount; k++) {
      const slot = touched[k]!;
      const unused = avail[slot]!;
      if (unused > 0) {
        store.release(handle[slot]!, unused, now);
        avail[slot] = 0;
      }
    }
    return i;
  }

  /**
   * Member `m` at the head leaves the ring: dropped if it is no longer eligible (lazy removal),
   * else parked until its number has capacity again.
   */
  #leaveRing(pool: Pool, m: number, slot: number, now: number): void {
    pool.inRing[m] = 0;
    if (pool.eligible[m] === 1) pool.park(m, this.#store.availableAt(this.#handle[slot]!, 1, now));
  }

  /** Next template of member `m`'s account class (pools with accounts). */
  #nextTemplate(pool: Pool, m: number): number {
    const c = pool.classOf[m]!;
    const list = pool.classTemplates[c]!;
    const k = pool.classCursor[c]!;
    pool.classCursor[c] = k + 1 === list.length ? 0 : k + 1;
    return list[k]!;
  }

  #shortfall(pool: Pool): { reason: AssignReason; retryAt?: number } {
    if (pool.activeTemplates === 0) {
      let at = Infinity;
      for (const t of pool.templates) {
        const until = this.#templateUntil[t]!;
        if (this.#templateStatus[t] === 'paused' && until < at) at = until;
      }
      return Number.isFinite(at) ? { reason: 'no-template', retryAt: at } : { reason: 'no-template' };
    }
    if (pool.eligibleCount === 0) {
      let at = Infinity;
      for (const slot of pool.members) {
        const until = this.#numberUntil.get(slot);
        if (this.#numberActive[slot] === 0 && until !== undefined && until < at) at = until;
      }
      return Number.isFinite(at) ? { reason: 'no-number', retryAt: at } : { reason: 'no-number' };
    }
    const at = pool.nextReadyAt();
    return at === undefined || !Number.isFinite(at) ? { reason: 'no-capacity' } : { reason: 'no-capacity', retryAt: at };
  }

  /**
   * Whether a fill at `now` would hand out at least one message (undefined), else what holds the
   * pool. Members at the ring's head that cannot send leave it exactly as a fill would take them off
   * (parked until their capacity returns, or dropped when no longer eligible), so asking changes no
   * assignment that follows.
   */
  #probe(pool: Pool, now: number): { reason: AssignReason; retryAt?: number } | undefined {
    if (pool.activeTemplates > 0 && pool.eligibleCount > 0) {
      pool.wake(now);
      while (pool.size > 0) {
        const m = pool.ring[pool.head]!;
        const slot = pool.firstSlot + m;
        if (pool.eligible[m] === 1 && this.#store.available(this.#handle[slot]!, now) >= 1) return undefined;
        this.#leaveRing(pool, m, slot, now);
        pool.head = pool.head + 1 === pool.ring.length ? 0 : pool.head + 1;
        pool.size--;
      }
    }
    return this.#shortfall(pool);
  }

  /** Builds every index from a fleet description; keeps store state by phone. */
  #load(fleet: Fleet): void {
    const numberCount = fleet.businesses.reduce((n, b) => n + b.numbers.length, 0);
    this.#templates = fleet.templates;
    this.#templateFields = [];
    this.#phones = [];
    this.#numberIndex = new PhoneIndex(this.#phones);
    this.#numberIndex.sizeFor(numberCount);
    this.#store.sizeFor?.(numberCount);
    this.#numberBusiness = new Int32Array(numberCount);
    this.#numberMember = new Int32Array(numberCount);
    this.#perHour = new Uint32Array(numberCount);
    this.#per24h = new Float64Array(numberCount);
    this.#perSecond = new Uint32Array(numberCount);
    this.#numberActive = new Uint8Array(numberCount);
    this.#numberUntil = new Map();
    this.#numberGen = new Uint32Array(numberCount);
    this.#handle = new Int32Array(numberCount);
    // Int32, not Uint32: V8 reads a Uint32 element as a double (it may exceed 2^31) and converts it
    // back to compare it. Both fit: stamps wrap at 2^30 - 1, and a reservation is at most an hour's
    // capacity (1e9 at most).
    this.#stamp = new Int32Array(numberCount);
    this.#avail = new Int32Array(numberCount);
    this.#drained = new Uint8Array(numberCount);
    this.#touched = new Int32Array(numberCount);
    this.#call = 0;
    this.#timers = new TimedHeap();
    // A new fleet changes every number and template for a durable host: all are written again.
    this.#numberDirty = new Uint8Array(numberCount).fill(this.#tracking ? 1 : 0);
    this.#dirtyNumbers = this.#tracking ? Array.from({ length: numberCount }, (_, i) => i) : [];

    const templateCount = fleet.templates.length;
    this.#templateIds = new Float64Array(templateCount);
    this.#templateIndex = new Map();
    this.#templateStatus = [];
    this.#templateUntil = new Float64Array(templateCount).fill(NaN);
    this.#templateGen = new Uint32Array(templateCount);
    this.#templateAccount = [];
    this.#templatePools = [];
    this.#templateDirty = new Uint8Array(templateCount).fill(this.#tracking ? 1 : 0);
    this.#dirtyTemplates = this.#tracking ? Array.from({ length: templateCount }, (_, i) => i) : [];
    fleet.templates.forEach((t, i) => {
      this.#templateIds[i] = t.id;
      this.#templateIndex.set(t.id, i);
      this.#templateStatus[i] = t.status;
      this.#templateAccount[i] = t.account;
      this.#templatePools[i] = [];
    });

    this.#businesses = [];
    this.#businessIndex = new Map();
    let slot = 0;
    fleet.businesses.forEach((b, bi) => {
      const members = new Int32Array(b.numbers.length);
      const accounts: (string | undefined)[] = [undefined];
      const classOf = new Int32Array(b.numbers.length);
      b.numbers.forEach((n, m) => {
        members[m] = slot;
        this.#phones[slot] = n.phone;
        this.#numberIndex.add(slot);
        this.#numberBusiness[slot] = bi;
        this.#numberMember[slot] = m;
        this.#perHour[slot] = n.throughputPerHour;
        this.#per24h[slot] = n.messagingLimit24h;
        this.#perSecond[slot] = n.messagesPerSecond ?? 0;
        this.#handle[slot] = this.#store.open(n.phone, limitsOf(n.throughputPerHour, n.messagingLimit24h, n.messagesPerSecond ?? 0), this.#lastNow);
        if (n.account !== undefined) {
          let c = accounts.indexOf(n.account);
          if (c < 0) c = accounts.push(n.account) - 1;
          classOf[m] = c;
        }
        slot++;
      });
      const record: BusinessRecord = { id: b.id, name: b.name, companyId: b.companyId, members, pools: [], poolByType: new Map() };
      const firstHandle = this.#consecutiveHandles(members);
      for (const type of b.templateTypes) {
        const templates = Int32Array.from(type.templateIds, (id) => this.#templateIndex.get(id)!);
        const pool = new Pool(b.id, type.id, type.name, templates, members, classOf, accounts);
        pool.firstHandle = firstHandle;
        for (const t of templates) this.#templatePools[t]!.push(pool);
        record.pools.push(pool);
        record.poolByType.set(type.id, pool);
      }
      this.#businesses.push(record);
      this.#businessIndex.set(b.id, bi);
    });

    // Statuses last, through the same paths as run-time changes, so pools start consistent.
    for (const pool of this.#businesses.flatMap((b) => b.pools)) pool.refreshTemplates(this.#view);
    fleet.templates.forEach((t, i) => {
      if (t.status === 'paused' && t.pausedUntil !== undefined) this.#setTemplate(i, 'paused', t.pausedUntil);
    });
    fleet.businesses.forEach((b: FleetBusiness, bi) => {
      const record = this.#businesses[bi]!;
      b.numbers.forEach((n, m) => {
        this.#setNumber(record.members[m]!, n.status === 'active', n.status === 'paused' ? n.pausedUntil : undefined);
      });
    });
  }

  /** Handle of the first of `slots` if their handles are consecutive, else -1 (see Pool.firstHandle). */
  #consecutiveHandles(slots: Int32Array): number {
    if (slots.length === 0) return -1;
    const first = this.#handle[slots[0]!]!;
    for (let m = 1; m < slots.length; m++) if (this.#handle[slots[m]!] !== first + m) return -1;
    return first;
  }

  #restore(input: unknown): void {
    const snapshot = checkSnapshot(input);
    this.#store.restore(snapshot.store, this.#lastNow);
    for (const n of snapshot.numbers) {
      const slot = this.#numberIndex.get(n.phone);
      if (slot !== undefined) this.#setNumber(slot, n.status === 'active', n.status === 'paused' ? n.pausedUntil : undefined);
    }
    for (const t of snapshot.templates) {
      const i = this.#templateIndex.get(t.id);
      if (i !== undefined) this.#setTemplate(i, t.status, t.status === 'paused' ? t.pausedUntil : undefined);
    }
    for (const p of snapshot.pools) {
      const b = this.#businessIndex.get(p.businessId);
      const pool = b === undefined ? undefined : this.#businesses[b]!.poolByType.get(p.typeId);
      if (!pool) continue;
      // Phones of another business (the fleet changed in between) are not members here.
      const member = (phone: string): number => {
        const slot = this.#numberIndex.get(phone);
        return slot !== undefined && this.#numberBusiness[slot] === b ? this.#numberMember[slot]! : -1;
      };
      pool.importRotation(
        p.ring.map(member),
        p.waiting.map(([phone, at]) => [member(phone), at] as const),
      );
      p.cursors.forEach((id, c) => {
        const at = id === null ? -1 : (pool.classTemplates[c]?.indexOf(id) ?? -1);
        if (at >= 0) pool.classCursor[c] = at;
      });
    }
    if (snapshot['dispatch'] !== undefined) this.#dispatch.restore(snapshot['dispatch']);
    this.#tick();
  }
}

/**
 * Flags of a number within one call (a const enum: uses compile to literals, so the hot loop does
 * no module-scope lookup, which costs a check each when the module is not bundled).
 */
const enum Flag {
  /** The store granted less than asked this call, so the number is out, not merely under-estimated. */
  DRAINED = 1,
  /** The number is in `#touched` for the release pass of this call. */
  LISTED = 2,
}

function limitsOf(perHour: number, per24h: number, perSecond: number): NumberLimits {
  return perSecond > 0 ? { perHour, per24h, perSecond } : { perHour, per24h };
}

function checkCount(argument: string, count: number): void {
  if (!Number.isSafeInteger(count) || count < 0) {
    throw new ArgumentError(argument, 'a whole number, 0 or more', describeValue(count));
  }
}

function checkUntil(api: string, status: string, until: number | undefined): number | undefined {
  if (until === undefined) return undefined;
  if (status !== 'paused') {
    throw new ArgumentError(`${api}(options.until)`, 'absent unless the status is "paused"', describeValue(until));
  }
  if (!Number.isSafeInteger(until) || until < 0) {
    throw new ArgumentError(`${api}(options.until)`, 'a clock time in whole milliseconds, 0 or more', describeValue(until));
  }
  return until;
}
