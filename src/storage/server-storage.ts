/**
 * What the server keeps durably, whatever keeps it (the embedded database: sqlite-storage.ts): one
 * step of changes to write, what a restart finds, and the port the server writes through. Both the
 * step and what a restart finds have a field per durable component, by its name (the engine's is
 * `engine` in a step, `rows` in what is found).
 */
import type { EngineChanges } from '../core/engine.js';
import type { EngineRows } from '../core/rows.js';
import type { CampaignRow, CampaignStatisticsChanges, ContactRow } from '../events/campaign-stats.js';
import type { RecoveredLoss, StoreRecovery } from './store-open.js';

/**
 * One step to write: what changed in the engine, and the changes of each durable component of the
 * server under its name (src/server/backends/sqlite/components/: one file each, with its tables).
 * A component with nothing to write is absent.
 */
export interface StorageStep {
  readonly engine?: EngineChanges;
  /** Server values by key (JSON-serialisable); `undefined` deletes the key. */
  readonly values?: Readonly<Record<string, unknown>>;
  /**
   * Webhook events (any JSON value) to keep by id, and those delivered or given up (after the
   * puts: a run that changed and ended in one step goes).
   */
  readonly outbox?: StoredRowChanges;
  /** SMS accepted, by id (any JSON value), and those the gateway answered. */
  readonly sms?: StoredRowChanges;
  /** What changed in each company's campaign statistics. */
  readonly statistics?: readonly { readonly companyId: number; readonly changes: CampaignStatisticsChanges }[];
  /**
   * Messages remembered for their later statuses, by message id (any JSON value), and those no
   * longer remembered (final status, or the oldest beyond the bound).
   */
  readonly tracked?: StoredRowChanges;
  /** Phones campaigns took (a row per request), and campaigns whose phones are dropped (applied first). */
  readonly campaignPhones?: {
    readonly added: readonly StoredCampaignPhones[];
    readonly dropped: readonly { readonly companyId: number; readonly campaignId: number }[];
  };
  /**
   * Phones businesses took per template type (`already_sent`): rows in order (a request's phones in
   * a time bucket, or phones given back), then the rows of buckets starting before `before` dropped.
   */
  readonly sentPhones?: {
    readonly rows: readonly StoredSentPhones[];
    readonly before?: number;
  };
  /**
   * Idempotency keys' first answers (src/server/idempotency.ts): rows put, keys deleted (beyond the
   * bound), and the rows kept before `before` dropped (their 24 h passed).
   */
  readonly idempotency?: {
    readonly put: readonly StoredIdempotency[];
    readonly deleted: readonly { readonly companyId: number; readonly key: string }[];
    readonly before?: number;
  };
  /** Blocklist changes, in order: an entry added, or (`entry` null) a phone removed. */
  readonly blocklist?: readonly { readonly companyId: number; readonly phone: string; readonly entry: StoredBlockEntry | null }[];
  /**
   * Activity entries of the period reports: put (key, time in epoch ms, entry: any JSON value),
   * dropped by the count bound (keys), and dropped when their time is before `before` (the retention).
   */
  readonly activity?: {
    readonly put?: readonly (readonly [key: string, at: number, row: unknown])[];
    readonly delete?: readonly string[];
    readonly before?: number;
  };
  /**
   * The channel's memory (src/server/channels/memory.ts): keys set (a value) or deleted (null) in
   * order, numbered from `firstSeq`, kept as one row (a chunk); the chunks numbered below `before`
   * are forgotten.
   */
  readonly channelMemory?: StoredChannelMemory & { readonly before?: number };
  /**
   * Dead letters kept (a row, any JSON value) or dropped (null), in order: event id, company, the
   * time it was dead-lettered. Written in the step that deletes the event from the outbox (a crash
   * keeps one of the two, never both or neither), and the one that puts a replayed event back.
   */
  readonly deadLetters?: readonly (readonly [id: string, companyId: number, at: number, row: unknown])[];
}

/** Rows kept by id (any JSON value), put in order, and ids whose rows go (after the puts). */
export interface StoredRowChanges {
  readonly put?: readonly (readonly [id: string, row: unknown])[];
  readonly delete?: readonly string[];
}

/** A chunk of the channel's memory: entries numbered from `firstSeq`, a key and a value (null: deleted) each. */
export interface StoredChannelMemory {
  readonly firstSeq: number;
  readonly keys: readonly string[];
  readonly values: readonly (string | null)[];
}

/** Phones one request added to a campaign. */
export interface StoredCampaignPhones {
  readonly companyId: number;
  readonly campaignId: number;
  /** Phones as integers (normalised digits). */
  readonly phones: readonly number[];
}

/** Phones a business took for a template type in one time bucket, or (`released`) gave back. */
export interface StoredSentPhones {
  readonly businessId: number;
  readonly typeId: number;
  /** The bucket's start, epoch ms. */
  readonly bucket: number;
  /** Phones as integers (normalised digits). */
  readonly phones: readonly number[];
  /** The phones were given back (replayed in order at load). @default false */
  readonly released?: boolean;
}

/** An idempotency key's first answer. */
export interface StoredIdempotency {
  readonly companyId: number;
  readonly key: string;
  /** The body's fingerprint. */
  readonly fingerprint: string;
  /** When it was answered (epoch ms). */
  readonly at: number;
  /** The answer (JSON text). */
  readonly answer: string;
}

/** A blocked phone. */
export interface StoredBlockEntry {
  readonly phone: string;
  readonly addedAt: number;
  readonly source: 'reply' | 'operator';
}

/** One company's campaign statistics as rows (for `CampaignStatistics.fromRows`). */
export interface StoredStatistics {
  readonly lastBatchAt: number | null;
  readonly campaigns: readonly CampaignRow[];
  readonly contacts: readonly ContactRow[];
}

/** What a restart finds. */
export interface StoredState {
  readonly rows: EngineRows;
  readonly values: ReadonlyMap<string, unknown>;
  readonly outbox: readonly (readonly [string, unknown])[];
  /** SMS accepted and not answered by the gateway, in the order they were accepted. */
  readonly sms: readonly (readonly [string, unknown])[];
  /** Campaign statistics by company. */
  readonly statistics: ReadonlyMap<number, StoredStatistics>;
  /** Messages remembered for later statuses, oldest first. */
  readonly tracked: readonly (readonly [string, unknown])[];
  /** Phones each campaign took. */
  readonly campaignPhones: readonly StoredCampaignPhones[];
  /** Phones businesses took per template type, in the order written (empty in a database of schema 4 or older). */
  readonly sentPhones: readonly StoredSentPhones[];
  /** Every company's blocked phones. */
  readonly blocklist: readonly { readonly companyId: number; readonly entry: StoredBlockEntry }[];
  /** Activity entries of the period reports, in the order they were first written. */
  readonly activity: readonly (readonly [string, unknown])[];
  /** The channel's memory as the chunks written, in order. */
  readonly channelMemory: readonly StoredChannelMemory[];
  /** Dead letters kept, in the order they were written (absent before schema 5: none). */
  readonly deadLetters?: readonly unknown[];
  /** Idempotency keys' first answers, oldest first (absent before schema 6: none). */
  readonly idempotency?: readonly StoredIdempotency[];
}

/** Where the server keeps what must survive it. */
export interface ServerStorage {
  /**
   * Everything kept; undefined when nothing was ever written (a first start).
   * @throws StoreDamagedError when a row cannot be read back
   */
  load(): StoredState | undefined;
  /** Writes one step in one transaction, durably; throws (and writes nothing) when it cannot. */
  write(step: StorageStep): void;
  close(): void;
  /**
   * Why the intake journal beside the store could not be written and was deleted (until the next
   * open); undefined while it is kept. A recovery then reports lost contacts as a count and an id
   * range only. @default none (a store without a journal)
   */
  journalLost?(): string | undefined;
  /** What a start with `recover` found and reported; undefined when the store was intact. */
  readonly recovery?: StoreRecovery;
  /**
   * With `recovery`, when the store had an intake journal: the contacts it lost, for their FAILED
   * notifications, and the webhook configurations the journal recorded. @default none
   */
  readonly loss?: RecoveredLoss;
}
