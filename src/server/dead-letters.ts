/**
 * The dead-letter book: every webhook event the outbox gave up on (a dead-lettered outcome), kept
 * with its receiver's last answer so an operator can see it and replay it. Pure bookkeeping: no
 * clock of its own (times are passed in), no I/O; the server keeps it in memory, writes its changes
 * with each durable step (storage), and on Redis keeps the same records in Redis instead
 * (backends/redis/shared-dead-letters.ts), with the same bounds and the same order.
 *
 * Bounds: per company, the newest `maxPerCompany` dead letters of the last `maxAgeMs`; older ones
 * are dropped when a newer one comes, and when the book is read. Order: newest first by the time
 * they were dead-lettered, then by event id (descending); a page ends with a cursor
 * `<dead_lettered_at>_<event_id>` that the next page starts after.
 */
import { parseDateTime } from '../events/datetime.js';
import type { DeliveryOutcome, WebhookFamily } from '../events/outbox.js';
import { afterCursor, formatCursor, newestFirst, type DeadLetter, type DeadLetterPage, type DeadLetterQuery } from './ports/dead-letters.js';

export { parseCursor, type DeadLetter, type DeadLetterCursor, type DeadLetterPage, type DeadLetterQuery } from './ports/dead-letters.js';

/** Bounds of the dead letters kept (`BuildServerOptions.deadLetters`). */
export interface DeadLetterOptions {
  /**
   * Most dead letters kept per company: a newer one drops the oldest.
   * @default 10_000
   */
  readonly maxPerCompany?: number;
  /**
   * How long a dead letter is kept, in ms from when it was dead-lettered.
   * @default 604_800_000 (7 days)
   */
  readonly maxAgeMs?: number;
}

/** @see DeadLetterOptions.maxPerCompany */
export const DEFAULT_DEAD_LETTERS_PER_COMPANY = 10_000;
/** @see DeadLetterOptions.maxAgeMs */
export const DEFAULT_DEAD_LETTER_AGE_MS = 7 * 86_400_000;

/** A change of the book for a durable step: a dead letter kept (`row`) or dropped (`row` null), in order. */
export interface DeadLetterChange {
  readonly id: string;
  readonly companyId: number;
  readonly row: DeadLetter | null;
}

/** The record of a dead-lettered outcome. */
export function deadLetterOf(outcome: Extract<DeliveryOutcome, { kind: 'dead-lettered' }>): DeadLetter {
  return { event: outcome.event, createdAt: payloadTime(outcome.event.body), deadLetteredAt: outcome.at, attempts: outcome.attempts, lastError: outcome.lastError };
}

/**
 * When a payload says it was made: its `datetime` (HSM, attendance, campaign, SMS callbacks), or
 * its `created_at` (a report's), epoch ms; null when it has neither.
 */
function payloadTime(body: string): number | null {
  try {
    const p = JSON.parse(body) as { datetime?: unknown; created_at?: unknown } | null;
    const v = p?.datetime ?? p?.created_at;
    return typeof v === 'string' ? (parseDateTime(v) ?? null) : null;
  } catch {
    return null;
  }
}

/** The bounds the options set (a book's here, or a fleet's on Redis). */
export function deadLetterBounds(options: DeadLetterOptions = {}): { readonly maxPerCompany: number; readonly maxAgeMs: number } {
  return { maxPerCompany: options.maxPerCompany ?? DEFAULT_DEAD_LETTERS_PER_COMPANY, maxAgeMs: options.maxAgeMs ?? DEFAULT_DEAD_LETTER_AGE_MS };
}

export class DeadLetterBook {
  readonly maxPerCompany: number;
  readonly maxAgeMs: number;
  /** Per company, by event id, in the order they were added (oldest first). */
  readonly #byCompany = new Map<number, Map<string, DeadLetter>>();
  readonly #counts = new Map<WebhookFamily, number>();
  readonly #track: boolean;
  #changes: DeadLetterChange[] = [];
  #size = 0;

  constructor(options: DeadLetterOptions = {}, trackChanges = false) {
    ({ maxPerCompany: this.maxPerCompany, maxAgeMs: this.maxAgeMs } = deadLetterBounds(options));
    this.#track = trackChanges;
  }

  /** Dead letters kept. */
  get size(): number {
    return this.#size;
  }

  /** Dead letters kept per family. */
  counts(): ReadonlyMap<WebhookFamily, number> {
    return this.#counts;
  }

  /** Keeps a dead letter (replacing one with its id), then drops what the bounds exclude. */
  add(d: DeadLetter, now: number): void {
    const companyId = d.event.companyId;
    let book = this.#byCompany.get(companyId);
    if (book === undefined) this.#byCompany.set(companyId, (book = new Map<string, DeadLetter>()));
    if (book.has(d.event.id)) this.#drop(book, d.event.id, false);
    book.set(d.event.id, d);
    this.#size++;
    this.#count(d.event.family, 1);
    if (this.#track) this.#changes.push({ id: d.event.id, companyId, row: d });
    while (book.size > this.maxPerCompany) this.#drop(book, book.keys().next().value!, true);
    this.prune(now);
  }

  /** Loads dead letters kept before (a restart), oldest first; nothing is recorded as a change. */
  load(rows: readonly DeadLetter[]): void {
    for (const d of rows) {
      let book = this.#byCompany.get(d.event.companyId);
      if (book === undefined) this.#byCompany.set(d.event.companyId, (book = new Map<string, DeadLetter>()));
      if (book.has(d.event.id)) continue;
      book.set(d.event.id, d);
      this.#size++;
      this.#count(d.event.family, 1);
    }
  }

  /** Drops the dead letters older than `maxAgeMs` at `now`. */
  prune(now: number): void {
    const oldest = now - this.maxAgeMs;
    for (const [company, book] of this.#byCompany) {
      // Mostly oldest first (times of one process never go back); a late one is caught on its own turn.
      for (const [id, d] of book) {
        if (d.deadLetteredAt >= oldest) break;
        this.#drop(book, id, true);
      }
      if (book.size === 0) this.#byCompany.delete(company);
    }
  }

  /** A company's dead letter (any company's with `companyId` null). */
  get(companyId: number | null, id: string): DeadLetter | undefined {
    if (companyId !== null) return this.#byCompany.get(companyId)?.get(id);
    for (const book of this.#byCompany.values()) {
      const d = book.get(id);
      if (d) return d;
    }
    return undefined;
  }

  /** Removes and answers a dead letter (for a replay). */
  take(companyId: number | null, id: string): DeadLetter | undefined {
    const d = this.get(companyId, id);
    if (d) this.#drop(this.#byCompany.get(d.event.companyId)!, id, true);
    return d;
  }

  /**
   * Removes and answers a company's (every company's) dead letters of a family (of every family),
   * in the order they were dead-lettered: events of one order chain (a contact's notifications)
   * come in the order the outbox ended them, so a replay keeps their order.
   */
  takeAll(companyId: number | null, family?: WebhookFamily): DeadLetter[] {
    const out: DeadLetter[] = [];
    for (const [company, book] of this.#byCompany) {
      if (companyId !== null && company !== companyId) continue;
      for (const [id, d] of book) {
        if (family !== undefined && d.event.family !== family) continue;
        this.#drop(book, id, true);
        out.push(d);
      }
    }
    return out;
  }

  /** A page of a company's (every company's) dead letters, newest first. */
  list(companyId: number | null, query: DeadLetterQuery, now: number): DeadLetterPage {
    this.prune(now);
    const all: DeadLetter[] = [];
    for (const [company, book] of this.#byCompany) {
      if (companyId !== null && company !== companyId) continue;
      for (const d of book.values()) {
        if (query.family !== undefined && d.event.family !== query.family) continue;
        if (query.before !== undefined && !afterCursor(d, query.before)) continue;
        all.push(d);
      }
    }
    all.sort(newestFirst);
    const items = all.slice(0, query.limit);
    const last = items[items.length - 1];
    return { items, next: all.length > query.limit && last ? formatCursor({ at: last.deadLetteredAt, id: last.event.id }) : null };
  }

  /** Every dead letter, oldest first per company (a snapshot file). */
  rows(): DeadLetter[] {
    return [...this.#byCompany.values()].flatMap((book) => [...book.values()]);
  }

  /** Changes since the last call, in order (durable server). */
  takeChanges(): DeadLetterChange[] {
    const out = this.#changes;
    this.#changes = [];
    return out;
  }

  #drop(book: Map<string, DeadLetter>, id: string, record: boolean): void {
    const d = book.get(id);
    if (d === undefined) return;
    book.delete(id);
    this.#size--;
    this.#count(d.event.family, -1);
    if (record && this.#track) this.#changes.push({ id, companyId: d.event.companyId, row: null });
  }

  #count(family: WebhookFamily, by: number): void {
    const n = (this.#counts.get(family) ?? 0) + by;
    if (n === 0) this.#counts.delete(family);
    else this.#counts.set(family, n);
  }
}
