/**
 * The records of sent messages (sent-record.ts) in the `ChannelMemory` the server lends (written to
 * its database when it has one), so a reply to a message sent before a restart still finds it;
 * until the server attaches one (or when a host attaches none), a memory of the channel's own.
 *
 * Before a notification is acted on, {@link SentMemory.recall} makes the memory hold what the
 * fleet remembers of the messages it names: on the server on Redis another instance may have sent
 * them, so their records, whether they were replied to, and what the server tracks of them are
 * read from Redis first.
 */
import type { OutgoingMessage } from '../../../core/dispatch/types.js';
import type { ChannelMemory, ChannelSink } from '../../ports/channel.js';
import { ChannelMemoryStore } from '../memory.js';
import type { SendAnswer } from './answer.js';
import { decodeSent, encodeSent, OPTED_OUT, PHONE_KEY, REPLIED, REPLIED_KEY, WAMID_KEY, type SentRecord } from './sent-record.js';
import type { WebhookEvent } from './webhook-events.js';

/** What was reported of the replies to a message: nothing yet, REPLIED, or REPLIED with an opt-out. */
export type ReplyReported = 'none' | 'replied' | 'opted-out';

type StatusEvent = Extract<WebhookEvent, { kind: 'status' }>;

export class SentMemory {
  #memory: ChannelMemory;

  /** @param ownBound most entries of the channel's own memory (two or three a message) */
  constructor(ownBound: number) {
    this.#memory = new ChannelMemoryStore(ownBound);
  }

  /** From now on, the server's memory. */
  use(memory: ChannelMemory): void {
    this.#memory = memory;
  }

  /** Entries held, when the memory can tell. */
  get size(): number {
    return this.#memory.size ?? 0;
  }

  /**
   * A message the platform accepted, under its platform id (what a status or a reply with context
   * names) and the phone it was sent to (what a reply without context answers).
   */
  remember(m: OutgoingMessage, answer: Pick<SendAnswer, 'wamid' | 'waId'>, at: number): void {
    const record = encodeSent(m, at);
    if (answer.wamid !== undefined) this.#memory.set(WAMID_KEY + answer.wamid, record);
    this.#memory.set(PHONE_KEY + m.contact.phone, record);
    // The platform may know the user under another form of the phone (its wa_id).
    if (answer.waId !== undefined && answer.waId !== m.contact.phone) this.#memory.set(PHONE_KEY + answer.waId, record);
  }

  /** The message with this platform id. */
  byWamid(wamid: string): SentRecord | undefined {
    return this.#record(WAMID_KEY + wamid);
  }

  /** The last message sent to this user. */
  lastTo(phone: string): SentRecord | undefined {
    return this.#record(PHONE_KEY + phone);
  }

  /** Our message id of a status: the one the send carried, or the one its wamid was sent as. */
  messageIdOf(e: StatusEvent): string | undefined {
    return e.opaque ?? this.byWamid(e.wamid)?.messageId;
  }

  replyReported(messageId: string): ReplyReported {
    const value = this.#memory.get(REPLIED_KEY + messageId);
    return value === undefined ? 'none' : value === OPTED_OUT ? 'opted-out' : 'replied';
  }

  markReplyReported(messageId: string, reported: Exclude<ReplyReported, 'none'>): void {
    this.#memory.set(REPLIED_KEY + messageId, reported === 'opted-out' ? OPTED_OUT : REPLIED);
  }

  /**
   * Before acting on `events`: what the fleet remembers of the messages they name, their wamids and
   * last messages to a phone, then whether they were replied to and what the server tracks of them.
   * Rejects when it cannot be read now (Redis away).
   */
  async recall(events: readonly WebhookEvent[], sink: ChannelSink): Promise<void> {
    if (this.#memory.recall === undefined && sink.recall === undefined) return;
    const keys = recordKeysOf(events);
    if (keys.length > 0) await this.#memory.recall?.(keys);
    const messageIds = this.#messageIdsOf(events);
    if (messageIds.size === 0) return;
    await this.#memory.recall?.([...messageIds].map((id) => REPLIED_KEY + id));
    await sink.recall?.({ messageIds: [...messageIds] });
  }

  /** Our ids of the messages the events concern (as far as the records held tell): a status's, a reply's last and quoted ones. */
  #messageIdsOf(events: readonly WebhookEvent[]): Set<string> {
    const messageIds = new Set<string>();
    for (const e of events) {
      if (e.kind === 'status') {
        const id = this.messageIdOf(e);
        if (id !== undefined) messageIds.add(id);
      } else if (e.kind === 'message') {
        for (const record of [e.from === undefined ? undefined : this.lastTo(e.from), e.contextId === undefined ? undefined : this.byWamid(e.contextId)]) {
          if (record !== undefined) messageIds.add(record.messageId);
        }
      }
    }
    return messageIds;
  }

  #record(key: string): SentRecord | undefined {
    const text = this.#memory.get(key);
    return text === undefined ? undefined : decodeSent(text);
  }
}

/**
 * Keys of the records the events name: a status's wamid (when it does not carry our message id),
 * a reply's sender (the last message to them) and the message it quotes.
 */
function recordKeysOf(events: readonly WebhookEvent[]): string[] {
  const keys: string[] = [];
  for (const e of events) {
    if (e.kind === 'status' && e.opaque === undefined) keys.push(WAMID_KEY + e.wamid);
    else if (e.kind === 'message') {
      if (e.from !== undefined) keys.push(PHONE_KEY + e.from);
      if (e.contextId !== undefined) keys.push(WAMID_KEY + e.contextId);
    }
  }
  return keys;
}
