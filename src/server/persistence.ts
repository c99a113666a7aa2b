/**
 * What the server asks of its durable state, whatever keeps it: the embedded database
 * (durability.ts: one process, its rows on disk) or Redis (redis/redis-persistence.ts: a queue
 * shared by every instance). Whoever must not let something out before it is kept (a 202, a
 * message to the channel) asks `commit()` and waits; changes nobody waits for are `schedule`d and
 * written with the next step.
 */
import type { OutboxEvent } from '../events/outbox.js';
import type { OutgoingSms } from './ports/channel.js';
import type { EnqueuedRun } from './enqueued-runs.js';

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
