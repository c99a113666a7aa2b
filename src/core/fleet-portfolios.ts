/**
 * The engine's portfolios (docs/engine.md, "Portfolios"): one per id of the fleet, kept across
 * fleet changes as the store keeps numbers by phone (their recipients keep counting), and which of
 * them were charged since a durable host last took changes.
 */
import type { NumericArray, PortfolioView } from './engine-types.js';
import type { FleetTables } from './fleet-tables.js';
import type { FleetPortfolio } from './fleet-validate.js';
import type { Store } from './limits/store.js';
import { type Portfolio, giveBack, portfoliosOf, snapshotsOf } from './portfolio.js';
import type { PortfolioChange, PortfolioSnapshot, PortfolioSource } from './portfolio-types.js';

export class FleetPortfolios {
  #byId = new Map<string, Portfolio>();
  /** Where their limits are shared beyond this engine (undefined: each portfolio's own window). */
  readonly #source: PortfolioSource | undefined;
  /** Portfolios charged since the last `changes` (tracking on). */
  readonly #marks = new Set<Portfolio>();
  #tracking = false;

  constructor(source: PortfolioSource | undefined) {
    this.#source = source;
  }

  /** Whether their limits are kept by a shared source, not by this engine alone. */
  get shared(): boolean {
    return this.#source !== undefined;
  }

  /** Keeps what changes, for `changes`. */
  track(): void {
    this.#tracking = true;
    for (const p of this.#byId.values()) p.window.track();
  }

  /** The portfolios of a new fleet, with the limits it gives (those it no longer lists are dropped). */
  load(portfolios: readonly FleetPortfolio[]): void {
    this.#byId = portfoliosOf(this.#byId, portfolios, this.#source);
    // Limits as the new fleet gives them: every portfolio is written again.
    if (this.#tracking) {
      for (const p of this.#byId.values()) {
        p.window.track();
        this.#marks.add(p);
      }
    }
  }

  get(id: string): Portfolio | undefined {
    return this.#byId.get(id);
  }

  /** A message to `recipient` from a number of `portfolio` (undefined: none), charged before it is handed out: whether it may go. */
  admit(portfolio: Portfolio | undefined, recipient: string | undefined, now: number): boolean {
    if (portfolio === undefined) return true;
    if (!portfolio.admit(recipient, now)) return false;
    if (this.#tracking) this.#marks.add(portfolio);
    return true;
  }

  /**
   * Pairs of `assign` (no contact: each counts as a new recipient) charged to their numbers'
   * portfolios in order; the first refused and those after it are given back to their numbers.
   * Answers how many may go.
   */
  admitAnonymous(t: FleetTables, store: Store, numbers: NumericArray, n: number, now: number): number {
    for (let i = 0; i < n; i++) {
      if (!this.admit(t.numberPortfolio[numbers[i]!], undefined, now)) {
        giveBack(store, t.handle, numbers, i, n, now);
        return i;
      }
    }
    return n;
  }

  /** The charge at `chargedAt` of a message to `recipient` the provider refused, given back to the number's portfolio, if any. */
  release(portfolio: Portfolio | undefined, recipient: string, chargedAt: number): void {
    if (portfolio === undefined || !portfolio.uniqueRecipients) return;
    portfolio.release(recipient, chargedAt);
    this.#marks.add(portfolio);
  }

  setLimit(portfolio: Portfolio, messagingLimit24h: number): void {
    portfolio.window.setLimit(messagingLimit24h);
    this.#marks.add(portfolio);
  }

  views(now: number): PortfolioView[] {
    return Array.from(this.#byId.values(), (p) => p.view(now));
  }

  /** Those charged since the last call (every one with `full`), as `takeChanges` carries them. */
  changes(full: boolean, now: number): PortfolioChange[] {
    const out = Array.from(full ? this.#byId.values() : this.#marks, (p) => p.change(full, now));
    this.#marks.clear();
    return out;
  }

  snapshots(): PortfolioSnapshot[] {
    return snapshotsOf(this.#byId.values());
  }

  /** Windows as a snapshot had them, for the portfolios the fleet still lists. */
  restore(snapshots: readonly PortfolioSnapshot[], now: number): void {
    for (const p of snapshots) this.#byId.get(p.id)?.window.restore(p.window, now);
  }
}
