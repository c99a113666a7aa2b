/**
 * The server's contacts (ports/server-contact.ts) as it makes them from a request and reads them
 * back from the engine.
 */
import type { AcceptedContact } from '../contract/parse-send-request.js';
import type { SubmissionContact } from '../core/submission.js';
import type { ServerContact } from './ports/server-contact.js';

export type { ServerContact } from './ports/server-contact.js';

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
