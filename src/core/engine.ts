/**
 * The dispatch engine: the fleet as indexed arrays, one {@link Pool} per (business, template type),
 * limits in a {@link Store}, time from a {@link Clock}. Pure and synchronous: every call reads the
 * clock once, applies timed resumes that fell due, and answers.
 *
 * The facade, with the public methods' documentation, over files with one purpose each
 * (docs/engine.md, "Layout"): public types (engine-types.ts), the fleet's tables (fleet-tables.ts)
 * and what changes in them at run time (fleet-state.ts), the hot path that hands out pairs
 * (pool-fill.ts), portfolios (fleet-portfolios.ts), the views the queries answer (fleet-views.ts),
 * snapshots (engine-snapshot.ts), the dispatch queue (dispatch/) and what it asks of the engine
 * (engine-host.ts).
 */
import type { Clock } from './clock.js';
import { ChangeMarks } from './change-marks.js';
import { Dispatcher } from './dispatch/dispatcher.js';
import { MessageBatch } from './dispatch/message-batch.js';
import { OutcomeBatch } from './dispatch/outcome-batch.js';
import type { ContactOutcome, DispatchAnomaly, DispatchCounts, OutgoingMessage, PollOptions, QueueStatus, ReportResult, SendOutcome, SubmissionStatus, SubmitTicket } from './dispatch/types.js';
import { checkCount, checkNumberStatus, checkTemplateStatus, checkUntil, packFrom } from './engine-args.js';
import { EngineHost } from './engine-host.js';
import { engineSnapshot, restoreRotations } from './engine-snapshot.js';
import type {
  AssignResult,
  Assignment,
  BatchResult,
  BusinessOutput,
  CoreEngineOptions,
  EngineChanges,
  NumberDefaults,
  NumberLimitsChange,
  NumberView,
  NumericArray,
  PortfolioView,
  StatusChange,
  StatusChangeOptions,
  TemplateState,
  TemplateTypeInfo,
} from './engine-types.js';
import { ArgumentError, FleetValidationError, NotFoundError } from './errors.js';
import type { NumberStatus, TemplateStatus } from './fleet.js';
import { FleetPortfolios } from './fleet-portfolios.js';
import { FleetState } from './fleet-state.js';
import { FleetTables } from './fleet-tables.js';
import { type BusinessCapacity, businessCapacity, businessesView, numbersView, poolOf, poolOutput, sendTimeOf, shortfallOf, templateTypeView, templatesView } from './fleet-views.js';
import { type Fleet, validateFleet } from './fleet-validate.js';
import { MemoryStore } from './limits/memory-store.js';
import type { NumberWindows, Store } from './limits/store.js';
import { validateNumberLimits } from './number-limits.js';
import { MAX_MESSAGING_LIMIT_24H } from './fleet.js';
import { portfolioShortfall } from './portfolio.js';
import { PoolFill } from './pool-fill.js';
import { describeValue } from './problems.js';
import { type EngineSnapshot, checkSnapshot } from './snapshot.js';
import type { Submission } from './submission.js';

export type { BusinessCapacity } from './fleet-views.js';
export type {
  AssignReason,
  Assignment,
  AssignResult,
  BatchResult,
  NumericArray,
  TemplateTypeOutput,
  BusinessOutput,
  NumberView,
  PortfolioView,
  TemplateState,
  TemplateTypeInfo,
  NumberLimitsChange,
  NumberDefaults,
  StatusChangeOptions,
  StatusChange,
  CoreEngineOptions,
  NumberChange,
  EngineChanges,
} from './engine-types.js';

export class Engine {
  readonly #clock: Clock;
  readonly #store: Store;
  #lastNow = 0;
  /** The fleet's tables, rebuilt whole by a fleet change, and the fill over them. */
  #t!: FleetTables;
  #fill!: PoolFill;
  /** Per-second rate of the numbers whose fleet entry has none (`setNumberDefaults`); 0: no window. */
  #defaultPerSecond = 0;
  readonly #anomalyListeners = new Set<(anomaly: DispatchAnomaly) => void>();
  #outNumbers = new Int32Array(64);
  #outTemplates = new Float64Array(64);

  readonly #dispatch: Dispatcher;
  readonly #host: EngineHost;
  /** Statuses, limits and timed resumes of the loaded fleet. */
  readonly #state: FleetState;
  readonly #portfolios: FleetPortfolios;
  #tracking = false;
  /** Numbers and templates changed since the last `takeChanges` (tracking on). */
  readonly #numberMarks = new ChangeMarks();
  readonly #templateMarks = new ChangeMarks();

  /**
   * @param fleet a fleet description (validated whole; nothing is built from one with problems)
   * @throws {FleetValidationError} listing every problem of the description
   */
  constructor(fleet: unknown, options: CoreEngineOptions) {
    this.#clock = options.clock;
    this.#store = options.store ?? new MemoryStore();
    this.#portfolios = new FleetPortfolios(options.portfolioSource);
    this.#lastNow = this.#readClock();
    // Any change of a status or a limit may unblock waiting queues: the dispatch loop looks again.
    this.#state = new FleetState(this.#store, () => this.#dispatch.poke(), this.#numberMarks, this.#templateMarks);
    const anomaly = (message: string) => {
      for (const listener of this.#anomalyListeners) listener({ at: this.#lastNow, message });
    };
    this.#host = new EngineHost({ tick: () => this.#tick(), anomaly }, this.#store, this.#state, this.#portfolios, this.#numberMarks);
    this.#dispatch = new Dispatcher(this.#host, packFrom(options.packContactsFrom));
    const validation = validateFleet(fleet);
    if (!validation.ok) throw new FleetValidationError(validation.problems);
    this.#load(validation.fleet);
    if (options.snapshot !== undefined) this.#restore(options.snapshot);
    if (options.trackChanges === true) {
      if (typeof this.#store.snapshotNumbers !== 'function') {
        throw new ArgumentError('createEngine(options.trackChanges)', 'a store that can snapshot single numbers (snapshotNumbers), as MemoryStore', 'a store without it');
      }
      this.#tracking = true;
      this.#portfolios.track();
      this.#numberMarks.enable();
      this.#templateMarks.enable();
      this.#dispatch.track();
    }
  }

  // ---------------------------------------------------------------- queries

  /** The spec's GET /messenger/businesses/ response: every business with `output` per template type. */
  businesses(): BusinessOutput[] {
    return businessesView(this.#t, this.#store, this.#tick());
  }

  /** Messages that may be sent now for the type: the sum of what its eligible numbers may send. */
  output(businessId: number, typeId: number): number {
    const pool = poolOf(this.#t, businessId, typeId);
    return poolOutput(this.#t, this.#store, pool, this.#tick());
  }

  /** Messages per hour of the type: the sum of `throughputPerHour` over its eligible numbers. */
  throughput(businessId: number, typeId: number): number {
    const pool = poolOf(this.#t, businessId, typeId);
    this.#tick();
    return pool.throughput;
  }

  /** A business's messages per hour and may send now, each number once (fleet-views.ts). @throws {NotFoundError} unknown business */
  capacity(businessId: number): BusinessCapacity {
    return businessCapacity(this.#t, this.#store, businessId, this.#tick());
  }

  /** The template type as the contract needs it, or undefined when the business has no such type. */
  templateType(businessId: number, typeId: number): TemplateTypeInfo | undefined {
    return templateTypeView(this.#t, businessId, typeId);
  }

  /** Every number with its status, limits and what it may send now. */
  numbers(): NumberView[] {
    return numbersView(this.#t, this.#store, this.#tick());
  }

  /**
   * How full each window of a number is now (for inspection: the engine never decides by it), or
   * undefined when the store cannot tell (`Store.windows` is optional).
   * @throws {NotFoundError} for an unknown phone
   */
  numberWindows(phone: string): NumberWindows | undefined {
    const slot = this.#slot(phone);
    const now = this.#tick();
    return this.#store.windows?.(this.#t.handle[slot]!, now);
  }

  /** Every template with its status. */
  templates(): TemplateState[] {
    this.#tick();
    return templatesView(this.#t);
  }

  /** Phone of the number at `index`, as `assignInto` writes it. */
  phoneAt(index: number): string {
    const phone = this.#t.phones[index];
    if (phone === undefined) throw new NotFoundError('number', index, '(index)');
    return phone;
  }

  /** Phones by number index, for hosts that read `assignInto`'s output (do not modify). */
  phones(): readonly string[] {
    return this.#t.phones;
  }

  /** Company of a business (undefined when the fleet does not say). */
  companyOf(businessId: number): number | undefined {
    const b = this.#t.businessIndex.get(businessId);
    if (b === undefined) throw new NotFoundError('business', businessId);
    return this.#t.businesses[b]!.companyId;
  }

  /** Clock time of the next timed resume of a number or template, or undefined. */
  nextResumeAt(): number | undefined {
    this.#tick();
    return this.#state.nextResumeAt();
  }

  // ---------------------------------------------------------------- assignment

  /**
   * Hands out up to `count` (number, template) pairs that may go now and charges their capacity.
   * Fewer come back with a `reason` (and, when known, `retryAt`) when the pool runs short.
   */
  assign(businessId: number, typeId: number, count: number): AssignResult {
    checkCount('assign(count)', count);
    const pool = poolOf(this.#t, businessId, typeId);
    const now = this.#tick();
    if (this.#outNumbers.length < count) {
      this.#outNumbers = new Int32Array(count);
      this.#outTemplates = new Float64Array(count);
    }
    const filled = this.#fill.fill(pool, count, now, this.#outNumbers, this.#outTemplates);
    const n = pool.grouped ? this.#portfolios.admitAnonymous(this.#t, this.#store, this.#outNumbers, filled, now) : filled;
    if (this.#tracking) for (let i = 0; i < n; i++) this.#numberMarks.mark(this.#outNumbers[i]!);
    const assignments: Assignment[] = new Array<Assignment>(n);
    for (let i = 0; i < n; i++) {
      assignments[i] = { phone: this.#t.phones[this.#outNumbers[i]!]!, templateId: this.#outTemplates[i]! };
    }
    if (n === count) return { assignments };
    return { assignments, ...(n < filled ? portfolioShortfall(this.#t.numberPortfolio[this.#outNumbers[n]!], now) : shortfallOf(this.#t, pool)) };
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
    const pool = poolOf(this.#t, businessId, typeId);
    const now = this.#tick();
    const filled = this.#fill.fill(pool, count, now, numbers, templates);
    const n = pool.grouped ? this.#portfolios.admitAnonymous(this.#t, this.#store, numbers, filled, now) : filled;
    if (this.#tracking) for (let i = 0; i < n; i++) this.#numberMarks.mark(numbers[i]!);
    if (n === count) return { count: n };
    return { count: n, ...(n < filled ? portfolioShortfall(this.#t.numberPortfolio[numbers[n]!], now) : shortfallOf(this.#t, pool)) };
  }

  // ---------------------------------------------------------------- changes

  /**
   * Pauses or resumes a number (the platform's signal). A paused number leaves every pool of its
   * business at once; with `until`, it comes back by itself when the clock reaches that time.
   */
  setNumberStatus(phone: string, status: NumberStatus, options: StatusChangeOptions = {}): void {
    const slot = this.#slot(phone);
    checkNumberStatus(status);
    const until = checkUntil('setNumberStatus', status, options.until);
    this.#tick();
    if (status === 'paused' && options.source === 'failover') this.#state.failoverNumber(slot, until);
    else this.#state.setNumber(slot, status === 'active', until, options.source ?? 'api');
  }

  /**
   * Pauses, disables or resumes a template. It leaves every pool it is in at once (a pool left with
   * no active template answers `no-template`); with `until`, a pause ends by itself.
   */
  setTemplateStatus(templateId: number, status: TemplateStatus, options: StatusChangeOptions = {}): void {
    const t = this.#t.templateIndex.get(templateId);
    if (t === undefined) throw new NotFoundError('template', templateId);
    checkTemplateStatus(status);
    const until = checkUntil('setTemplateStatus', status, options.until);
    this.#tick();
    if (status !== 'active' && options.source === 'failover') this.#state.failoverTemplate(t, status, until);
    else this.#state.setTemplate(t, status, until, options.source ?? 'api');
  }

  /**
   * Calls `listener` after every status change of a number or template from then on: calls, failovers
   * of the dispatch loop, timed resumes. Returns a function that removes the listener. Loading a
   * fleet or a snapshot does not call listeners.
   */
  onStatusChange(listener: (change: StatusChange) => void): () => void {
    return this.#state.onChange(listener);
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
    const slot = this.#t.numberIndex.get(phone);
    if (slot !== undefined) this.#state.requeue(slot);
  }

  /** Changes a number's limits; what it already sent keeps counting against the new ones. */
  setNumberLimits(phone: string, change: NumberLimitsChange): void {
    const slot = this.#slot(phone);
    const perHour = change.throughputPerHour ?? this.#t.perHour[slot]!;
    const per24h = change.messagingLimit24h ?? this.#t.per24h[slot]!;
    const perSecond = change.messagesPerSecond === null ? 0 : (change.messagesPerSecond ?? this.#t.perSecond[slot]!);
    const problems = validateNumberLimits({ throughputPerHour: perHour, messagingLimit24h: per24h, ...(perSecond > 0 ? { messagesPerSecond: perSecond } : {}) });
    if (problems.length > 0) throw new FleetValidationError(problems, `limits for ${phone}`);
    this.#tick();
    this.#state.setLimits(slot, perHour, per24h, perSecond);
  }

  /**
   * Limits for the numbers whose fleet entry sets none (the provider's defaults: the WhatsApp Cloud
   * API's 80 messages a second). They apply now to every such number still at the previous default
   * (a rate changed since by `setNumberLimits`, such as a throughput upgrade, stays), and to the
   * numbers of every fleet loaded later by `replaceFleet`. `{}` removes them.
   * @throws {FleetValidationError} for a rate that is not an integer from 1 to 1,000,000
   */
  setNumberDefaults(defaults: NumberDefaults): void {
    const perSecond = defaults.messagesPerSecond ?? 0;
    if (defaults.messagesPerSecond !== undefined) {
      const problems = validateNumberLimits({ throughputPerHour: 1, messagingLimit24h: 1, messagesPerSecond: defaults.messagesPerSecond });
      if (problems.length > 0) throw new FleetValidationError(problems, 'number defaults');
    }
    const before = this.#defaultPerSecond;
    this.#defaultPerSecond = perSecond;
    if (perSecond === before) return;
    this.#tick();
    this.#state.defaultRateChanged(before, perSecond);
  }

  /**
   * Changes a portfolio's messaging limit (a tier change: WhatsApp's `business_capability_update`
   * or a number's quality update moves the portfolio between 250, 2,000, 10,000, 100,000 and
   * unlimited). Recipients already in its 24 h keep counting against the new limit; a raised limit
   * lets waiting queues go at once. A later fleet change sets the limit the fleet says.
   * @throws {NotFoundError} for a portfolio the fleet does not list
   * @throws {ArgumentError} for a limit that is not an integer from 1 to 1,000,000,000,000
   */
  setPortfolioLimit(portfolioId: string, messagingLimit24h: number): void {
    const portfolio = this.#portfolios.get(portfolioId);
    if (portfolio === undefined) throw new NotFoundError('portfolio', portfolioId);
    if (!Number.isInteger(messagingLimit24h) || messagingLimit24h < 1 || messagingLimit24h > MAX_MESSAGING_LIMIT_24H) {
      throw new ArgumentError('setPortfolioLimit(messagingLimit24h)', `an integer from 1 to ${MAX_MESSAGING_LIMIT_24H}`, describeValue(messagingLimit24h));
    }
    this.#tick();
    this.#portfolios.setLimit(portfolio, messagingLimit24h);
    this.#dispatch.poke();
  }

  /**
   * Makes the engine look again at queues waiting for a portfolio's room (`portfolio-limit`): its
   * shared source (`portfolioSource`) got slots, or learned of recipients that cost none, after the
   * engine was refused. Unknown ids are ignored.
   */
  portfolioCapacityChanged(portfolioId: string): void {
    if (this.#portfolios.get(portfolioId) !== undefined) this.#dispatch.poke();
  }

  /** Whether portfolios' limits are kept by a shared source (`portfolioSource`), not by this engine alone. */
  get sharesPortfolios(): boolean {
    return this.#portfolios.shared;
  }

  /** The id of the portfolio whose limit the number shares, when the fleet gives it one. */
  portfolioOf(phone: string): string | undefined {
    const slot = this.#t.numberIndex.get(phone);
    return slot === undefined ? undefined : this.#t.numberPortfolio[slot]?.id;
  }

  /** Every portfolio of the fleet: its limit, the recipients (or messages) in its moving 24 h, and the room left. */
  portfolios(): PortfolioView[] {
    return this.#portfolios.views(this.#tick());
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
    const before = this.#t;
    this.#load(validation.fleet);
    const after = this.#t;
    this.#dispatch.fleetChanged(now, (slot) => after.numberIndex.get(before.phones[slot]!) ?? -1);
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
   * A reusable batch for {@link pollInto}: rows of typed arrays (number slot, template id, contact
   * position) instead of one object per message; ids, texts and contacts are built per row on
   * demand (docs/dispatch-loop.md, "Batches").
   * @param capacity most messages one `pollInto` hands out. @default 10000
   */
  createMessageBatch(capacity = 10_000): MessageBatch {
    return new MessageBatch(capacity);
  }

  /**
   * `poll` into a batch from {@link createMessageBatch}, overwriting its rows: the same messages,
   * charged the same way, without building their objects. Answers the rows filled (`batch.count`).
   * @param limit most messages handed out. @default batch.capacity
   */
  pollInto(batch: MessageBatch, limit?: number): number {
    return this.#dispatch.pollInto(batch, limit);
  }

  /** `report` for row `i` of a batch filled by {@link pollInto} (no message id to build or parse). */
  reportAt(batch: MessageBatch, i: number, outcome: SendOutcome): ReportResult {
    return this.#dispatch.reportAt(batch, i, outcome);
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
    poolOf(this.#t, businessId, typeId);
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
    const pool = poolOf(this.#t, businessId, typeId);
    const now = this.#tick();
    return count === 0 ? now : sendTimeOf(this.#t, this.#store, pool, this.#fill.probe(pool, now), count, now);
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

  /**
   * A reusable batch for {@link takeOutcomesInto}: outcomes as rows (state, contact position, time)
   * instead of objects; ids and contacts are built per row on demand.
   * @param capacity rows before it first grows. @default 1024
   */
  createOutcomeBatch(capacity = 1024): OutcomeBatch {
    return new OutcomeBatch(capacity);
  }

  /**
   * `takeOutcomes` into a batch from {@link createOutcomeBatch}: the same outcomes, each exactly
   * once, handed over as rows without building objects (the batch's earlier rows are dropped).
   * Answers the rows (`batch.count`).
   */
  takeOutcomesInto(batch: OutcomeBatch): number {
    return this.#dispatch.takeOutcomesInto(batch);
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
    return { ...dispatch, takenAt: now, ...this.#state.changes(full), portfolios: this.#portfolios.changes(full, now) };
  }

  // ---------------------------------------------------------------- snapshots

  /** Everything needed to resume after a restart without over-sending, as plain JSON. */
  snapshot(): EngineSnapshot {
    const now = this.#tick();
    return engineSnapshot(this.#t, now, this.#store.snapshot(), this.#dispatch.snapshot(), this.#portfolios.snapshots());
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
    this.#state.tick(now);
    return now;
  }

  #slot(phone: string): number {
    const slot = this.#t.numberIndex.get(phone);
    if (slot === undefined) throw new NotFoundError('number', phone);
    return slot;
  }

  /** Builds every index from a fleet description; keeps store state by phone. */
  #load(fleet: Fleet): void {
    this.#portfolios.load(fleet.portfolios);
    const t = new FleetTables(fleet, this.#store, this.#lastNow, this.#defaultPerSecond, (id) => this.#portfolios.get(id));
    this.#t = t;
    this.#fill = new PoolFill(this.#store, t);
    this.#host.load(t, this.#fill);
    this.#state.load(t, fleet);
  }

  #restore(input: unknown): void {
    const snapshot = checkSnapshot(input);
    this.#store.restore(snapshot.store, this.#lastNow);
    this.#state.restore(snapshot.numbers, snapshot.templates);
    restoreRotations(this.#t, snapshot.pools);
    this.#portfolios.restore(snapshot.portfolios ?? [], this.#lastNow);
    if (snapshot['dispatch'] !== undefined) this.#dispatch.restore(snapshot['dispatch']);
    this.#tick();
  }
}
