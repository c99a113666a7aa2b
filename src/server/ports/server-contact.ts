/**
 * What the server adds to each contact it submits to the engine. The engine keeps the host's
 * contact object and hands it back in every `OutgoingMessage` and outcome, and its snapshot keeps
 * it whole, so the context of the webhooks (ids, request, company) travels with the contact and
 * survives a restart without a second table. A port type: the server makes these contacts
 * (contacts.ts) and every backend keeps or queues them.
 */
import type { SubmissionContact } from '../../core/submission.js';

export interface ServerContact extends SubmissionContact {
  /** The HSM notification's `id`: one integer per contact, the same on every retry. */
  readonly id: number;
  /** The `request_id` of the send request (UUID v4). */
  readonly requestId: string;
  readonly companyId: number;
  /** `cost_center_id` of the notifications: the request's `queue_id`, else 0. */
  readonly costCenterId: number;
}
