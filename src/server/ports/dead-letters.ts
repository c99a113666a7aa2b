/**
 * The dead letters port: where the server keeps the webhook events its outbox gave up on, whatever
 * keeps its state (the book of one process, dead-letters.ts and dead-letter-store.ts, or Redis,
 * shared by every instance: backends/redis/shared-dead-letters.ts), their records, and the order
 * every store lists them in: newest first by the time they were dead-lettered, then by event id
 * (descending); a page ends with a cursor `<dead_lettered_at>_<event_id>` that the next page
 * starts after.
 */
import type { OutboxEvent, WebhookFamily } from '../../events/outbox.js';

/** One dead-lettered webhook event. */
export interface DeadLetter {
  readonly event: OutboxEvent;
  /** When the event was made (its payload's `datetime`, or `created_at` for a report's), epoch ms; null when the payload has neither. */
  readonly createdAt: number | null;
  /** When the outbox gave up on it, epoch ms. */
  readonly deadLetteredAt: number;
  /** Attempts made. */
  readonly attempts: number;
  /** The receiver's last answer: `HTTP 500: <body excerpt>`, `ECONNREFUSED`, `timeout`. */
  readonly lastError: string;
}

/** What to list: a family, a page size, where the page starts (a cursor of the page before). */
export interface DeadLetterQuery {
  readonly family?: WebhookFamily;
  readonly limit: number;
  /** A page's `next` cursor: the page starts after it. @default the newest */
  readonly before?: DeadLetterCursor;
}

/** A place in the order (newest first): a dead letter's time and event id. */
export interface DeadLetterCursor {
  readonly at: number;
  readonly id: string;
}

/** A page of dead letters, newest first, and the cursor of the next page (null: none after). */
export interface DeadLetterPage {
  readonly items: readonly DeadLetter[];
  readonly next: string | null;
}

/** The server's dead letters (`scope`: a company's, or null for every company's: an operator key). */
export interface DeadLetterStore {
  /** A dead-lettered event: kept (on the durable server and Redis with the step that ends its delivery). */
  deadLettered(d: DeadLetter): void;
  /** A page, newest first. */
  list(scope: number | null, query: DeadLetterQuery): Promise<DeadLetterPage>;
  /** Replays one dead letter; undefined when there is none with this id in the scope. Resolves once the replay is kept. */
  replay(scope: number | null, eventId: string): Promise<DeadLetter | undefined>;
  /** Replays every dead letter of the scope (of a family); answers how many. Resolves once kept. */
  replayAll(scope: number | null, family?: WebhookFamily): Promise<number>;
  /** Dead letters kept, per family (the gauge). */
  counts(): Promise<ReadonlyMap<WebhookFamily, number>>;
  /** Every dead letter (the snapshot file of the server in memory); undefined when kept elsewhere (Redis). */
  rows(): readonly DeadLetter[] | undefined;
}

/** The text of a cursor. */
export function formatCursor(c: DeadLetterCursor): string {
  return `${c.at}_${c.id}`;
}

/** A cursor from its text; undefined when it is not one. */
export function parseCursor(text: string): DeadLetterCursor | undefined {
  const m = /^(0|[1-9][0-9]{0,15})_([A-Za-z0-9-]{1,100})$/.exec(text);
  return m ? { at: Number(m[1]), id: m[2]! } : undefined;
}

/** Newest first: later time, then greater id. */
export function newestFirst(a: DeadLetter, b: DeadLetter): number {
  return b.deadLetteredAt - a.deadLetteredAt || (a.event.id < b.event.id ? 1 : a.event.id > b.event.id ? -1 : 0);
}

/** Whether `d` comes after the cursor in the order (newest first). */
export function afterCursor(d: DeadLetter, c: DeadLetterCursor): boolean {
  return d.deadLetteredAt < c.at || (d.deadLetteredAt === c.at && d.event.id < c.id);
}
