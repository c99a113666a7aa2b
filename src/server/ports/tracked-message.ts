/**
 * A message the channel accepted, as the server remembers it to build its later notifications
 * (tracked-messages.ts). A port type: a backend that shares what the fleet sent keeps these rows
 * (the server on Redis: backends/redis/shared-memory.ts).
 */
import type { ServerContact } from './server-contact.js';

/** A message the channel accepted, kept to build its later notifications. */
export interface TrackedMessage {
  readonly contact: ServerContact;
  readonly campaignId: number;
  readonly from: string;
  readonly text: string;
  readonly retryIndex: number | null;
  readonly sentAt: number;
  /**
   * The statuses reported of it so far, merged (events/status-merge.ts): a later status that does
   * not move the merged status forward makes no notification.
   * @default SENT only
   */
  readonly progress?: number;
  /**
   * What sending the contact again needs, should the provider report the message FAILED later
   * (late-failures.ts): the message's pool and template and its submission's retry rules.
   * @default absent (a message tracked before this was kept): a later failure is notified only
   */
  readonly again?: SendAgain;
}

/** A sent message's pool, template and retry rules, for a failure the provider reports later. */
export interface SendAgain {
  readonly businessId: number;
  readonly typeId: number;
  readonly templateId: number;
  /** The submission's campaign (null without one). */
  readonly campaignId: number | null;
  readonly maxRetries: number;
  /** Milliseconds. */
  readonly retryInterval: number;
  /** Times the contact was already sent again after a later failure (bounded like transport tries). */
  readonly followUps: number;
}
