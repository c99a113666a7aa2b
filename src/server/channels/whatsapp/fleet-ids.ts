/**
 * The fleet's WhatsApp Cloud API ids, indexed both ways: what a send needs (the phone-number id of
 * the number, the name and language of the template) and what a webhook names (a phone-number id,
 * a display phone number, a WABA and a template's id, name and language) back to the fleet's phones
 * and template ids. Built once from the validated fleet; a fleet without the ids a send needs is
 * refused with every missing id's JSON path.
 */
import type { Fleet } from '../../../core/fleet-validate.js';
import type { FleetWhatsAppComponents } from '../../../core/fleet-whatsapp-components.js';
import { problem, type Problem } from '../../../core/problems.js';

export interface WhatsAppNumber {
  readonly phone: string;
  readonly phoneNumberId: string;
  readonly wabaId: string | undefined;
  /** The fleet's per-second rate of the number, if it has one. */
  readonly messagesPerSecond: number | undefined;
}

export interface WhatsAppTemplate {
  readonly templateId: number;
  readonly name: string;
  readonly language: string;
  /** The platform's id, when the fleet gives it. */
  readonly id: string | undefined;
  /** WABAs the template can belong to: its own, else those of its businesses (empty: any). */
  readonly wabaIds: readonly string[];
  /** What the template takes at send time; undefined: every value is a body text parameter. */
  readonly components: FleetWhatsAppComponents | undefined;
}

/** The identity of a template in a status webhook. */
export interface TemplateRef {
  readonly wabaId: string | undefined;
  readonly id: string | undefined;
  readonly name: string | undefined;
  readonly language: string | undefined;
}

export class FleetIds {
  readonly #numbers = new Map<string, WhatsAppNumber>();
  readonly #byPhoneNumberId = new Map<string, string>();
  readonly #templates = new Map<number, WhatsAppTemplate>();

  private constructor(fleet: Fleet) {
    for (const b of fleet.businesses) {
      for (const n of b.numbers) {
        if (!n.whatsapp) continue;
        this.#numbers.set(n.phone, { phone: n.phone, phoneNumberId: n.whatsapp.phoneNumberId, wabaId: n.whatsapp.wabaId, messagesPerSecond: n.messagesPerSecond });
        this.#byPhoneNumberId.set(n.whatsapp.phoneNumberId, n.phone);
      }
    }
    const wabaOfBusiness = new Map(fleet.businesses.map((b) => [b.id, b.whatsapp?.wabaId]));
    for (const t of fleet.templates) {
      if (!t.whatsapp) continue;
      const own = t.whatsapp.wabaId;
      const wabaIds = own !== undefined ? [own] : [...new Set(t.businessIds.map((id) => wabaOfBusiness.get(id)).filter((w): w is string => w !== undefined))];
      this.#templates.set(t.id, { templateId: t.id, name: t.whatsapp.name, language: t.whatsapp.language, id: t.whatsapp.id, wabaIds, components: t.whatsapp.components });
    }
  }

  /**
   * Indexes a validated fleet. Every number needs `whatsapp.phoneNumberId` and every template
   * `whatsapp.language` (its name defaults to the template's): what is missing comes back as problems.
   */
  static from(fleet: Fleet): { readonly ok: true; readonly ids: FleetIds } | { readonly ok: false; readonly problems: readonly Problem[] } {
    const problems: Problem[] = [];
    fleet.businesses.forEach((b, bi) =>
      b.numbers.forEach((n, ni) => {
        if (!n.whatsapp)
          problems.push(problem(`$.businesses[${bi}].numbers[${ni}].whatsapp`, 'the number\'s WhatsApp ids: { "phoneNumberId": "<digits>" } (the WhatsApp channel sends with it)', undefined));
      }),
    );
    fleet.templates.forEach((t, ti) => {
      if (!t.whatsapp)
        problems.push(
          problem(`$.templates[${ti}].whatsapp`, 'the template\'s WhatsApp ids: { "language": "pt_BR" } and, when its approved name differs, "name" (the WhatsApp channel sends with them)', undefined),
        );
    });
    return problems.length > 0 ? { ok: false, problems } : { ok: true, ids: new FleetIds(fleet) };
  }

  number(phone: string): WhatsAppNumber | undefined {
    return this.#numbers.get(phone);
  }

  template(templateId: number): WhatsAppTemplate | undefined {
    return this.#templates.get(templateId);
  }

  /** The fleet phone of a phone-number id (a `messages` webhook's `metadata.phone_number_id`). */
  phoneOfPhoneNumberId(phoneNumberId: string): string | undefined {
    return this.#byPhoneNumberId.get(phoneNumberId);
  }

  /** The fleet phones of a WABA (an account webhook's `entry.id`): its numbers' own, else their business's. */
  phonesOfWaba(wabaId: string): string[] {
    const phones: string[] = [];
    for (const n of this.#numbers.values()) if (n.wabaId === wabaId) phones.push(n.phone);
    return phones;
  }

  /** The fleet phone of a display phone number (`15550783881`, or formatted: `+1 555-078-3881`). */
  phoneOfDisplay(display: string): string | undefined {
    const digits = display.replace(/\D/g, '');
    return this.#numbers.has(digits) ? digits : undefined;
  }

  /**
   * The fleet templates a status webhook names: by the platform's id when the fleet gives ids,
   * else by name and language within the webhook's WABA (a template without a known WABA matches
   * any WABA).
   */
  templatesOf(ref: TemplateRef): number[] {
    const found: number[] = [];
    // Webhooks write the locale with a hyphen at times (`en-US`); the fleet writes `en_US`.
    const language = ref.language?.replace('-', '_');
    for (const t of this.#templates.values()) {
      if (ref.id !== undefined && t.id !== undefined) {
        if (t.id === ref.id) found.push(t.templateId);
        continue;
      }
      if (t.name !== ref.name || t.language !== language) continue;
      if (ref.wabaId !== undefined && t.wabaIds.length > 0 && !t.wabaIds.includes(ref.wabaId)) continue;
      found.push(t.templateId);
    }
    return found;
  }
}
