/**
 * What buildServer asks of a backend besides the port the features use (ports/backend.ts): the
 * hooks the server's parts are made with, and the parts handed back once made (`attach`), so the
 * backend writes their changes, feeds them work and stops with them. Each backend answers every
 * question; buildServer never asks which backend it has.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { ContactOutcome, OutgoingMessage } from '../../core/dispatch/types.js';
import type { Engine } from '../../core/engine.js';
import type { Submission } from '../../core/submission.js';
import type { ActivityLog } from '../activity-log.js';
import type { Blocklist } from '../blocklist.js';
import type { CampaignPhones } from '../campaign-phones.js';
import type { ChannelMemoryStore } from '../channels/memory.js';
import type { DeadLetterStore } from '../dead-letter-store.js';
import type { DeadLetterBook } from '../dead-letters.js';
import type { DispatchDeps, DispatchWorker } from '../dispatch-worker.js';
import type { RedisMetricsSource } from '../metrics.js';
import type { NotifierDeps, Notifier } from '../notifier.js';
import type { Backend } from '../ports/backend.js';
import type { ServerContact } from '../contacts.js';
import type { WrittenEvent } from '../ports/persistence.js';
import type { ReportService } from '../report-service.js';
import type { SentPhones } from '../sent-phones.js';
import type { SmsWorker } from '../sms-worker.js';
import type { StoreRecovery } from '../../storage/store-open.js';

/** The channel memory's options a backend decides (ChannelMemoryStore's constructor). */
export type ChannelMemoryHooks = ConstructorParameters<typeof ChannelMemoryStore>[1];

/** The notifier's options a backend decides: where events are staged, statistics kept, messages recalled. */
export type NotifierHooks = Pick<NotifierDeps, 'stage' | 'stageRun' | 'onRunDone' | 'onRunChanged' | 'trackChanges' | 'statistics' | 'forgetRows' | 'recall'>;

/** The dispatch worker's options a backend decides: what waits for a write, what the channel gets. */
export type DispatchHooks = Pick<DispatchDeps, 'beforeSend' | 'messageForChannel'>;

/**
 * The dispatch side of a fleet: on Redis the contacts the engine sends are chunks of a shared
 * queue, and each result and outcome is also that queue's. One process: nothing to do.
 */
export interface FleetDispatch {
  /** Messages handed out (on Redis written with the step `beforeSend` waits for). */
  handedOut(messages: readonly OutgoingMessage[]): void;
  /** A hand-out ended without ending its contact (failover, requeued, a retry scheduled). */
  handOutEnded(m: OutgoingMessage): void;
  /** Final outcomes the engine reported. */
  outcomes(outcomes: readonly ContactOutcome[]): void;
  /** The retry index an outcome's notification carries (a fleet's, when another instance handed out a retry). */
  retryIndexOf(o: ContactOutcome): number | null;
  /** Runs the notifier for a contact (on Redis its notifications are written with its chunk). */
  about<T>(contact: object, fn: () => T): T;
  /** Room in the engine after outcomes: more work from a shared queue. */
  roomFreed(): void;
  /** A contact goes again after a late failure: queued from its hand-out `handout + 1` on. */
  resubmit(submission: Submission, contact: ServerContact, handout: number): void;
}

/** The parts buildServer made over the backend's hooks, handed to it once made. */
export interface BackendParts {
  readonly engine: Engine;
  readonly notifier: Notifier;
  readonly dispatch: DispatchWorker;
  readonly sms: SmsWorker;
  readonly channelMemory: ChannelMemoryStore;
  readonly blocklist: Blocklist;
  readonly campaignPhones: CampaignPhones;
  readonly sentPhones: SentPhones;
  readonly activity: ActivityLog;
  readonly reports: ReportService;
  readonly deadLetterBook: DeadLetterBook;
  /** Puts written webhook events in the outbox (runs to the notifier) and kicks the delivery worker. */
  readonly deliver: (records: readonly WrittenEvent[]) => void;
  /** Webhook signing secrets the host set, by company id. */
  readonly secrets: Readonly<Record<number, string>>;
  readonly log: FastifyBaseLogger;
  /** Durable writes fail: intake and sending stop for good, and the 503s say `because`. */
  readonly failClosed: (because: string) => void;
}

export interface ServerBackend extends Backend {
  /** The local books (campaign and sent phones, idempotency, activity, reports, dead letters) write their changes with each step. */
  readonly tracksChanges: boolean;
  /** The blocklist remembers its changes (written with each step, or synchronised with a fleet). */
  readonly blocklistTracksChanges: boolean;
  readonly channelMemory: ChannelMemoryHooks;
  readonly notifier: NotifierHooks;
  readonly dispatch: DispatchHooks;
  readonly fleet: FleetDispatch;
  /** The commit that makes what happened durable (a provider's report is acknowledged after it); undefined when nothing is kept. */
  readonly durableCommit: (() => Promise<void>) | undefined;
  /** The provider's reports may be about messages another instance sent: read what the fleet remembers. */
  readonly recallsSends: boolean;
  /** A phone given back (`already_sent`): the contact ended FAILED or EXPIRED without reaching its recipient. */
  releaseSent(contact: ServerContact, businessId: number, typeId: number): void;
  /** The reports changed: written with the next step (the embedded database). @default none */
  readonly reportsChanged: (() => void) | undefined;
  /** The SMS worker's answered hook: an SMS the gateway answered is written. @default none */
  readonly smsAnswered: ((smsId: string) => void) | undefined;
  /**
   * Makes what needs the parts (the durable step's collection, a fleet's shared state) and loads
   * what a store kept into them; called once.
   */
  attach(parts: BackendParts): void;
  /** Where dead letters are kept (after `attach`). */
  readonly deadLetters: DeadLetterStore;
  /** What /metrics shows of the backend. */
  metricsSources(): { readonly redis?: RedisMetricsSource; readonly recovery?: StoreRecovery };
  /** The server is built: restored work starts, losses are said. */
  start(): void;
  /** Stops stepping (before the last flush). */
  stop(): void;
  /** Gives the work this instance holds back to a fleet (after the last flush). */
  release(): Promise<void>;
  /** Nothing held here waits in shared state. */
  idle(): boolean;
}
