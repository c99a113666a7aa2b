/**
 * The server's parts as a backend sees them: what a backend may ask of the notifier, the workers,
 * the channel's memory and the local books once buildServer made them (`ServerBackend.attach`,
 * server-backend.ts). Each is the part's own class in the server (notifier.ts, dispatch-worker.ts,
 * …); a backend knows only these interfaces, so it never imports the server that uses it.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { WebhookConfig } from '../../contract/config-schema.js';
import type { BlocklistReplica } from './blocklist.js';
import type { OutgoingSms } from './channel.js';
import type { WrittenEvent } from './persistence.js';

/** A company's webhook configuration and signing secret, as the durable server keeps them. */
export interface CompanyWebhooks {
  readonly companyId: number;
  readonly config: WebhookConfig;
  readonly secret: string;
}

/** The companies' webhook configurations and secrets the notifier holds, as a backend reads and loads them. */
export interface WebhookConfigs {
  /** Every company's configuration and secret. */
  webhooks(): CompanyWebhooks[];
  /** Loads configurations and secrets kept elsewhere. */
  loadWebhooks(list: readonly CompanyWebhooks[]): void;
  config(companyId: number): WebhookConfig;
  secretOf(companyId: number): string;
}

/** The tracked messages (`m:` + message id) and SMS (`s:` + SMS id) changed since the last step. */
export interface TrackedChanges {
  readonly trackedPut: readonly (readonly [string, unknown])[];
  readonly trackedDelete: readonly string[];
}

/** The notifier as a backend sees it: the configurations it signs with, and the rows it tracks. */
export interface NotifierState extends WebhookConfigs {
  /** What changed since the last call (remembered with `trackChanges`). */
  takeChanges(): TrackedChanges;
  /** Tracked messages or SMS changed since the last `takeChanges`. */
  readonly changesPending: boolean;
}

/** The channel's memory as a backend writes it: its entries set (a value) or deleted (null) since the last step. */
export interface ChannelMemoryChangesSource {
  takeChanges(): { readonly keys: readonly string[]; readonly values: readonly (string | null)[] } | undefined;
  /** Changes not yet taken. */
  readonly changed: boolean;
}

/** The dispatch worker as a backend feeds it. */
export interface DispatchFeed {
  /** Handles the engine's outcomes due so far (before a step is taken). */
  takeOutcomes(): void;
  /** Work was taken into the engine: dispatch it. */
  kick(): void;
}

/** The SMS worker as a backend feeds it. */
export interface SmsQueue {
  enqueue(items: readonly OutgoingSms[]): void;
  /** Most SMS queued at once. */
  readonly maxQueued: number;
  readonly queued: number;
  readonly inFlight: number;
}

/** The `already_sent` check as a backend reads it. */
export interface SentPhonesWindow {
  /** The check is on (a window above 0). */
  readonly enabled: boolean;
  /** How long a business's phones per template type are kept (ms). */
  readonly windowMs: number;
}

/** The parts a backend may ask of the server, handed to it once made (`ServerBackend.attach`). */
export interface ServerParts {
  readonly notifier: NotifierState;
  readonly dispatch: DispatchFeed;
  readonly sms: SmsQueue;
  readonly channelMemory: ChannelMemoryChangesSource;
  readonly blocklist: BlocklistReplica;
  readonly sentPhones: SentPhonesWindow;
  /** Puts written webhook events in the outbox (runs to the notifier) and kicks the delivery worker. */
  readonly deliver: (records: readonly WrittenEvent[]) => void;
  /** Webhook signing secrets the host set, by company id. */
  readonly secrets: Readonly<Record<number, string>>;
  readonly log: FastifyBaseLogger;
}
