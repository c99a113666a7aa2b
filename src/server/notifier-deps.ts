/**
 * What the notifier (notifier.ts) is given: its dependencies and hooks (those a backend decides,
 * where events are staged, statistics kept and messages recalled, are NotifierHooks:
 * backends/server-backend.ts); and what it hands back: a snapshot of it, and the changes a durable
 * server writes.
 */
import type { Clock } from '../core/clock.js';
import type { WebhookConfig } from '../contract/config-schema.js';
import type { CampaignStatisticsChanges, CampaignStatisticsSnapshot } from '../events/campaign-stats.js';
import type { Outbox, OutboxEvent } from '../events/outbox.js';
import type { RandomSource } from '../events/random.js';
import type { ActivitySink } from './activity-log.js';
import type { StatisticsPort } from './campaign-statistics-book.js';
import type { OutgoingSms } from './ports/channel.js';
import type { EnqueuedRun } from './ports/persistence.js';
import type { TrackedMessage } from './tracked-messages.js';

export interface NotifierSnapshot {
  readonly companies: readonly { readonly companyId: number; readonly config: WebhookConfig; readonly secret: string; readonly stats: CampaignStatisticsSnapshot }[];
  readonly tracked: readonly (readonly [string, TrackedMessage])[];
  readonly sms: readonly (readonly [string, OutgoingSms])[];
  /** Requests' ENQUEUED notifications not all delivered yet. @default none */
  readonly runs?: readonly EnqueuedRun[];
}

export interface NotifierDeps {
  readonly clock: Clock;
  readonly random: RandomSource;
  readonly outbox: Outbox;
  /** Called after events were enqueued (the delivery worker's kick). */
  readonly onEnqueued: () => void;
  readonly batchIntervalMs: number;
  /**
   * How long after a SENT a failure may still send the contact again: it stays remaining in the
   * campaign statistics until then. @default 600_000
   */
  readonly failureWindowMs?: number;
  readonly maxTracked: number;
  readonly secrets: Readonly<Record<number, string>>;
  /** Events made, by family (`count` of them at once for a request's ENQUEUED). */
  readonly onEvent?: (family: string, count: number) => void;
  /**
   * Durable server: events go here instead of the outbox, and into the outbox only once they are
   * written with the step that made them. @default none: straight to the outbox
   */
  readonly stage?: (event: OutboxEvent) => void;
  /**
   * Durable server: a request's ENQUEUED notifications go here, and come back with
   * {@link Notifier.addRun} once written. @default none: kept here at once
   */
  readonly stageRun?: (run: EnqueuedRun) => void;
  /** Every notification of a run ended: its written record may go. @default none */
  readonly onRunDone?: (runId: string) => void;
  /** A notification of a written run was dead-lettered: its record should say so. @default none */
  readonly onRunChanged?: (run: EnqueuedRun) => void;
  /** A run's notification could not be built (skipped). @default none */
  readonly onRunError?: (runId: string, index: number, error: unknown) => void;
  /**
   * Durable server: remember what changed in statistics and tracked messages for
   * {@link Notifier.takeChanges}. @default false
   */
  readonly trackChanges?: boolean;
  /**
   * The provider reported a sent message FAILED (a status webhook), after its FAILED notification:
   * the error table's action for the code, the failure window, delivery (late-failures.ts).
   * @default none: notified only
   */
  readonly onLateFailure?: (tracked: TrackedMessage, messageId: string, code: number) => void;
  /** A recipient answered with an opt-out (a REPLIED status with `blocklistResponse`). @default none */
  readonly onOptOut?: (companyId: number, phone: string, at: number) => void;
  /** A campaign's statistics settled: what is kept per campaign for as long may go. @default none */
  readonly onCampaignSettled?: (companyId: number, campaignId: number) => void;
  /** Told every HSM status and closed attendance (the period reports' data). @default none */
  readonly activity?: ActivitySink;
  /** Campaign statistics kept elsewhere (the server on Redis). @default each company's own, here */
  readonly statistics?: StatisticsPort;
  /**
   * With `trackChanges`: messages and SMS forgotten here are deleted from the copy kept elsewhere
   * too. The server on Redis bounds its copy itself (shared-memory.ts). @default true
   */
  readonly forgetRows?: boolean;
  /**
   * Reads tracked messages and SMS kept elsewhere by key (`m:` + message id, `s:` + SMS id), the
   * rows `takeChanges` gave (the server on Redis). @default none: only what is held here
   */
  readonly recall?: (keys: readonly string[]) => Promise<ReadonlyMap<string, unknown>>;
}

/** What the durable server writes of the notifier in a step. */
export interface NotifierChanges {
  readonly statistics: { readonly companyId: number; readonly changes: CampaignStatisticsChanges }[];
  /** Tracked messages (`m:` + message id) and SMS (`s:` + SMS id) to keep. */
  readonly trackedPut: (readonly [string, unknown])[];
  readonly trackedDelete: string[];
}
