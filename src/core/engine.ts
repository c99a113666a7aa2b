/**
 * The dispatch engine: the fleet as indexed arrays, one {@link Pool} per (business, template type),
 * limits in a {@link Store}, time from a {@link Clock}. Pure and synchronous: every call reads the
 * clock once, applies timed resumes that fell due, and answers.
 *
 * A facade over files with one purpose each (docs/engine.md, "Layout"): public types
 * (engine-types.ts), the fleet's tables (fleet-tables.ts), the views the queries answer
 * (fleet-views.ts), snapshots (engine-snapshot.ts), the dispatch queue (dispatch/). Why this file
 * is still over 400 lines: it holds the public methods with their documentation (about half of it)
 * and the hot loops (`#fillSparse`, `#fillDense`), which read the tables and the pool in place and
 * are shaped for the compiler where they are (docs/engine.md, "The hot loops"; the inlining test
 * guards the store's short path they call).
 */
import type { Clock } from './clock.js';
import { ChangeMarks } from './change-marks.js';
import { Dispatcher } from './dispatch/dispatcher.js';
import { MessageBatch } from './dispatch/message-batch.js';
import { OutcomeBatch } from './dispatch/outcome-batch.js';
import type { ContactOutcome, DispatchAnomaly, DispatchCounts, OutgoingMessage, PollOptions, QueueStatus, ReportResult, SendOutcome, SubmissionStatus, SubmitTicket } from './dispatch/types.js';
import { checkCount, checkNumberStatus, checkTemplateStatus, checkUntil, packFrom } from './engine-args.js';
import { engineSnapshot, numberStatusOf, restoreRotations, templateStatusOf } from './engine-snapshot.js';
import type {
  AssignReason,
  AssignResult,
  Assignment,
  BatchResult,
  BusinessOutput,
  CoreEngineOptions,
  EngineChanges,
  NumberChange,
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
import { FleetTables } from './fleet-tables.js';
import { businessesView, numbersView, poolOutput, ratesOf, shortfallOf, templateTypeView, templatesView } from './fleet-views.js';
import { type Fleet, validateFleet } from './fleet-validate.js';
import { MemoryStore } from './limits/memory-store.js';
import type { NumberWindows, Store, StoreSnapshot } from './limits/store.js';
import { limitsOf, validateNumberLimits } from './number-limits.js';
import { MAX_MESSAGING_LIMIT_24H } from './fleet.js';
import type { Pool, TemplateView } from './pool.js';
import { type Portfolio, giveBack, portfolioShortfall, portfoliosOf, snapshotsOf } from './portfolio.js';
import type { PortfolioSource } from './portfolio-types.js';
import { describeValue } from './problems.js';
import { sendDurationMs } from './send-estimate.js';
import { type EngineSnapshot, checkSnapshot } from './snapshot.js';
import type { Submission } from './submission.js';
import { TimedHeap } from './timed-heap.js';

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
  /** The fleet's tables, rebuilt whole by a fleet change. */
  #t!: FleetTables;
  /** The fleet description the tables were built from. */
  #fleet!: Fleet;
  /** Per-second rate of the numbers whose fleet entry has none (`setNumberDefaults`); 0: no window. */
  #defaultPerSecond = 0;
  readonly #view: TemplateView = {
    isActive: (t) => this.#t.templateStatus[t] === 'active',
    account: (t) => this.#t.templateAccount[t],
    id: (t) => this.#t.templateIds[t]!,
  };

  readonly #statusListeners = new Set<(change: StatusChange) => void>();
  readonly #anomalyListeners = new Set<(anomaly: DispatchAnomaly) => void>();
  /** Timed resumes as (time, 2 x index + kind, generation); kind 0: number, 1: template. */
  #timers = new TimedHeap();

  /** Number of the current dense fill call (see `FleetTables.stamp`). */
  #call = 0;
  #outNumbers = new Int32Array(64);
  #outTemplates = new Float64Array(64);

  readonly #dispatch: Dispatcher;
  /** Portfolios by id, kept across fleet changes (their recipients keep counting). */
  #portfolios = new Map<string, Portfolio>();
  /** Where portfolios' limits are shared beyond this engine (undefined: each portfolio's own window). */
  readonly #portfolioSource: PortfolioSource | undefined;
  /** Portfolios charged since the last `takeChanges` (tracking on). */
  readonly #portfolioMarks = new Set<Portfolio>();
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
    this.#portfolioSource = options.portfolioSource;
    this.#lastNow = this.#readClock();
    this.#dispatch = new Dispatcher(
      {
        tick: () => this.#tick(),
        hasBusiness: (b) => this.#t.businessIndex.has(b),
        pool: (b, t) => {
          const index = this.#t.businessIndex.get(b);
          return index === undefined ? undefined : this.#t.businesses[index]!.poolByType.get(t);
        },
        placeholders: (b, t) => {
          const pool = this.#t.pool(b, t);
          if (pool === undefined) return undefined;
          const first = pool.templates[0];
          return first === undefined ? 0 : this.#t.templates[first]!.placeholders;
        },
        fill: (pool, count, now, numbers, templates) => this.#fill(pool, count, now, numbers, templates),
        shortfall: (pool) => this.#shortfall(pool),
        probe: (pool, now) => this.#probe(pool, now),
        phoneAt: (slot) => this.#t.phones[slot]!,
        templateText: (id) => this.#t.templates[this.#t.templateIndex.get(id)!]!.text,
        pauseNumber: (slot, until) => this.#failoverNumber(slot, until),
        refund: (slot, chargedAt, now, recipient) => {
          // The portfolio's recipient, when the refused message made it new (and nothing since went to it).
          const portfolio = this.#t.numberPortfolio[slot];
          if (portfolio !== undefined && portfolio.uniqueRecipients) {
            portfolio.release(recipient, chargedAt);
            this.#portfolioMarks.add(portfolio);
          }
          const handle = this.#t.handle[slot]!;
          // A store without refunds gives back only what it can place exactly: a charge made at this same time.
          if (this.#store.refund) this.#store.refund(handle, 1, chargedAt, now);
          else if (chargedAt === now) this.#store.release(handle, 1, now);
          else return;
          this.#markNumber(slot);
          // The number may have capacity again sooner than its place in the waiting heap says.
          this.#requeueNumber(slot);
        },
        setTemplate: (id, status, until) => {
          const t = this.#t.templateIndex.get(id);
          if (t !== undefined) this.#failoverTemplate(t, status, until);
        },
        nextResumeAt: () => this.#nextTimer(),
        charged: (slot) => this.#markNumber(slot),
        admit: (slot, recipient, now) => this.#admit(slot, recipient, now),
        unfill: (numbers, from, to, now) => giveBack(this.#store, this.#t.handle, numbers, from, to, now),
        portfolioShortfall: (slot, now) => portfolioShortfall(this.#t.numberPortfolio[slot], now),
        anomaly: (message) => {
          const anomaly = { at: this.#lastNow, message };
          for (const listener of this.#anomalyListeners) listener(anomaly);
        },
      },
      packFrom(options.packContactsFrom),
    );
    const validation = validateFleet(fleet);
    if (!validation.ok) throw new FleetValidationError(validation.problems);
    this.#load(validation.fleet);
    if (options.snapshot !== undefined) this.#restore(options.snapshot);
    if (options.trackChanges === true) {
      if (typeof this.#store.snapshotNumbers !== 'function') {
        throw new ArgumentError('createEngine(options.trackChanges)', 'a store that can snapshot single numbers (snapshotNumbers), as MemoryStore', 'a store without it');
      }
      this.#tracking = true;
      for (const p of this.#portfolios.values()) p.window.track();
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
    const pool = this.#pool(businessId, typeId);
    return poolOutput(this.#t, this.#store, pool, this.#tick());
  }

  /** Messages per hour of the type: the sum of `throughputPerHour` over its eligible numbers. */
  throughput(businessId: number, typeId: number): number {
    const pool = this.#pool(businessId, typeId);
    this.#tick();
    return pool.throughput;
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
    const filled = this.#fill(pool, count, now, this.#outNumbers, this.#outTemplates);
    const n = pool.grouped ? this.#admitUnknown(this.#outNumbers, filled, now) : filled;
    if (this.#tracking) for (let i = 0; i < n; i++) this.#markNumber(this.#outNumbers[i]!);
    const assignments: Assignment[] = new Array<Assignment>(n);
    for (let i = 0; i < n; i++) {
      assignments[i] = { phone: this.#t.phones[this.#outNumbers[i]!]!, templateId: this.#outTemplates[i]! };
    }
    if (n === count) return { assignments };
    return { assignments, ...(n < filled ? portfolioShortfall(this.#t.numberPortfolio[this.#outNumbers[n]!], now) : this.#shortfall(pool)) };
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
    const filled = this.#fill(pool, count, now, numbers, templates);
    const n = pool.grouped ? this.#admitUnknown(numbers, filled, now) : filled;
    if (this.#tracking) for (let i = 0; i < n; i++) this.#markNumber(numbers[i]!);
    if (n === count) return { count: n };
    return { count: n, ...(n < filled ? portfolioShortfall(this.#t.numberPortfolio[numbers[n]!], now) : this.#shortfall(pool)) };
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
    if (status === 'paused' && options.source === 'failover') this.#failoverNumber(slot, until);
    else this.#setNumber(slot, status === 'active', until, options.source ?? 'api');
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
    if (status !== 'active' && options.source === 'failover') this.#failoverTemplate(t, status, until);
    else this.#setTemplate(t, status, until, options.source ?? 'api');
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
    const slot = this.#t.numberIndex.get(phone);
    if (slot === undefined) return;
    this.#requeueNumber(slot);
  }

  /** The number leaves the waiting heap for its pools' rings, and the queues are looked at again. */
  #requeueNumber(slot: number): void {
    const b = this.#t.businesses[this.#t.numberBusiness[slot]!]!;
    const m = this.#t.numberMember[slot]!;
    for (const pool of b.pools) pool.requeue(m);
    this.#dispatch.poke();
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
    this.#setLimits(slot, perHour, per24h, perSecond);
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
    const t = this.#t;
    let slot = 0;
    for (const b of this.#fleet.businesses) {
      for (const n of b.numbers) {
        if (n.messagesPerSecond === undefined && t.perSecond[slot] === before) this.#setLimits(slot, t.perHour[slot]!, t.per24h[slot]!, perSecond);
        slot++;
      }
    }
  }

  #setLimits(slot: number, perHour: number, per24h: number, perSecond: number): void {
    const phone = this.#t.phones[slot]!;
    const oldPerHour = this.#t.perHour[slot]!;
    this.#t.perHour[slot] = perHour;
    this.#t.per24h[slot] = per24h;
    this.#t.perSecond[slot] = perSecond;
    this.#store.open(phone, limitsOf(perHour, per24h, perSecond), this.#lastNow);
    this.#markNumber(slot);
    const b = this.#t.businesses[this.#t.numberBusiness[slot]!]!;
    const m = this.#t.numberMember[slot]!;
    for (const pool of b.pools) pool.rateChanged(m, oldPerHour, perHour);
    this.capacityChanged(phone);
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
    portfolio.window.setLimit(messagingLimit24h);
    this.#portfolioMarks.add(portfolio);
    this.#dispatch.poke();
  }

  /**
   * Makes the engine look again at queues waiting for a portfolio's room (`portfolio-limit`): its
   * shared source (`portfolioSource`) got slots, or learned of recipients that cost none, after the
   * engine was refused. Unknown ids are ignored.
   */
  portfolioCapacityChanged(portfolioId: string): void {
    if (this.#portfolios.has(portfolioId)) this.#dispatch.poke();
  }

  /** Whether portfolios' limits are kept by a shared source (`portfolioSource`), not by this engine alone. */
  get sharesPortfolios(): boolean {
    return this.#portfolioSource !== undefined;
  }

  /** The id of the portfolio whose limit the number shares, when the fleet gives it one. */
  portfolioOf(phone: string): string | undefined {
    const slot = this.#t.numberIndex.get(phone);
    return slot === undefined ? undefined : this.#t.numberPortfolio[slot]?.id;
  }

  /** Every portfolio of the fleet: its limit, the recipients (or messages) in its moving 24 h, and the room left. */
  portfolios(): PortfolioView[] {
    const now = this.#tick();
    return Array.from(this.#portfolios.values(), (p) => p.view(now));
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
      left -= poolOutput(this.#t, this.#store, pool, now);
      if (left <= 0) return now;
    } else if (held.retryAt === undefined) return undefined;
    else {
      // At `retryAt` the first number may send at least one.
      start = held.retryAt;
      left -= 1;
      if (left === 0) return start;
    }
    const ms = sendDurationMs(left, ratesOf(this.#t, pool));
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
    const t = this.#t;
    const slots = this.#numberMarks.take(full, t.numberCount);
    const partial = this.#store.snapshotNumbers!(slots.map((slot) => t.handle[slot]!));
    const { numbers: usage, ...store } = partial as StoreSnapshot & { numbers?: Record<string, unknown> };
    const numbers = slots.map((slot): NumberChange => ({ ...numberStatusOf(t, slot), usage: usage?.[t.phones[slot]!] ?? null }));
    const templates = this.#templateMarks.take(full, t.templates.length).map((i) => templateStatusOf(t, i));
    const portfolios = Array.from(full ? this.#portfolios.values() : this.#portfolioMarks, (p) => p.change(full, now));
    this.#portfolioMarks.clear();
    return { ...dispatch, takenAt: now, numbers, templates, store, portfolios };
  }

  #markNumber(slot: number): void {
    this.#numberMarks.mark(slot);
  }

  // ---------------------------------------------------------------- snapshots

  /** Everything needed to resume after a restart without over-sending, as plain JSON. */
  snapshot(): EngineSnapshot {
    const now = this.#tick();
    return engineSnapshot(this.#t, now, this.#store.snapshot(), this.#dispatch.snapshot(), snapshotsOf(this.#portfolios.values()));
  }

  // ---------------------------------------------------------------- portfolios

  /** A message from the number at `slot` to `recipient`: charged to the number's portfolio, if any, before it is handed out. */
  #admit(slot: number, recipient: string | undefined, now: number): boolean {
    const portfolio = this.#t.numberPortfolio[slot];
    if (portfolio === undefined) return true;
    if (!portfolio.admit(recipient, now)) return false;
    if (this.#tracking) this.#portfolioMarks.add(portfolio);
    return true;
  }

  /**
   * Pairs of `assign` (no contact: each counts as a new recipient) charged to their numbers'
   * portfolios in order; the first refused and those after it are given back to their numbers.
   * Answers how many may go.
   */
  #admitUnknown(numbers: NumericArray, n: number, now: number): number {
    for (let i = 0; i < n; i++) {
      if (!this.#admit(numbers[i]!, undefined, now)) {
        giveBack(this.#store, this.#t.handle, numbers, i, n, now);
        return i;
      }
    }
    return n;
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
        if (this.#t.numberGen[index] === gen) this.#setNumber(index, true, undefined, 'timer');
      } else if (this.#t.templateGen[index] === gen) {
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
      if (((id & 1) === 0 ? this.#t.numberGen[index] : this.#t.templateGen[index]) === timers.topGen()) return timers.topAt();
      timers.pop();
    }
    return undefined;
  }

  #setNumber(slot: number, active: boolean, until: number | undefined, source?: string): void {
    this.#markNumber(slot);
    this.#t.numberGen[slot]!++;
    this.#t.numberActive[slot] = active ? 1 : 0;
    if (until === undefined) this.#t.numberUntil.delete(slot);
    else this.#t.numberUntil.set(slot, until);
    if (until !== undefined) this.#timers.push(until, slot * 2, this.#t.numberGen[slot]!);
    const b = this.#t.businesses[this.#t.numberBusiness[slot]!]!;
    const m = this.#t.numberMember[slot]!;
    const perHour = this.#t.perHour[slot]!;
    for (const pool of b.pools) pool.setEligible(m, active && pool.hasTemplateFor(m), perHour);
    // Any change may move what blocks a queue (or when it lifts): queues look again on the next poll.
    this.#dispatch.poke();
    if (source !== undefined && this.#statusListeners.size > 0) {
      this.#emitStatus({ kind: 'number', phone: this.#t.phones[slot]!, status: active ? 'active' : 'paused', ...(until !== undefined ? { until } : {}), at: this.#lastNow, source });
    }
  }

  /**
   * A failure takes the number out until `until` (undefined: until resumed), never for less than it
   * is out already: a rest of seconds (130429) after a pause of an hour (131048) leaves the hour.
   */
  #failoverNumber(slot: number, until: number | undefined): void {
    if (this.#t.numberActive[slot] === 0) {
      const current = this.#t.numberUntil.get(slot);
      if (current === undefined || (until !== undefined && current >= until)) return;
    }
    this.#setNumber(slot, false, until, 'failover');
  }

  /** A failure pauses or disables the template, never less than it is out already (disabled stays disabled). */
  #failoverTemplate(t: number, status: 'paused' | 'disabled', until: number | undefined): void {
    const current = this.#t.templateStatus[t];
    if (current === 'disabled') return;
    if (current === 'paused' && status === 'paused') {
      const end = this.#t.templateUntil[t]!;
      if (Number.isNaN(end) || (until !== undefined && end >= until)) return;
    }
    this.#setTemplate(t, status, status === 'disabled' ? undefined : until, 'failover');
  }

  #setTemplate(t: number, status: TemplateStatus, until: number | undefined, source?: string): void {
    this.#templateMarks.mark(t);
    this.#t.templateGen[t]!++;
    this.#t.templateStatus[t] = status;
    this.#t.templateUntil[t] = until ?? NaN;
    if (until !== undefined) this.#timers.push(until, t * 2 + 1, this.#t.templateGen[t]!);
    for (const pool of this.#t.templatePools[t]!) {
      if (pool.refreshTemplates(this.#view)) this.#refreshMembers(pool);
    }
    this.#dispatch.poke();
    if (source !== undefined && this.#statusListeners.size > 0) {
      this.#emitStatus({ kind: 'template', templateId: this.#t.templateIds[t]!, status, ...(until !== undefined ? { until } : {}), at: this.#lastNow, source });
    }
  }

  #emitStatus(change: StatusChange): void {
    for (const listener of this.#statusListeners) listener(change);
  }

  #refreshMembers(pool: Pool): void {
    for (let m = 0; m < pool.members.length; m++) {
      const slot = pool.members[m]!;
      pool.setEligible(m, this.#t.numberActive[slot] === 1 && pool.hasTemplateFor(m), this.#t.perHour[slot]!);
    }
  }

  #slot(phone: string): number {
    const slot = this.#t.numberIndex.get(phone);
    if (slot === undefined) throw new NotFoundError('number', phone);
    return slot;
  }

  #pool(businessId: number, typeId: number): Pool {
    const b = this.#t.businessIndex.get(businessId);
    if (b === undefined) throw new NotFoundError('business', businessId);
    const pool = this.#t.businesses[b]!.poolByType.get(typeId);
    if (pool === undefined) throw new NotFoundError('template type', typeId, `in business ${businessId}`);
    return pool;
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
    const handle = this.#t.handle;
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
      this.#t.stamp.fill(0);
      this.#call = 0;
    }
    const call = ++this.#call;
    // The pool's fields are read into locals here as in #fillSparse, on purpose: each hot loop keeps
    // them in registers; a shared helper returning them would allocate on every call.
    const stamp = this.#t.stamp;
    const avail = this.#t.avail;
    const drained = this.#t.drained;
    const touched = this.#t.touched;
    const handle = this.#t.handle;
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
    if (pool.eligible[m] === 1) pool.park(m, this.#store.availableAt(this.#t.handle[slot]!, 1, now));
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
    return shortfallOf(this.#t, pool);
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
        if (pool.eligible[m] === 1 && this.#store.available(this.#t.handle[slot]!, now) >= 1) return undefined;
        this.#leaveRing(pool, m, slot, now);
        pool.head = pool.head + 1 === pool.ring.length ? 0 : pool.head + 1;
        pool.size--;
      }
    }
    return this.#shortfall(pool);
  }

  /** Builds every index from a fleet description; keeps store state by phone. */
  #load(fleet: Fleet): void {
    this.#portfolios = portfoliosOf(this.#portfolios, fleet.portfolios, this.#portfolioSource);
    // Limits as the new fleet gives them: every portfolio is written again.
    if (this.#tracking) {
      for (const p of this.#portfolios.values()) {
        p.window.track();
        this.#portfolioMarks.add(p);
      }
    }
    const t = new FleetTables(fleet, this.#store, this.#lastNow, this.#defaultPerSecond, (id) => this.#portfolios.get(id));
    this.#t = t;
    this.#fleet = fleet;
    this.#call = 0;
    this.#timers = new TimedHeap();
    // A new fleet changes every number and template for a durable host: all are written again.
    this.#numberMarks.reset(t.numberCount);
    this.#templateMarks.reset(t.templates.length);
    // Statuses last, through the same paths as run-time changes, so pools start consistent.
    for (const b of t.businesses) for (const pool of b.pools) pool.refreshTemplates(this.#view);
    fleet.templates.forEach((template, i) => {
      if (template.status === 'paused' && template.pausedUntil !== undefined) this.#setTemplate(i, 'paused', template.pausedUntil);
    });
    let slot = 0;
    for (const b of fleet.businesses) {
      for (const n of b.numbers) this.#setNumber(slot++, n.status === 'active', n.status === 'paused' ? n.pausedUntil : undefined);
    }
  }

  #restore(input: unknown): void {
    const snapshot = checkSnapshot(input);
    this.#store.restore(snapshot.store, this.#lastNow);
    const t = this.#t;
    for (const n of snapshot.numbers) {
      const slot = t.numberIndex.get(n.phone);
      if (slot !== undefined) this.#setNumber(slot, n.status === 'active', n.status === 'paused' ? n.pausedUntil : undefined);
    }
    for (const s of snapshot.templates) {
      const i = t.templateIndex.get(s.id);
      if (i !== undefined) this.#setTemplate(i, s.status, s.status === 'paused' ? s.pausedUntil : undefined);
    }
    restoreRotations(t, snapshot.pools);
    for (const p of snapshot.portfolios ?? []) this.#portfolios.get(p.id)?.window.restore(p.window, this.#lastNow);
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
