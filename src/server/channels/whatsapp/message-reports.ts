/**
 * What the platform tells of our messages after the send: their statuses become later statuses of
 * the message, and a user's reply becomes REPLIED (with an opt-out, when it is one) and opens an
 * attendance (attendances.ts). The message a status or reply concerns is found in the records of
 * sent messages (sent-memory.ts); what was reported of its replies is kept there too, so a reply
 * Meta delivers again after a restart is not reported twice.
 */
import type { AttendanceReport, ChannelSink, LaterStatus } from '../../ports/channel.js';
import { Attendances } from './attendances.js';
import type { FleetIds } from './fleet-ids.js';
import type { SentRecord } from './sent-record.js';
import type { SentMemory } from './sent-memory.js';
import type { StatusValue, WebhookEvent } from './webhook-events.js';

/** The events that report on a message: its statuses and the users' replies. */
export type MessageEvent = Extract<WebhookEvent, { kind: 'status' | 'message' }>;

/** A user's message to one of our numbers. */
type Reply = Extract<MessageEvent, { kind: 'message' }>;

export interface MessageReportsOptions {
  readonly ids: FleetIds;
  /** Keywords of an opt-out, trimmed and in upper case. */
  readonly optOutKeywords: ReadonlySet<string>;
  /** Time without messages that closes an attendance; false: the channel opens none. */
  readonly attendanceIdleMs: number | false;
  readonly maxOpenAttendances: number;
  readonly now: () => number;
}

const LATER: Readonly<Record<Exclude<StatusValue, 'held_for_quality_assessment'>, LaterStatus>> = {
  // The API's acceptance is SENT; the platform's `sent` (the message left its servers) is SERVER.
  sent: 'SERVER',
  delivered: 'DEVICE',
  read: 'READ',
  failed: 'FAILED',
};

/** The attendances the replies open, and the timer that closes the quiet ones; or none at all. */
type AttendanceKeeping = { readonly kind: 'off' } | { readonly kind: 'on'; readonly open: Attendances; readonly sweep: ReturnType<typeof setInterval> };

export class MessageReports {
  readonly #o: MessageReportsOptions;
  readonly #sent: SentMemory;
  readonly #attendances: AttendanceKeeping;
  #held = 0;

  /** @param report told of each attendance that closed */
  constructor(o: MessageReportsOptions, sent: SentMemory, report: (attendance: AttendanceReport) => void) {
    this.#o = o;
    this.#sent = sent;
    if (o.attendanceIdleMs === false) this.#attendances = { kind: 'off' };
    else {
      const open = new Attendances({ idleMs: o.attendanceIdleMs, maxOpen: o.maxOpenAttendances, now: o.now, report });
      const sweep = setInterval(() => open.sweep(), Math.max(10, Math.min(60_000, Math.floor(o.attendanceIdleMs / 2))));
      sweep.unref();
      this.#attendances = { kind: 'on', open, sweep };
    }
  }

  /** Statuses `held_for_quality_assessment` received. */
  get held(): number {
    return this.#held;
  }

  get openAttendances(): number {
    return this.#attendances.kind === 'on' ? this.#attendances.open.size : 0;
  }

  report(e: MessageEvent, to: ChannelSink): void {
    if (e.kind === 'message') return this.#reply(e, to);
    // Held for the template's early feedback: still at the platform, neither left nor failed;
    // its `sent` (released) or `failed` (dropped, 132015) comes later. No status changes.
    if (e.status === 'held_for_quality_assessment') {
      this.#held++;
      return;
    }
    const messageId = this.#sent.messageIdOf(e);
    if (messageId === undefined) return; // a message of another sender on the same account
    to.messageStatus({
      messageId,
      status: LATER[e.status],
      ...(e.at !== undefined ? { at: e.at } : {}),
      bsuid: e.bsuid,
      username: e.username,
      ...(e.status === 'failed' ? { failureCode: e.errorCode ?? 131000 } : {}),
    });
  }

  /** Stops the sweep; open attendances are reported closed now rather than lost with the process. */
  close(): void {
    if (this.#attendances.kind === 'off') return;
    this.#attendances.open.closeAll();
    clearInterval(this.#attendances.sweep);
  }

  #reply(e: Reply, to: ChannelSink): void {
    const { now } = this.#o;
    const phone = this.#numberOf(e);
    if (phone === undefined || e.from === undefined) return;
    const answered = this.#answeredBy(e, e.from, phone);
    const reported = answered === undefined ? 'none' : this.#sent.replyReported(answered.messageId);
    const optOut = this.#isOptOut(e.text) || this.#isOptOut(e.buttonPayload);
    const at = e.at ?? now();
    // An opt-out after a reply is reported too (it blocklists); the same one again is not.
    if (answered && (reported === 'none' || (optOut && reported !== 'opted-out'))) {
      to.messageStatus({ messageId: answered.messageId, status: 'REPLIED', at, bsuid: e.bsuid, username: e.username, blocklistResponse: optOut, replyText: e.text });
      this.#sent.markReplyReported(answered.messageId, optOut ? 'opted-out' : 'replied');
    }
    // An opt-out ends the conversation: it opens no attendance.
    if (optOut || this.#attendances.kind === 'off') return;
    const opening = answered && reported === 'none' ? openingOf(answered) : undefined;
    this.#attendances.open.message(`${phone}>${e.from}`, { sender: 'client', type: e.type, text: e.text, at }, opening);
  }

  /** Our number the reply came to: by its phone number id, else by its display number. */
  #numberOf(e: Reply): string | undefined {
    const { ids } = this.#o;
    return (e.phoneNumberId !== undefined ? ids.phoneOfPhoneNumberId(e.phoneNumberId) : undefined) ?? (e.displayPhoneNumber !== undefined ? ids.phoneOfDisplay(e.displayPhoneNumber) : undefined);
  }

  /** The message a reply of `from` to our `phone` answers: the one it quotes, or else the last one our number sent the user. */
  #answeredBy(e: Reply, from: string, phone: string): SentRecord | undefined {
    const last = this.#sent.lastTo(from);
    return (e.contextId !== undefined ? this.#sent.byWamid(e.contextId) : undefined) ?? (last?.from === phone ? last : undefined);
  }

  #isOptOut(text: string | undefined): boolean {
    return text !== undefined && this.#o.optOutKeywords.has(text.trim().toUpperCase());
  }
}

/** The message an attendance starts with; its text is left to the server, which keeps what it sent. */
function openingOf(r: SentRecord): { messageId: string; text: string; sentAt: number } {
  return { messageId: r.messageId, text: '', sentAt: r.sentAt };
}
