/**
 * A portfolio of the fleet (`portfolios[]`): one messaging limit shared by every number that names
 * it, on top of each number's own windows (docs/concepts.md, "Portfolio limits"). The engine keeps
 * one per id across fleet changes, as the store keeps numbers by phone, so what was sent keeps
 * counting when the fleet is replaced.
 */
import type { AssignReason, NumericArray, PortfolioView } from './engine-types.js';
import type { FleetPortfolio } from './fleet-validate.js';
import { RecipientWindow } from './limits/recipient-window.js';
import type { PortfolioChange, PortfolioSnapshot, PortfolioSource } from './portfolio-types.js';
import type { Store } from './limits/store.js';

export class Portfolio {
  readonly id: string;
  /** Whether the limit counts distinct recipients (else every message, as a new recipient each). */
  uniqueRecipients: boolean;
  /** The recipients this engine counts (without a shared `source`: all of them). */
  readonly window: RecipientWindow;
  /** Where the limit is shared beyond this engine; undefined: `window` counts. */
  readonly source: PortfolioSource | undefined;

  constructor(id: string, limit: number, uniqueRecipients: boolean, source?: PortfolioSource) {
    this.id = id;
    this.uniqueRecipients = uniqueRecipients;
    this.window = new RecipientWindow(limit);
    this.source = source;
  }

  /**
   * Charges a message to `recipient` at `now` (undefined: a hand-out without a contact, counted as
   * a new recipient): true when it may go. Called before the message is handed out.
   */
  admit(recipient: string | undefined, now: number): boolean {
    if (this.source !== undefined) return this.source.admit(this.id, this.window.limit, this.uniqueRecipients, recipient, now);
    return recipient !== undefined && this.uniqueRecipients ? this.window.charge(recipient, now) : this.window.chargeAnonymous(now);
  }

  snapshot(): PortfolioSnapshot {
    return { id: this.id, window: this.window.snapshot() };
  }

  /** What changed since the last call (the window tracked), or everything with `full`. */
  change(full: boolean, now: number): PortfolioChange {
    const { recipients, removed } = this.window.takeChanges(now);
    const base = { id: this.id, limit: this.window.limit, anonymous: this.window.anonymous };
    return full ? { ...base, full, recipients: this.window.snapshot().recipients, removed: [] } : { ...base, full, recipients, removed };
  }

  /**
   * Undoes the charge at `chargedAt` of a message to `recipient` the provider refused (the
   * recipient leaves when that charge made it new). A shared portfolio keeps the charge: the safe side.
   */
  release(recipient: string, chargedAt: number): void {
    if (this.source === undefined && this.uniqueRecipients) this.window.release(recipient, chargedAt);
  }

  /** New recipients that may still be charged at `now`. */
  room(now: number): number {
    return this.source !== undefined ? this.source.room(this.id, this.window.limit, now) : this.window.room(now);
  }

  /** Earliest time >= `now` at which a new recipient fits; Infinity if never. */
  nextRoomAt(now: number): number {
    return this.source !== undefined ? this.source.nextRoomAt(this.id, this.window.limit, now) : this.window.nextRoomAt(now);
  }

  /** Its limit, what is used of it and the room left at `now`. */
  view(now: number): PortfolioView {
    const limit = this.window.limit;
    if (this.source !== undefined) {
      return { id: this.id, messagingLimit24h: limit, uniqueRecipients: this.uniqueRecipients, used: this.source.used(this.id, now), available: this.source.room(this.id, limit, now) };
    }
    const used = this.window.size(now);
    return { id: this.id, messagingLimit24h: limit, uniqueRecipients: this.uniqueRecipients, used, available: used >= limit ? 0 : limit - used };
  }
}

/** Portfolios of a new fleet: kept by id from `current` (with the limits the fleet gives), created, or dropped when the fleet no longer lists them. */
export function portfoliosOf(current: ReadonlyMap<string, Portfolio>, portfolios: readonly FleetPortfolio[], source?: PortfolioSource): Map<string, Portfolio> {
  const next = new Map<string, Portfolio>();
  for (const p of portfolios) {
    let portfolio = current.get(p.id);
    if (portfolio === undefined) portfolio = new Portfolio(p.id, p.messagingLimit24h, p.uniqueRecipients, source);
    else {
      portfolio.window.setLimit(p.messagingLimit24h);
      portfolio.uniqueRecipients = p.uniqueRecipients;
    }
    next.set(p.id, portfolio);
  }
  return next;
}

/** Each portfolio whole, as snapshots and `takeChanges` carry it. */
export function snapshotsOf(portfolios: Iterable<Portfolio>): PortfolioSnapshot[] {
  return Array.from(portfolios, (p) => p.snapshot());
}

/** What holds a pool whose portfolio refused a new recipient: room comes back when its oldest recipient leaves the 24 h. */
export function portfolioShortfall(portfolio: Portfolio | undefined, now: number): { reason: AssignReason; retryAt?: number } {
  const at = portfolio === undefined ? Infinity : portfolio.nextRoomAt(now);
  return Number.isFinite(at) ? { reason: 'portfolio-limit', retryAt: at } : { reason: 'portfolio-limit' };
}

/**
 * Gives back to their numbers (store handles by slot in `handles`) the charges of pairs `from` to
 * `to - 1` of a fill at `now`: pairs a portfolio refused, and those after them.
 */
export function giveBack(store: Store, handles: Int32Array, numbers: NumericArray, from: number, to: number, now: number): void {
  for (let i = from; i < to; i++) store.release(handles[numbers[i]!]!, 1, now);
}
