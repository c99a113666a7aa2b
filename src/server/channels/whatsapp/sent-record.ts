/**
 * What the channel keeps of a message the platform accepted, to find what a user's reply answers:
 * a short string in the server's `ChannelMemory` (on the durable server, written to its database),
 * under the platform's message id and under the user's phone. The text of the message is not in it
 * (the server keeps what it sent, and fills in an attendance's first message).
 *
 * Keys: `wm:<wamid>` and `wp:<user's phone>` hold the record; `wr:<messageId>` says what was
 * reported of a reply to the message (REPLIED once per message, and once more for an opt-out after
 * a reply; also across a restart, when Meta delivers a reply again).
 */
import type { OutgoingMessage } from '../../../core/dispatch/types.js';

/** A message the platform accepted, as a reply needs it. */
export interface SentRecord {
  readonly messageId: string;
  /** The number that sent it. */
  readonly from: string;
  readonly sentAt: number;
}

export const WAMID_KEY = 'wm:';
export const PHONE_KEY = 'wp:';
export const REPLIED_KEY = 'wr:';
/** `wr:` values: REPLIED was reported; REPLIED with an opt-out was. */
export const REPLIED = 'r';
export const OPTED_OUT = 'o';

/** `<sentAt in base 36> <from> <messageId>`: the message id last, so it may hold anything. */
export function encodeSent(m: OutgoingMessage, sentAt: number): string {
  return `${sentAt.toString(36)} ${m.phone} ${m.messageId}`;
}

/** A fleet's phone: digits. */
const DIGITS = /^\d+$/;

/** Reads a record; undefined when it is not one (written by something else). */
export function decodeSent(text: string): SentRecord | undefined {
  const a = text.indexOf(' ');
  const b = a < 0 ? -1 : text.indexOf(' ', a + 1);
  if (b < 0 || b === text.length - 1) return undefined;
  const sentAt = Number.parseInt(text.slice(0, a), 36);
  const from = text.slice(a + 1, b);
  if (!Number.isSafeInteger(sentAt) || !DIGITS.test(from)) return undefined;
  return { sentAt, from, messageId: text.slice(b + 1) };
}
