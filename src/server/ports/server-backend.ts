/**
 * What buildServer asks of a backend besides the port the features use (backend.ts): the hooks the
 * server's parts are made with, and the parts handed back once made (`attach`), so the backend
 * writes their changes, feeds them work and stops with them. Each backend answers every question;
 * buildServer never asks which backend it has.
 */
import type { ContactOutcome, OutgoingMessage } from '../../core/dispatch/types.js';
import type { Submission } from '../../core/submission.js';
import type { OutboxEvent } from '../../events/outbox.js';
import type { Backend } from './backend.js';
import type { StatisticsPort } from './campaign-statistics.js';
import type { DeadLetterStore } from './dead-letters.js';
import type { EnqueuedRun } from './persistence.js';
import type { ServerContact } from './server-contact.js';
import type { ServerParts } from './server-parts.js';

/** The channel memory's options a backend decides (channels/memory.ts, ChannelMemoryStore's). */
export interface ChannelMemoryHooks {
  /** Keep entries for `takeChanges` (the durable server). @default false */
  readonly trackChanges?: boolean;
  /** Told each change (the durable server schedules a step). @default none */
  readonly onChange?: () => void;
  /** Reads entries kept elsewhere by key (the server on Redis). @default none */
  readonly recall?: (keys: readonly string[]) => Promise<ReadonlyMap<string, string>>;
  /** Entries kept elsewhere by key prefix (the server on Redis). @default none */
  readonly scan?: (prefix: string) => Promise<ReadonlyMap<string, string>>;
}

/** The notifier's options a backend decides (notifier.ts, NotifierDeps): where events are staged, statistics kept, messages recalled. */
export interface NotifierHooks {
  /** Events go here, and into the outbox once written with the step that made them. @default straight to the outbox */
  readonly stage?: (event: OutboxEvent) => void;
  /** A request's ENQUEUED notifications go here, and come back once written. @default kept at once */
  readonly stageRun?: (run: EnqueuedRun) => void;
  /** Every notification of a run ended: its written record may go. @default none */
  readonly onRunDone?: (runId: string) => void;
  /** A notification of a written run was dead-lettered: its record should say so. @default none */
  readonly onRunChanged?: (run: EnqueuedRun) => void;
  /** Remember what changed in statistics and tracked messages for `takeChanges`. @default false */
  readonly trackChanges?: boolean;
  /** Campaign statistics kept elsewhere (a fleet's). @default each company's own, in the notifier */
  readonly statistics?: StatisticsPort;
  /** With `trackChanges`: rows forgotten here are deleted from the copy kept elsewhere too. @default true */
  readonly forgetRows?: boolean;
  /** Reads tracked messages and SMS kept elsewhere by key (`m:` / `s:` + id). @default only what is held here */
  readonly recall?: (keys: readonly string[]) => Promise<ReadonlyMap<string, unknown>>;
}

/** The dispatch worker's options a backend decides (dispatch-worker.ts, DispatchDeps): what waits for a write, what the channel gets. */
export interface DispatchHooks {
  /** Resolves once the hand-outs made so far are written: a message goes to the channel after it. @default nothing to wait for */
  readonly beforeSend?: () => Promise<void>;
  /** The message as the channel sees it (a fleet names it by its contact's global id); undefined: not sent from here. @default as the engine made it */
  readonly messageForChannel?: (message: OutgoingMessage) => OutgoingMessage | undefined;
}

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

/** What /metrics shows of the server on Redis. */
export interface RedisMetricsSource {
  /** The status sync's state, when known. */
  readonly syncState?: () => string;
  /** Steps that failed in a row (0 while Redis answers). */
  readonly stepFailures: () => number;
  /** The fleet's backlog as last read (contacts accepted, not done). */
  readonly backlog: () => number;
  /** Contacts this instance holds (claimed, not final). */
  readonly heldContacts: () => number;
  /** Times this instance found that Redis had lost the queue (backends/redis/reset.ts). */
  readonly resets?: () => number;
}

/** What /metrics shows of a store recovered at start (the embedded database's `StoreRecovery` has it). */
export interface StoreRecoveryFigures {
  /** Commits the seal says were written and the database lacked. */
  readonly lostCommits: number;
  /** Contacts answered 202 in the lost commits, when known. */
  readonly lostContacts?: { readonly count: number };
  /** Rows of a damaged database file that could not be copied: how many (null: unknown). */
  readonly lostRows: readonly { readonly rows: number | null }[];
  /** Contacts the intake journal reported FAILED, when the store had one. */
  readonly journal?: { readonly failed: number };
}

/** What /metrics shows of a backend. */
export interface BackendMetricsSources {
  readonly redis?: RedisMetricsSource;
  readonly recovery?: StoreRecoveryFigures;
}

/**
 * A backend as buildServer makes the server over it. `Parts`: what it is handed once the server's
 * parts are made (a backend asks only what it needs of them: server-parts.ts).
 */
export interface ServerBackend<Parts extends ServerParts = ServerParts> extends Backend {
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
  attach(parts: Parts): void;
  /** Where dead letters are kept (after `attach`). */
  readonly deadLetters: DeadLetterStore;
  /** What /metrics shows of the backend. */
  metricsSources(): BackendMetricsSources;
  /** The server is built: restored work starts, losses are said. */
  start(): void;
  /** Stops stepping (before the last flush). */
  stop(): void;
  /** Gives the work this instance holds back to a fleet (after the last flush). */
  release(): Promise<void>;
  /** Nothing held here waits in shared state. */
  idle(): boolean;
}
