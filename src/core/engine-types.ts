/** Public types of the engine's API: what its calls take and answer. */
import type { Clock } from './clock.js';
import type { NumberStatus, TemplateStatus, TemplateVariable } from './fleet.js';
import type { Store, StoreSnapshot } from './limits/store.js';
import type { TemplateStatusSnapshot } from './snapshot.js';
import type { PortfolioChange, PortfolioSource } from './portfolio-types.js';
import type { DispatchChanges } from './dispatch/dispatcher.js';

/** Why `assign` handed out fewer pairs than asked (`portfolio-limit`: a portfolio its numbers share is full). */
export type AssignReason = 'no-capacity' | 'no-template' | 'no-number' | 'portfolio-limit';

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

/**
 * Limits a provider gives a number its fleet entry sets none of (`engine.setNumberDefaults`): the
 * WhatsApp Cloud API sends at most 80 messages a second from a number unless it was upgraded.
 */
export interface NumberDefaults {
  /** Per-second rate of every number whose fleet entry has no `messagesPerSecond`. @default none */
  readonly messagesPerSecond?: number;
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
  /**
   * Where portfolios' limits are kept when other engines share them (the server on Redis:
   * `RedisPortfolios`). @default undefined (each portfolio counts in this engine, exact in one process)
   */
  readonly portfolioSource?: PortfolioSource;
  /** State to resume from, as written by {@link Engine.snapshot}. */
  readonly snapshot?: unknown;
  /**
   * Queued contacts from which a new submission's contacts are kept packed (phones as numbers,
   * values in one string: a quarter of the memory of the caller's objects once the caller drops
   * them), instead of as the caller's objects. Packed contacts come back in messages and outcomes
   * as new objects with the same values; a contact with fields of its own is never packed.
   * 0 packs every submission; `Infinity` none (docs/dispatch-loop.md, "Memory").
   * @default 10000
   */
  readonly packContactsFrom?: number;
  /** Keep a list of what changes, for {@link Engine.takeChanges}. @default false */
  readonly trackChanges?: boolean;
}

/** A portfolio as {@link Engine.portfolios} answers it. */
export interface PortfolioView {
  readonly id: string;
  /** Its limit now (the fleet's, or the last `setPortfolioLimit`). */
  readonly messagingLimit24h: number;
  readonly uniqueRecipients: boolean;
  /** Distinct recipients (or messages, without `uniqueRecipients`) in the moving 24 h ending now. */
  readonly used: number;
  /** New recipients (or messages) its numbers may still reach now. */
  readonly available: number;
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
  /**
   * Portfolios charged or changed since the last call: their limits and the recipients charged or
   * given back (every one, whole, with `full`); `takeChanges` always gives it.
   */
  readonly portfolios?: readonly PortfolioChange[];
}
