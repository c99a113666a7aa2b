/**
 * Attendances opened by replies. The Cloud API has no attendance system: a user's reply to one of
 * our messages opens an attendance (spec 6.2: "the conversation from the HSM sent"), the user's
 * later messages to the same number join it, and it closes after `idleMs` without messages. It is
 * then reported to the sink with the campaign's message and the user's messages. A host with an
 * attendance system of its own turns this off and reports its attendances itself.
 */
import { randomUUID } from 'node:crypto';
import type { AttendanceMessageReport, AttendanceReport } from '../../ports/channel.js';

interface Open {
  readonly messageId: string;
  readonly attendanceId: number;
  readonly ticketUuid: string;
  readonly messages: AttendanceMessageReport[];
  lastAt: number;
}

export interface AttendanceOptions {
  readonly idleMs: number;
  /** Most attendances open at once; past it the quietest closes early. */
  readonly maxOpen: number;
  readonly now: () => number;
  readonly report: (report: AttendanceReport) => void;
}

/** Most messages kept in one attendance (a chatty user does not grow it without end). */
const MAX_MESSAGES = 200;

export class Attendances {
  readonly #open = new Map<string, Open>();
  readonly #options: AttendanceOptions;
  /** Ids from the clock at start, so they do not repeat across restarts. */
  #nextId: number;

  constructor(options: AttendanceOptions) {
    this.#options = options;
    this.#nextId = options.now();
  }

  /**
   * A user's message on the conversation `key` (our number and the user's). `opening` is the
   * message of ours it answers, when this message opens an attendance.
   */
  message(key: string, message: AttendanceMessageReport, opening: { readonly messageId: string; readonly text: string; readonly sentAt: number } | undefined): void {
    const open = this.#open.get(key);
    if (open) {
      if (open.messages.length < MAX_MESSAGES) open.messages.push(message);
      open.lastAt = this.#options.now();
      // Most recently active last: the sweep and the bound close from the front.
      this.#open.delete(key);
      this.#open.set(key, open);
      return;
    }
    if (!opening) return;
    const id = ++this.#nextId;
    this.#open.set(key, {
      messageId: opening.messageId,
      attendanceId: id,
      ticketUuid: randomUUID(),
      messages: [{ sender: 'campaign', type: 'text', text: opening.text, at: opening.sentAt }, message],
      lastAt: this.#options.now(),
    });
    if (this.#open.size > this.#options.maxOpen) this.#closeFirst();
  }

  get size(): number {
    return this.#open.size;
  }

  /** Closes the attendances quiet for `idleMs` by now. */
  sweep(): void {
    const limit = this.#options.now() - this.#options.idleMs;
    for (const [key, open] of this.#open) {
      if (open.lastAt > limit) break; // ordered by activity: the rest are newer
      this.#close(key, open);
    }
  }

  /** Closes every open attendance (shutdown: they are reported rather than lost). */
  closeAll(): void {
    for (const [key, open] of this.#open) this.#close(key, open);
  }

  #closeFirst(): void {
    const first = this.#open.entries().next();
    if (!first.done) this.#close(first.value[0], first.value[1]);
  }

  #close(key: string, open: Open): void {
    this.#open.delete(key);
    this.#options.report({
      messageId: open.messageId,
      attendanceId: open.attendanceId,
      ticketId: open.attendanceId,
      ticketUuid: open.ticketUuid,
      closedAt: Math.max(open.lastAt, this.#options.now()),
      occurrence: null,
      user: null,
      messages: open.messages,
      survey: null,
    });
  }
}
