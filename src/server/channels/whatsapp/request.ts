/**
 * The body of a template send, as the Cloud API's messages endpoint takes it
 * (`POST /{version}/{phone-number-id}/messages`): `messaging_product: "whatsapp"`, the recipient in
 * `to`, `type: "template"`, the template's approved name and language, and the contact's values as
 * the body component's text parameters, in placeholder order. The message id rides along in
 * `biz_opaque_callback_data`, which the platform echoes in every status webhook of the message, so
 * a status finds its message even when the send's answer was lost (a timeout) or the process
 * restarted since.
 */
import type { OutgoingMessage } from '../../../core/dispatch/types.js';

/** Escapes a string for a JSON body (the fast path: most values need nothing). */
function json(text: string): string {
  return JSON.stringify(text);
}

/** The request body, as JSON text. Built by hand: it is on the hot path of every send. */
export function templateMessageBody(message: OutgoingMessage, template: { readonly name: string; readonly language: string }): string {
  const values = message.contact.variables ?? [];
  let components = '';
  if (values.length > 0) {
    let parameters = '';
    for (let i = 0; i < values.length; i++) parameters += `${i === 0 ? '' : ','}{"type":"text","text":${json(values[i]!)}}`;
    components = `,"components":[{"type":"body","parameters":[${parameters}]}]`;
  }
  return (
    `{"messaging_product":"whatsapp","recipient_type":"individual","to":${json(message.contact.phone)},"type":"template",` +
    `"biz_opaque_callback_data":${json(message.messageId)},` +
    `"template":{"name":${json(template.name)},"language":{"policy":"deterministic","code":${json(template.language)}}${components}}}`
  );
}
