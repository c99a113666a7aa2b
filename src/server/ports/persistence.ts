/**
 * What the server asks of its durable state, whatever keeps it: the embedded database
 * (backends/sqlite/durability.ts: one process, its rows on disk) or Redis
 * (backends/redis/redis-persistence.ts: a queue shared by every instance). Whoever must not let
 * something out before it is kept (a 202, a message to the channel) asks `commit()` and waits;
 * changes nobody waits for are `schedule`d and written with the next step. Also what both write of
 * the webhooks (`WrittenEvent`), and how a record is told and keyed.
 */
import type { OutboxEvent } from '../../events/outbox.js';
import type { OutgoingSms } from './channel.js';
import type { SubmissionContact } from '../../core/submission.js';

export interface Persistence {
  /** Resolves when everything done before the call is kept; rejects when it cannot be. */
  commit(): Promise<void>;
  /** Something changed that nobody waits for: kept with a later step. */
  schedule(): void;
  /** A webhook event, kept with the step that made it, delivered only after. */
  stage(event: OutboxEvent): void;
  /** A request's ENQUEUED notifications (one record), kept with the step that made them. */
  stageRun(run: EnqueuedRun): void;
  /** A run kept before changed (a notification of it was dead-lettered): keep it as it is now. */
  runChanged(run: EnqueuedRun): void;
  /** SMS accepted: kept in the next step (their 202 waits for it). */
  stageSms(items: readonly OutgoingSms[]): void;
  /** An SMS the gateway answered. */
  smsAnswered(smsId: string): void;
  /** Webhook events delivered (or given up), and runs whose every notification was. */
  delivered(ids: readonly string[]): void;
  /** Writes what is gathered now (also on close). */
  flush(): void | Promise<void>;
  /** Set once a write failed: the server is closed for good. */
  readonly failed: boolean;
  /** Steps written so far (metrics, tests). */
  readonly writes: number;
}

/** What a run keeps of a contact: what its ENQUEUED says. */
export type RunContact = Pick<SubmissionContact, 'phone' | 'data' | 'document' | 'contract'> & { readonly id: number };

/** A request's ENQUEUED notifications (JSON-safe as written: only the contacts' fields they need). */
export interface EnqueuedRun {
  /** A UUID v4 drawn for the run; its notifications' `event_id`s derive from it. */
  readonly id: string;
  readonly companyId: number;
  /** The company's HSM webhook when the request was accepted. */
  readonly url: string;
  readonly campaignId: number;
  readonly requestId: string;
  readonly costCenterId: number;
  /** Acceptance time: every notification's `datetime`, and when its delivery's 24 h began. */
  readonly at: number;
  /** Accepted contacts, in increasing id. */
  readonly contacts: readonly RunContact[];
  /** Places of contacts whose ENQUEUED was dead-lettered: not built again. @default none */
  readonly dead?: readonly number[];
  /**
   * A snapshot's progress: contacts before this place were built (the outbox restored with the
   * snapshot has those not ended). @default 0
   */
  readonly built?: number;
  /** A snapshot's progress: places at or after `built` built early. @default none */
  readonly early?: readonly number[];
}

/**
 * What the durable server and Redis write of the webhooks: single events, runs, and dead letters an
 * operator replayed (an event whose id the outbox may remember as finished: it goes again anyway).
 */
export type WrittenEvent = OutboxEvent | { readonly run: EnqueuedRun } | { readonly replay: OutboxEvent };

/** A run as written (durable server, Redis): the contacts' fields its notifications need, nothing else. */
export function storedRun(run: EnqueuedRun): EnqueuedRun {
  return {
    ...run,
    contacts: run.contacts.map((c) => ({
      id: c.id,
      phone: c.phone,
      ...(c.data === undefined ? {} : { data: c.data }),
      ...(c.document === undefined ? {} : { document: c.document }),
      ...(c.contract === undefined ? {} : { contract: c.contract }),
    })),
  };
}

/** Whether a written record is a run. */
export function isRun(record: WrittenEvent): record is { readonly run: EnqueuedRun } {
  return 'run' in record;
}

/** Whether a written record is a replayed dead letter. */
export function isReplay(record: WrittenEvent): record is { readonly replay: OutboxEvent } {
  return 'replay' in record;
}

/** The id a written record is kept under: the run's, or the event's. */
export function writtenId(record: WrittenEvent): string {
  return isRun(record) ? record.run.id : isReplay(record) ? record.replay.id : record.id;
}
