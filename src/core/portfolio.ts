/**
 * A portfolio of the fleet (`portfolios[]`): one messaging limit shared by every number that names
 * it, on top of each number's own windows (docs/concepts.md, "Portfolio limits"). The engine keeps
 * one per id across fleet changes, as the store keeps numbers by phone, so what was sent keeps
 * counting when the fleet is replaced.
 */
import { RecipientWindow, type RecipientWindowSnapshot } from './limits/recipient-window.js';

/** A portfolio's state in an engine snapshot (`portfolios`). */
export interface PortfolioSnapshot {
  readonly id: string;
  readonly window: RecipientWindowSnapshot;
}

export class Portfolio {
  readonly id: string;
  /** Whether the limit counts distinct recipients (else every message, as a new recipient each). */
  uniqueRecipients: boolean;
  readonly window: RecipientWindow;

  constructor(id: string, limit: number, uniqueRecipients: boolean) {
    this.id = id;
    this.uniqueRecipients = uniqueRecipients;
    this.window = new RecipientWindow(limit);
  }

  /**
   * Charges a message to `recipient` at `now` (undefined: a hand-out without a contact, counted as
   * a new recipient): true when it may go. Called before the message is handed out.
   */
  admit(recipient: string | undefined, now: number): boolean {
    return recipient !== undefined && this.uniqueRecipients ? this.window.charge(recipient, now) : this.window.chargeAnonymous(now);
  }

  snapshot(): PortfolioSnapshot {
    return { id: this.id, window: this.window.snapshot() };
  }
}
