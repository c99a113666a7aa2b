/**
 * What the server adds to each contact it submits to the engine. The engine keeps the host's
 * contact object and hands it back in every `OutgoingMessage` and outcome, and its snapshot keeps
 * it whole, so the context of the webhooks (ids, request, company) travels with the contact and
 * survives a restart without a second table.
 */
import type { AcceptedContact } from '../contract/parse-send-request.js';
import type { SubmissionContact } from '../core/submission.js';

export interface ServerContact extends SubmissionContact {
  /** The HSM notification's `id`: one integer per contact, the same on every retry. */
  readonly id: number;
  /** The `request_id` of the send request (UUID v4). */
  readonly requestId: string;
  readonly companyId: number;
  /** `cost_center_id` of the notifications: the request's `queue_id`, else 0. */
  readonly costCenterId: number;
}

/** The server's view of a contact handed back by the engine. */
export function serverContact(contact: SubmissionContact): ServerContact {
  return contact as ServerContact;
}

/** What the server adds to each contact of a request: its company, request and cost center. */
export interface ContactContext {
  /** The id of the request's first contact (ids go by the contact's place in the request). */
  readonly firstId: number;
  readonly requestId: string;
  readonly companyId: number;
  readonly costCenterId: number;
}

/**
 * The accepted contacts as the server submits them: each made whole at once, its server fields
 * included, so every contact has one shape (fields added later would each move it to a slower,
 * larger one). Nothing is written onto it after the engine holds it: what the server learns of a
 * contact later it keeps in its own records (dispatch-notifications.ts: whose end was notified).
 */
export function serverContacts(accepted: readonly AcceptedContact[], context: ContactContext): ServerContact[] {
  const { firstId, requestId, companyId, costCenterId } = context;
  const out = new Array<ServerContact>(accepted.length);
  for (let i = 0; i < accepted.length; i++) {
    const { contact, index } = accepted[i] as AcceptedContact;
    out[i] = {
      phone: contact.phone_number,
      variables: contact.template_variables ?? [],
      document: contact.document,
      contract: contact.contract,
      data: contact.data,
      id: firstId + index,
      requestId,
      companyId,
      costCenterId,
    };
  }
  return out;
}
