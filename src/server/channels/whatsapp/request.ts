/**
 * The body of a template send, as the Cloud API's messages endpoint takes it
 * (`POST /{version}/{phone-number-id}/messages`): `messaging_product: "whatsapp"`, the recipient in
 * `to`, `type: "template"`, the template's approved name and language, and the contact's values as
 * the body component's text parameters, in placeholder order. The message id rides along in
 * `biz_opaque_callback_data`, which the platform echoes in every status webhook of the message, so
 * a status finds its message even when the send's answer was lost (a timeout) or the process
 * restarted since.
 *
 * Built by hand on the hot path of every send: the template's part is built once per template.
 */
import type { OutgoingMessage } from '../../../core/dispatch/types.js';

/** A template's part of the body: `"template":{"name":…,"language":{…}` (without its closing brace). */
export function templatePart(template: { readonly name: string; readonly language: string }): string {
  return `"template":{"name":${JSON.stringify(template.name)},"language":{"policy":"deterministic","code":${JSON.stringify(template.language)}}`;
}

/** Characters that need no escaping in a JSON string (the ids and phones the engine makes). */
const PLAIN = /^[A-Za-z0-9._:+-]*$/;
const json = (text: string) => (PLAIN.test(text) ? `"${text}"` : JSON.stringify(text));

/** The request body, as JSON text; `part` is {@link templatePart} of the message's template. */
export function templateMessageBody(message: OutgoingMessage, part: string): string {
  const values = message.contact.variables ?? [];
  let components = '';
  if (values.length > 0) {
    let parameters = '';
    for (let i = 0; i < values.length; i++) parameters += `${i === 0 ? '' : ','}{"type":"text","text":${JSON.stringify(values[i]!)}}`;
    components = `,"components":[{"type":"body","parameters":[${parameters}]}]`;
  }
  return (
    `{"messaging_product":"whatsapp","recipient_type":"individual","to":${json(message.contact.phone)},"type":"template",` +
    `"biz_opaque_callback_data":${json(message.messageId)},${part}${components}}}`
  );
}
