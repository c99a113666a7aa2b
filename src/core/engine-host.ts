/**
 * The engine as the dispatch queue sees it (its `DispatchHost` port): the pools and texts of the
 * fleet's tables, the fill, the statuses a failure changes, the portfolios and the store a hand-out
 * or a refusal charges. The tables and the fill are those of the fleet loaded last.
 */
import type { ChangeMarks } from './change-marks.js';
import type { DispatchHost } from './dispatch/dispatcher.js';
import type { FleetPortfolios } from './fleet-portfolios.js';
import type { FleetState } from './fleet-state.js';
import type { FleetTables } from './fleet-tables.js';
import { shortfallOf } from './fleet-views.js';
import type { Store } from './limits/store.js';
import type { Pool } from './pool.js';
import type { PoolFill } from './pool-fill.js';
import { giveBack, portfolioShortfall } from './portfolio.js';

/** The engine's own calls the host makes: its clock (with the timed resumes due), and where anomalies go. */
export interface EngineHooks {
  /** Reads the clock once and applies timed resumes due by then. */
  tick(): number;
  anomaly(message: string): void;
}

export class EngineHost implements DispatchHost {
  readonly #engine: EngineHooks;
  readonly #store: Store;
  readonly #state: FleetState;
  readonly #portfolios: FleetPortfolios;
  readonly #numberMarks: ChangeMarks;
  #t!: FleetTables;
  #fill!: PoolFill;

  constructor(engine: EngineHooks, store: Store, state: FleetState, portfolios: FleetPortfolios, numberMarks: ChangeMarks) {
    this.#engine = engine;
    this.#store = store;
    this.#state = state;
    this.#portfolios = portfolios;
    this.#numberMarks = numberMarks;
  }

  /** A fleet was loaded: its tables and the fill over them. */
  load(t: FleetTables, fill: PoolFill): void {
    this.#t = t;
    this.#fill = fill;
  }

  tick(): number {
    return this.#engine.tick();
  }

  hasBusiness(businessId: number): boolean {
    return this.#t.businessIndex.has(businessId);
  }

  pool(businessId: number, typeId: number): Pool | undefined {
    return this.#t.pool(businessId, typeId);
  }

  placeholders(businessId: number, typeId: number): number | undefined {
    const pool = this.#t.pool(businessId, typeId);
    if (pool === undefined) return undefined;
    const first = pool.templates[0];
    return first === undefined ? 0 : this.#t.templates[first]!.placeholders;
  }

  fill(pool: Pool, count: number, now: number, numbers: Int32Array, templates: Float64Array): number {
    return this.#fill.fill(pool, count, now, numbers, templates);
  }

  shortfall(pool: Pool): ReturnType<DispatchHost['shortfall']> {
    return shortfallOf(this.#t, pool);
  }

  probe(pool: Pool, now: number): ReturnType<DispatchHost['probe']> {
    return this.#fill.probe(pool, now);
  }

  phoneAt(slot: number): string {
    return this.#t.phones[slot]!;
  }

  templateText(templateId: number): string {
    return this.#t.templates[this.#t.templateIndex.get(templateId)!]!.text;
  }

  pauseNumber(slot: number, until: number | undefined): void {
    this.#state.failoverNumber(slot, until);
  }

  refund(slot: number, chargedAt: number, now: number, recipient: string): void {
    // The portfolio's recipient, when the refused message made it new (and nothing since went to it).
    this.#portfolios.release(this.#t.numberPortfolio[slot], recipient, chargedAt);
    const handle = this.#t.handle[slot]!;
    // A store without refunds gives back only what it can place exactly: a charge made at this same time.
    if (this.#store.refund) this.#store.refund(handle, 1, chargedAt, now);
    else if (chargedAt === now) this.#store.release(handle, 1, now);
    else return;
    this.#numberMarks.mark(slot);
    // The number may have capacity again sooner than its place in the waiting heap says.
    this.#state.requeue(slot);
  }

  setTemplate(templateId: number, status: 'paused' | 'disabled', until: number | undefined): void {
    const i = this.#t.templateIndex.get(templateId);
    if (i !== undefined) this.#state.failoverTemplate(i, status, until);
  }

  nextResumeAt(): number | undefined {
    return this.#state.nextResumeAt();
  }

  anomaly(message: string): void {
    this.#engine.anomaly(message);
  }

  charged(slot: number): void {
    this.#numberMarks.mark(slot);
  }

  admit(slot: number, recipient: string, now: number): boolean {
    return this.#portfolios.admit(this.#t.numberPortfolio[slot], recipient, now);
  }

  unfill(numbers: Int32Array, from: number, to: number, now: number): void {
    giveBack(this.#store, this.#t.handle, numbers, from, to, now);
  }

  portfolioShortfall(slot: number, now: number): ReturnType<DispatchHost['portfolioShortfall']> {
    return portfolioShortfall(this.#t.numberPortfolio[slot], now);
  }
}
