/**
 * The body of a template send, as the Cloud API's messages endpoint takes it
 * (`POST /{version}/{phone-number-id}/messages`): `messaging_product: "whatsapp"`, the recipient in
 * `to`, `type: "template"`, the template's approved name and language, and its components with the
 * contact's values in Meta's shapes (docs/channels.md, "Rich templates"): a header's text or media,
 * the body's text parameters (named ones with `parameter_name`), and the parameters of URL, quick
 * reply, copy code and one-time password buttons. A template without described components takes
 * the contact's values as the body's text parameters, in placeholder order. The message id rides
 * along in `biz_opaque_callback_data`, which the platform echoes in every status webhook of the
 * message, so a status finds its message even when the send's answer was lost (a timeout) or the
 * process restarted since.
 *
 * Built by hand on the hot path of every send: the template's part is built once per template, as
 * literal JSON text with gaps for the contact's values, so a send only joins strings.
 */
import type { OutgoingMessage } from '../../../core/dispatch/types.js';
import type { WhatsAppButton, WhatsAppHeader } from '../../../core/fleet.js';
import type { FleetWhatsAppComponents } from '../../../core/fleet-whatsapp-components.js';

/**
 * A template's part of the body, built once per template by {@link templatePart}: the JSON text
 * `"template":{"name":…,"language":{…}` and, for a template with described components, the
 * literal pieces of its `components` with the contact's value that goes between each two.
 */
export interface TemplatePart {
  /** `"template":{"name":…,"language":{…}` (without the template's closing brace). */
  readonly head: string;
  /** Literal JSON between the values (one more than `slots`); undefined: the values are the body's parameters. */
  readonly pieces: readonly string[] | undefined;
  /** Which contact value (zero-based index into `template_variables`) fills each gap between `pieces`. */
  readonly slots: readonly number[];
}

/** What {@link templatePart} needs of a template: its approved name and language, and its components if described. */
export interface TemplateForPart {
  readonly name: string;
  readonly language: string;
  readonly components?: FleetWhatsAppComponents | undefined;
}

/** Characters that need no escaping in a JSON string (the ids and phones the engine makes). */
const PLAIN = /^[A-Za-z0-9._:+-]*$/;
const json = (text: string) => (PLAIN.test(text) ? `"${text}"` : JSON.stringify(text));

/** Collects literal JSON and gaps for values. */
class Pieces {
  readonly pieces: string[] = [''];
  readonly slots: number[] = [];

  lit(text: string): this {
    this.pieces[this.pieces.length - 1] += text;
    return this;
  }

  value(variable: number): this {
    this.slots.push(variable);
    this.pieces.push('');
    return this;
  }

  /** A fixed string, or the contact's value. */
  source(fixed: string | undefined, variable: number | undefined): this {
    return fixed !== undefined ? this.lit(JSON.stringify(fixed)) : this.value(variable!);
  }
}

function header(p: Pieces, h: WhatsAppHeader): void {
  p.lit('{"type":"header","parameters":[');
  if (h.type === 'text') {
    p.lit(`{"type":"text",${h.parameterName !== undefined ? `"parameter_name":${JSON.stringify(h.parameterName)},` : ''}"text":`)
      .value(h.variable)
      .lit('}');
  } else {
    p.lit(`{"type":"${h.type}","${h.type}":{`);
    if (h.id !== undefined) p.lit(`"id":${JSON.stringify(h.id)}`);
    else p.lit('"link":').source(h.link, h.variable);
    if (h.filename !== undefined) p.lit(`,"filename":${JSON.stringify(h.filename)}`);
    p.lit('}}');
  }
  p.lit(']}');
}

function button(p: Pieces, b: WhatsAppButton): void {
  // Meta writes the index as a string ("0"); the one-time password's button is a URL button.
  const subType = b.type === 'otp' ? 'url' : b.type;
  p.lit(`{"type":"button","sub_type":"${subType}","index":"${b.index}","parameters":[`);
  switch (b.type) {
    case 'url':
    case 'otp':
      p.lit('{"type":"text","text":').value(b.variable);
      break;
    case 'quick_reply':
      p.lit('{"type":"payload","payload":').source(b.payload, b.variable);
      break;
    case 'copy_code':
      p.lit('{"type":"coupon_code","coupon_code":').source(b.couponCode, b.variable);
      break;
  }
  p.lit('}]}');
}

/** A template's part of the body, built once per template (the send joins it with the contact's values). */
export function templatePart(template: TemplateForPart): TemplatePart {
  const head = `"template":{"name":${JSON.stringify(template.name)},"language":{"policy":"deterministic","code":${JSON.stringify(template.language)}}`;
  const c = template.components;
  if (c === undefined) return { head, pieces: undefined, slots: [] };
  const p = new Pieces();
  const parts: (() => void)[] = [];
  if (c.header) parts.push(() => header(p, c.header!));
  if (c.body.length > 0) {
    parts.push(() => {
      p.lit('{"type":"body","parameters":[');
      c.body.forEach((b, i) => {
        p.lit(`${i === 0 ? '' : ','}{"type":"text",${b.parameterName !== undefined ? `"parameter_name":${JSON.stringify(b.parameterName)},` : ''}"text":`)
          .value(b.variable)
          .lit('}');
      });
      p.lit(']}');
    });
  }
  for (const b of [...c.buttons].sort((x, y) => x.index - y.index)) parts.push(() => button(p, b));
  if (parts.length > 0) {
    p.lit(',"components":[');
    parts.forEach((write, i) => {
      if (i > 0) p.lit(',');
      write();
    });
    p.lit(']');
  }
  return { head, pieces: p.pieces, slots: p.slots };
}

/** The request body, as JSON text; `part` is {@link templatePart} of the message's template. */
export function templateMessageBody(message: OutgoingMessage, part: TemplatePart): string {
  const values = message.contact.variables ?? [];
  let body = `{"messaging_product":"whatsapp","recipient_type":"individual","to":${json(message.contact.phone)},"type":"template","biz_opaque_callback_data":${json(message.messageId)},${part.head}`;
  const pieces = part.pieces;
  if (pieces === undefined) {
    if (values.length > 0) {
      body += ',"components":[{"type":"body","parameters":[';
      for (let i = 0; i < values.length; i++) body += `${i === 0 ? '' : ','}{"type":"text","text":${JSON.stringify(values[i]!)}}`;
      body += ']}]';
    }
  } else {
    const slots = part.slots;
    body += pieces[0]!;
    // A value the contact lacks (the contract checks the count, so only a host's own message) is empty text.
    for (let i = 0; i < slots.length; i++) body += JSON.stringify(values[slots[i]!] ?? '') + pieces[i + 1]!;
  }
  return `${body}}}`;
}
