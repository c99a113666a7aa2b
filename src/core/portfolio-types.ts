/**
 * The types a portfolio is seen by outside its class (portfolio.ts): what changed of it, where its
 * limit is kept when shared, its snapshot. Apart from the class so the engine's types and the
 * snapshot's can name them without importing the class that uses the engine's types.
 */
import type { RecipientWindowSnapshot } from './limits/recipient-window.js';

/**
 * What changed of a portfolio since the last `engine.takeChanges()`: a durable host keeps a row per
 * recipient (core/rows.ts), so a step writes the recipients it charged, not the whole portfolio.
 */
export interface PortfolioChange {
  readonly id: string;
  /** The limit now, and the anonymous recipients counted so far (the window's snapshot fields). */
  readonly limit: number;
  readonly anonymous: number;
  /** true (`takeChanges({ full: true })`): `recipients` is every recipient in the span; rows replace theirs. */
  readonly full: boolean;
  /** Recipients whose last message changed, as [recipient, last message, whether it made the recipient new]. */
  readonly recipients: readonly (readonly [string, number, boolean])[];
  /** Recipients whose charge was given back. Those that left the 24 h by time are not listed: rows drop them by their time. */
  readonly removed: readonly string[];
}

/**
 * Where a portfolio's limit is kept when it is shared beyond this engine (the server on Redis: every
 * instance's engine draws on one limit, src/redis/redis-portfolios.ts). Like the `Store` port for
 * numbers, it answers at once from what this process holds (slots leased beforehand) and refills in
 * the background: the engine never awaits. Without one, the engine's own windows count (exact in
 * one process).
 */
export interface PortfolioSource {
  /**
   * Charges a message to `recipient` (undefined: no contact, a new recipient) of portfolio `id`,
   * whose limit is `limit` (distinct recipients, or messages without `uniqueRecipients`), at `now`,
   * before it is handed out: true when it may go.
   */
  admit(id: string, limit: number, uniqueRecipients: boolean, recipient: string | undefined, now: number): boolean;
  /** New recipients the portfolio may still reach at `now`, as last known (a view: `output`, `portfolios()`). */
  room(id: string, limit: number, now: number): number;
  /** Recipients counting against the portfolio, as last known (a view). */
  used(id: string, now: number): number;
  /** Earliest time a new recipient may fit (`now` to look again soon); Infinity if never. */
  nextRoomAt(id: string, limit: number, now: number): number;
}

/** A portfolio's state in an engine snapshot (`portfolios`). */
export interface PortfolioSnapshot {
  readonly id: string;
  readonly window: RecipientWindowSnapshot;
}
