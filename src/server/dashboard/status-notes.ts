/**
 * Why each number and template stands as it does: who made the last status change (an operator's
 * call, the provider through the channel, a failed send's failover, a timed pause that ended) and
 * what the provider said last (a template's pause reason, a number's quality or tier). The engine
 * keeps statuses, not their causes; the dashboard shows both. Bounded by the fleet: one entry per
 * number or template that ever changed.
 */
import type { StatusChange } from '../../core/engine-types.js';
import type { AccountNotice, BusinessLimitUpdate, NumberLimitsUpdate, TemplateStatusUpdate } from '../ports/channel.js';

/** The last change of a status: its source and time, and the provider's words when it gave some. */
export interface StatusNote {
  /** `api` (an operator endpoint), `channel` (the provider), `failover` (a send failed for it), `timer` (a timed pause ended), or a host's own. */
  readonly source: string;
  readonly at: number;
  readonly reason?: string;
}

/** What the provider last said of a number's limits (its messaging tier, its throughput). */
export interface ProviderNote {
  readonly reason: string;
  readonly at: number;
  readonly messagingLimit24h?: number;
  readonly throughputPerHour?: number;
  readonly messagesPerSecond?: number | null;
}

/** A number the provider flagged for low quality: since when and why. */
export interface FlagNote {
  readonly at: number;
  readonly reason: string;
}

/** What the provider last said of an account (a WABA) and of its business portfolio's messaging limit. */
export interface AccountNote {
  readonly accountId: string;
  readonly phones: readonly string[];
  /** The last notice (a violation, a disabling scheduled). */
  readonly notice?: { readonly reason: string; readonly at: number };
  /** The portfolio's messaging limit as last reported with this account. */
  readonly businessLimit?: { readonly limit: number; readonly tier: string; readonly reason: string; readonly at: number };
}

/** Longest provider text kept: the page shows it, the provider writes it. */
const MAX_REASON = 200;

export class StatusNotes {
  readonly #numbers = new Map<string, StatusNote>();
  readonly #templates = new Map<number, StatusNote>();
  readonly #providerNumbers = new Map<string, ProviderNote>();
  readonly #flags = new Map<string, FlagNote>();
  readonly #accounts = new Map<string, AccountNote>();
  /** The reason the channel gave with a template change, until the engine reports that change. */
  readonly #pendingReason = new Map<number, string>();

  /** A status change the engine reports. */
  statusChanged(change: StatusChange): void {
    if (change.kind === 'number') {
      this.#numbers.set(change.phone, { source: change.source, at: change.at });
      return;
    }
    const reason = change.source === 'channel' ? this.#pendingReason.get(change.templateId) : undefined;
    this.#pendingReason.delete(change.templateId);
    this.#templates.set(change.templateId, { source: change.source, at: change.at, ...(reason === undefined ? {} : { reason }) });
  }

  /** The channel is about to change a template's status: its reason goes with the change. */
  channelTemplate(update: TemplateStatusUpdate): void {
    if (update.reason !== undefined && update.reason !== '') this.#pendingReason.set(update.templateId, update.reason.slice(0, MAX_REASON));
    else this.#pendingReason.delete(update.templateId);
  }

  /**
   * The channel changed a number's limits (a tier event) or status (its account restricted), or
   * gave its word on it (a quality rating: no limits); a flag for low quality is kept until lifted.
   */
  channelNumber(update: { readonly phone: string; readonly limits?: NumberLimitsUpdate['limits']; readonly reason?: string; readonly flagged?: boolean }, at: number): void {
    if (update.flagged === true) this.#flags.set(update.phone, { at, reason: (update.reason ?? 'flagged').slice(0, MAX_REASON) });
    else if (update.flagged === false) this.#flags.delete(update.phone);
    const l = update.limits ?? {};
    this.#providerNumbers.set(update.phone, {
      reason: (update.reason ?? 'limits changed').slice(0, MAX_REASON),
      at,
      ...(l.messagingLimit24h !== undefined ? { messagingLimit24h: l.messagingLimit24h } : {}),
      ...(l.throughputPerHour !== undefined ? { throughputPerHour: l.throughputPerHour } : {}),
      ...(l.messagesPerSecond !== undefined ? { messagesPerSecond: l.messagesPerSecond } : {}),
    });
  }

  /** The provider's word on an account that steered nothing. */
  channelAccount(update: AccountNotice, at: number): void {
    const before = this.#accounts.get(update.accountId);
    this.#accounts.set(update.accountId, { ...before, accountId: update.accountId, phones: update.phones, notice: { reason: update.reason.slice(0, MAX_REASON), at } });
  }

  /** A business portfolio's messaging limit, reported with one of its accounts. */
  channelBusinessLimit(update: BusinessLimitUpdate, at: number): void {
    const before = this.#accounts.get(update.accountId);
    this.#accounts.set(update.accountId, {
      ...before,
      accountId: update.accountId,
      phones: update.phones,
      businessLimit: { limit: update.limit, tier: update.tier, reason: (update.reason ?? update.tier).slice(0, MAX_REASON), at },
    });
  }

  /** Since when and why the provider flagged a number, while the flag holds. */
  flag(phone: string): FlagNote | undefined {
    return this.#flags.get(phone);
  }

  /** Every account the provider reported on, in the order first reported. */
  accounts(): AccountNote[] {
    return [...this.#accounts.values()];
  }

  number(phone: string): StatusNote | undefined {
    return this.#numbers.get(phone);
  }

  template(id: number): StatusNote | undefined {
    return this.#templates.get(id);
  }

  provider(phone: string): ProviderNote | undefined {
    return this.#providerNumbers.get(phone);
  }
}
