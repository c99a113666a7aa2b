/**
 * The activity log: what the period reports (`official-messages`, `attendance-history`,
 * `attendance-statistics`) are built from. The notifier feeds it as notifications happen: one entry
 * per HSM message the server handed to the channel (a contact's send attempt: its first try or a
 * retry), updated by every later status, and one entry per closed attendance.
 *
 * It is bounded twice (docs/decisions.md, "Report data"): entries older than the retention are
 * dropped, and beyond the count bound the oldest go first. The clock never goes back, so entries are
 * kept in time order and both bounds drop from the head. The durable server writes what changed in
 * each step (rows put, rows dropped by count, and a time before which rows are dropped by age).
 */
import type { Clock } from '../core/clock.js';
import { reasonFor } from '../events/failure-reason.js';
import type { HsmStatusInput } from '../events/hsm.js';
import type { HsmStatus } from '../events/schemas/hsm.js';
import { currentStatus, observe, type MessageProgress } from '../events/status-merge.js';
import type { AttendanceReport } from './ports/channel.js';
import type { ServerContact } from './contacts.js';

/** One HSM message: a send attempt of a contact (its first try, or a retry) and its statuses. */
export interface MessageLogEntry {
  readonly companyId: number;
  /** The HSM `id`: one integer per contact, the same on its retries. */
  readonly contactId: number;
  readonly requestId: string;
  readonly campaignId: number;
  readonly costCenterId: number;
  /** Business of the sending number; null when the fleet no longer has that number. */
  readonly businessId: number | null;
  /** The sending number. */
  readonly from: string;
  /** The contact's phone number. */
  readonly to: string;
  /** Null on the first try, 0 for the first retry (spec 6.3 `retry_index`). */
  readonly retryIndex: number | null;
  /** The template text with the contact's values, as sent. */
  readonly text: string;
  /** When it was handed to the channel (the HSM `datetime`). */
  readonly sentAt: number;
  /** Statuses observed, merged (events/status-merge.ts): out of order and duplicates change nothing. */
  progress: MessageProgress;
  /** When each status was first observed. */
  readonly times: Partial<Record<HsmStatus, number>>;
  /** Spec 7.1 reason of the first FAILED, else null. */
  reason: string | null;
}

/** A closed attendance, without its messages (their counts are kept). */
export interface AttendanceLogEntry {
  readonly companyId: number;
  readonly attendanceId: number;
  readonly ticketId: number;
  readonly ticketUuid: string;
  /** The HSM `id` of the contact whose reply opened it. */
  readonly contactId: number;
  readonly requestId: string;
  readonly campaignId: number;
  readonly costCenterId: number;
  /** The contact's phone number. */
  readonly number: string;
  /** The sending number of the message replied to. */
  readonly from: string;
  /** The client's first message (the reply that opened it); the first message, or the close, without one. */
  readonly openedAt: number;
  readonly closedAt: number;
  readonly messages: { readonly total: number; readonly campaign: number; readonly client: number; readonly bot: number; readonly attendant: number };
  readonly user: { readonly id: number; readonly name: string } | null;
  readonly occurrence: { readonly id: number; readonly name: string } | null;
  readonly survey: {
    readonly id: number;
    readonly name: string;
    readonly status: 'completed' | 'declined' | 'failed' | 'expired' | 'cancelled';
    readonly answers: number;
    /** Mean of the numeric answers to `scale` questions; null without one. */
    readonly score: number | null;
  } | null;
}

/** What the reports read: a company's entries of a period `[start, end)`, oldest first. */
export interface ActivityLogView {
  messages(companyId: number, start: number, end: number): MessageLogEntry[];
  attendances(companyId: number, start: number, end: number): AttendanceLogEntry[];
}

/** What the notifier tells the log. */
export interface ActivitySink {
  /** An HSM status of a contact's send (every status the notifier handles). */
  status(contact: ServerContact, campaignId: number, retryIndex: number | null, sentAt: number, status: HsmStatusInput): void;
  /** An attendance closed, opened by a reply to `message`. */
  attendance(report: AttendanceReport, message: { readonly contact: ServerContact; readonly campaignId: number; readonly from: string }): void;
}

/** What the durable server writes of the log in a step. */
export interface ActivityChanges {
  /** Entries to keep: key, entry time (epoch ms), entry. */
  readonly activityPut?: (readonly [key: string, at: number, row: unknown])[];
  /** Entries dropped by the count bound. */
  readonly activityDelete?: string[];
  /** Entries before this time are dropped (the retention). */
  readonly activityBefore?: number;
}

/** Options of {@link ActivityLog}. */
export interface ActivityLogOptions {
  readonly clock: Clock;
  /** Entries older than this are dropped. */
  readonly retentionMs: number;
  /** Most message entries kept. */
  readonly maxMessages: number;
  /** Most attendance entries kept. */
  readonly maxAttendances: number;
  /** The business of a sending number (from the fleet). */
  readonly businessOf: (phone: string) => number | undefined;
  /** Remember what changed for {@link ActivityLog.takeChanges} (the durable server). @default false */
  readonly trackChanges?: boolean;
  /** Called when something changed with trackChanges (the durable server schedules a write). @default none */
  readonly onChange?: () => void;
}

/** Store keys: `m:` + contact id (+ `#` + retry index) for messages, `a:` + company + `:` + attendance id. */
function messageKey(contactId: number, retryIndex: number | null): string {
  return retryIndex === null ? `m:${contactId}` : `m:${contactId}#${retryIndex}`;
}

export class ActivityLog implements ActivitySink, ActivityLogView {
  readonly #o: ActivityLogOptions;
  /** By key, in time order (Map order): the head is the oldest. */
  readonly #messages = new Map<string, MessageLogEntry>();
  readonly #attendances = new Map<string, AttendanceLogEntry>();
  /** With trackChanges: keys put (the entry) or dropped by count (null) since the last step. */
  readonly #changes = new Map<string, MessageLogEntry | AttendanceLogEntry | null>();
  /** With trackChanges: the retention cutoff applied since the last step, if it dropped anything. */
  #before: number | undefined;

  constructor(options: ActivityLogOptions) {
    this.#o = options;
  }

  get size(): { readonly messages: number; readonly attendances: number } {
    return { messages: this.#messages.size, attendances: this.#attendances.size };
  }

  status(contact: ServerContact, campaignId: number, retryIndex: number | null, sentAt: number, status: HsmStatusInput): void {
    // ENQUEUED, and a contact that ended in the queue without a send, are no message sent.
    if (status.from === null || status.message === null || status.status === 'ENQUEUED') return;
    const now = this.#o.clock.now();
    if (sentAt < now - this.#o.retentionMs) return;
    const key = messageKey(contact.id, retryIndex);
    let entry = this.#messages.get(key);
    if (!entry) {
      entry = {
        companyId: contact.companyId,
        contactId: contact.id,
        requestId: contact.requestId,
        campaignId,
        costCenterId: contact.costCenterId,
        businessId: this.#o.businessOf(status.from) ?? null,
        from: status.from,
        to: contact.phone,
        retryIndex,
        text: status.message,
        sentAt,
        progress: 0,
        times: {},
        reason: null,
      };
      this.#messages.set(key, entry);
    }
    const before = entry.progress;
    entry.progress = observe(before, { status: status.status, ...(status.status === 'REPLIED' ? { blocklistResponse: status.blocklistResponse } : {}) });
    entry.times[status.status] ??= now;
    if (status.status === 'FAILED' && entry.reason === null) entry.reason = reasonOf(status.failure);
    this.#changed(key, entry);
    this.#bound(now);
  }

  attendance(r: AttendanceReport, message: { readonly contact: ServerContact; readonly campaignId: number; readonly from: string }): void {
    const now = this.#o.clock.now();
    if (r.closedAt < now - this.#o.retentionMs) return;
    const { contact } = message;
    const counts = { total: r.messages.length, campaign: 0, client: 0, bot: 0, attendant: 0 };
    for (const m of r.messages) {
      if (typeof m.sender === 'object') counts.attendant++;
      else counts[m.sender]++;
    }
    const times = r.messages.map((m) => m.at);
    const clientTimes = r.messages.filter((m) => m.sender === 'client').map((m) => m.at);
    const openedAt = clientTimes.length > 0 ? Math.min(...clientTimes) : times.length > 0 ? Math.min(...times) : r.closedAt;
    const s = r.survey;
    const scale = (s?.answers ?? [])
      .filter((a) => a.questionType === 'scale')
      .map((a) => Number(a.answer))
      .filter((n) => Number.isFinite(n));
    const key = `a:${contact.companyId}:${r.attendanceId}`;
    const entry: AttendanceLogEntry = {
      companyId: contact.companyId,
      attendanceId: r.attendanceId,
      ticketId: r.ticketId,
      ticketUuid: r.ticketUuid,
      contactId: contact.id,
      requestId: contact.requestId,
      campaignId: message.campaignId,
      costCenterId: contact.costCenterId,
      number: contact.phone,
      from: message.from,
      openedAt: Math.min(openedAt, r.closedAt),
      closedAt: r.closedAt,
      messages: counts,
      user: r.user ?? null,
      occurrence: r.occurrence ?? null,
      survey: s ? { id: s.id, name: s.name, status: s.status, answers: s.answers.length, score: scale.length > 0 ? scale.reduce((a, b) => a + b, 0) / scale.length : null } : null,
    };
    // A provider that reports an attendance twice: the later report replaces the earlier, in place.
    this.#attendances.set(key, entry);
    this.#changed(key, entry);
    this.#bound(now);
  }

  messages(companyId: number, start: number, end: number): MessageLogEntry[] {
    const from = Math.max(start, this.#bound(this.#o.clock.now()));
    const out: MessageLogEntry[] = [];
    for (const e of this.#messages.values()) if (e.companyId === companyId && e.sentAt >= from && e.sentAt < end) out.push(e);
    // In time order but for entries made by a status that came after a restart without the log.
    return out.sort((a, b) => a.sentAt - b.sentAt || a.contactId - b.contactId);
  }

  attendances(companyId: number, start: number, end: number): AttendanceLogEntry[] {
    const from = Math.max(start, this.#bound(this.#o.clock.now()));
    const out: AttendanceLogEntry[] = [];
    for (const e of this.#attendances.values()) if (e.companyId === companyId && e.closedAt >= from && e.closedAt < end) out.push(e);
    // Attendances are recorded as they close, which is their order by closing time; sorted anyway
    // for a provider whose reports come late.
    return out.sort((a, b) => a.closedAt - b.closedAt || a.attendanceId - b.attendanceId);
  }

  /**
   * Drops what is past the retention and beyond the count bounds (oldest first); answers the
   * retention's cutoff (an entry out of time order may outlive it here, never in a report).
   */
  #bound(now: number): number {
    const cutoff = now - this.#o.retentionMs;
    let aged = false;
    for (const [key, e] of this.#messages) {
      if (e.sentAt >= cutoff) break;
      this.#messages.delete(key);
      this.#changes.delete(key);
      aged = true;
    }
    for (const [key, e] of this.#attendances) {
      if (e.closedAt >= cutoff) break;
      this.#attendances.delete(key);
      this.#changes.delete(key);
      aged = true;
    }
    if (aged && this.#o.trackChanges === true) this.#before = cutoff;
    evict(this.#messages, this.#o.maxMessages, (key) => this.#changed(key, null));
    evict(this.#attendances, this.#o.maxAttendances, (key) => this.#changed(key, null));
    return cutoff;
  }

  #changed(key: string, entry: MessageLogEntry | AttendanceLogEntry | null): void {
    if (this.#o.trackChanges !== true) return;
    this.#changes.set(key, entry);
    // Written within the store's lazy delay even when no webhook is configured to carry it.
    this.#o.onChange?.();
  }

  /** What changed since the last call (everything with `full`), for the durable store. */
  takeChanges(full = false): ActivityChanges {
    const put: [string, number, unknown][] = [];
    const dropped: string[] = [];
    if (full) {
      for (const [key, e] of this.#messages) put.push([key, e.sentAt, e]);
      for (const [key, e] of this.#attendances) put.push([key, e.closedAt, e]);
    } else {
      for (const [key, e] of this.#changes) {
        if (e === null) dropped.push(key);
        else put.push([key, timeOf(e), e]);
      }
    }
    const before = this.#before;
    this.#changes.clear();
    this.#before = undefined;
    return {
      ...(put.length > 0 ? { activityPut: put } : {}),
      ...(dropped.length > 0 ? { activityDelete: dropped } : {}),
      ...(before !== undefined ? { activityBefore: before } : {}),
    };
  }

  /** Every entry as `[key, entry]`, oldest first (the snapshot file; the store's rows have the same shape). */
  rows(): (readonly [string, unknown])[] {
    return [...this.#messages, ...this.#attendances];
  }

  /** Loads kept entries (the store's rows, or a snapshot's), oldest first; then applies the bounds. */
  load(rows: readonly (readonly [string, unknown])[]): void {
    for (const [key, row] of rows) {
      if (key.startsWith('m:')) this.#messages.set(key, row as MessageLogEntry);
      else if (key.startsWith('a:')) this.#attendances.set(key, row as AttendanceLogEntry);
    }
    this.#bound(this.#o.clock.now());
  }
}

/** The current status of a message entry (the merge of what was observed) and when it was reached. */
export function messageStatus(e: MessageLogEntry): { readonly status: HsmStatus; readonly at: number } {
  const status = currentStatus(e.progress) ?? 'SENT';
  return { status, at: e.times[status] ?? e.sentAt };
}

function timeOf(e: MessageLogEntry | AttendanceLogEntry): number {
  return 'sentAt' in e ? e.sentAt : e.closedAt;
}

function reasonOf(failure: Parameters<typeof reasonFor>[0]): string | null {
  try {
    return reasonFor(failure);
  } catch {
    // A failure the HSM builder refuses too: the log keeps the status without a reason.
    return null;
  }
}

function evict<T>(map: Map<string, T>, max: number, dropped: (key: string) => void): void {
  while (map.size > max) {
    const oldest = map.keys().next().value;
    if (oldest === undefined) return;
    map.delete(oldest);
    dropped(oldest);
  }
}
