/**
 * What the channel keeps of a message the platform accepted, to find what a user's reply answers:
 * a short string in the server's `ChannelMemory` (on the durable server, a row of its database), under
 * the platform's message id and under the user's phone. The text of the message is not in it (a
 * row per send stays small): an attendance opened after a restart starts with the template's text
 * as the fleet has it.
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
  readonly templateId: number;
}

export const WAMID_KEY = 'wm:';
export const PHONE_KEY = 'wp:';
export const REPLIED_KEY = 'wr:';
/** `wr:` values: REPLIED was reported; REPLIED with an opt-out was. */
export const REPLIED = 'r';
export const OPTED_OUT = 'o';

/** `<sentAt in base 36> <templateId> <from> <messageId>`: the message id last, so it may hold anything. */
export function encodeSent(m: OutgoingMessage, sentAt: number): string {
  return `${sentAt.toString(36)} ${m.templateId} ${m.phone} ${m.messageId}`;
}

/** Reads a record; undefined when it is not one (written by something else). */
export function decodeSent(text: string): SentRecord | undefined {
  const a = text.indexOf(' ');
  const b = a < 0 ? -1 : text.indexOf(' ', a + 1);
  const c = b < 0 ? -1 : text.indexOf(' ', b + 1);
  if (c < 0 || c === text.length - 1) return undefined;
  const sentAt = Number.parseInt(text.slice(0, a), 36);
  const templateId = Number(text.slice(a + 1, b));
  if (!Number.isSafeInteger(sentAt) || !Number.isSafeInteger(templateId)) return undefined;
  return { sentAt, templateId, from: text.slice(b + 1, c), messageId: text.slice(c + 1) };
}
