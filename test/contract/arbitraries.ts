/** Generators of valid contract values, in canonical form (what the parsers return unchanged). */
import fc from 'fast-check';
import type { Contact, SendRequest, SmsItem, TemplateTypeLookup } from '../../src/contract/index.js';
import { BRAZIL_AREA_CODES } from '../../src/contract/index.js';

const digits = (n: number) => fc.array(fc.integer({ min: 0, max: 9 }), { minLength: n, maxLength: n }).map((d) => d.join(''));

/** Adds CPF (11) or CNPJ (14) check digits to a 9- or 12-digit base. */
export function withCheckDigits(base: string): string {
  const weights = base.length === 9 ? [10, 9, 8, 7, 6, 5, 4, 3, 2] : [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2];
  const next = (text: string, w: number[]) => {
    const sum = w.reduce((s, wi, i) => s + wi * Number(text[i]), 0);
    const rest = sum % 11;
    return rest < 2 ? 0 : 11 - rest;
  };
  const first = `${base}${next(base, weights)}`;
  const second = base.length === 9 ? [11, ...weights] : [6, ...weights];
  return `${first}${next(first, second)}`;
}

const notRepeated = (s: string) => !/^(\d)\1+$/.test(s);
export const cpfArb = digits(9).map(withCheckDigits).filter(notRepeated);
export const cnpjArb = digits(12).map(withCheckDigits).filter(notRepeated);
export const documentArb = fc.oneof(cpfArb, cnpjArb);

const areaCodes = [...BRAZIL_AREA_CODES];
export const brazilMobileArb = fc.tuple(fc.constantFrom(...areaCodes), digits(8)).map(([ddd, rest]) => `55${ddd}9${rest}`);
export const brazilLandlineArb = fc.tuple(fc.constantFrom(...areaCodes), fc.integer({ min: 2, max: 5 }), digits(7)).map(([ddd, first, rest]) => `55${ddd}${first}${rest}`);
export const foreignPhoneArb = fc
  .constantFrom('1', '44', '351', '49', '54', '598')
  .chain((cc) => fc.integer({ min: 8 - cc.length, max: 15 - cc.length }).chain((n) => digits(n).map((d) => `${cc}${d}`)));
export const phoneArb = fc.oneof(brazilMobileArb, brazilLandlineArb, foreignPhoneArb);

/** A template variable value the contract accepts. */
export const variableArb = fc.string({ minLength: 1, maxLength: 30, unit: 'grapheme' }).filter((s) => s.trim() !== '' && !/\{\{\s*\d+\s*\}\}/.test(s));

const label = fc.stringMatching(/^[a-z][a-z0-9]{0,9}$/);
/** A public https/http URL in the form the WHATWG parser writes it (`href`). */
export const urlArb = fc
  .tuple(fc.constantFrom('https', 'http'), fc.array(label, { minLength: 1, maxLength: 3 }), fc.stringMatching(/^[a-z]{2,6}$/), fc.array(label, { maxLength: 3 }))
  .map(([scheme, labels, tld, path]) => `${scheme}://${labels.join('.')}.${tld}/${path.join('/')}`);

const id = fc.integer({ min: 1, max: 2 ** 31 });

export function contactArb(placeholders: number): fc.Arbitrary<Contact> {
  return fc.record(
    {
      phone_number: phoneArb,
      document: documentArb,
      contract: fc.string({ minLength: 1, maxLength: 20 }),
      template_variables: fc.array(variableArb, { minLength: placeholders, maxLength: placeholders }),
      data: fc.dictionary(fc.string({ minLength: 1, maxLength: 10 }), fc.string({ maxLength: 20 }), { maxKeys: 4 }),
    },
    { requiredKeys: placeholders > 0 ? ['phone_number', 'template_variables'] : ['phone_number'] },
  );
}

/** A valid send body and the placeholder count of its template type. */
export const sendRequestArb: fc.Arbitrary<{ body: SendRequest; placeholders: number }> = fc.integer({ min: 0, max: 3 }).chain((placeholders) =>
  fc
    .record(
      {
        business_id: id,
        template_type_id: id,
        campaign_id: id,
        queue_id: id,
        bot_id: id,
        max_retries: fc.integer({ min: 0, max: 10 }),
        retry_interval: fc.integer({ min: 0, max: 10_080 }),
        contacts: fc.uniqueArray(contactArb(placeholders), { minLength: 1, maxLength: 8, selector: (c) => c.phone_number }),
      },
      { requiredKeys: ['business_id', 'template_type_id', 'campaign_id', 'contacts'] },
    )
    .map((body) => ({ body, placeholders })),
);

/** A lookup that knows one (business, type) with `placeholders` placeholders. */
export function lookupFor(businessId: number, typeId: number, placeholders: number): TemplateTypeLookup {
  return { templateType: (b, t) => (b === businessId && t === typeId ? { placeholders } : undefined) };
}

export const smsItemArb: fc.Arbitrary<SmsItem> = fc.record(
  {
    message: fc.string({ minLength: 1, maxLength: 400, unit: 'grapheme' }).filter((s) => s.length <= 1600),
    phone: phoneArb,
    url_callback_dlr: urlArb,
    url_callback_mo: urlArb,
    reference: fc.string({ minLength: 1, maxLength: 20 }),
    campaign_id: id,
    name: fc.string({ minLength: 1, maxLength: 20 }),
    cpf: documentArb,
  },
  { requiredKeys: ['message', 'phone'] },
);

export const smsBatchArb = fc.uniqueArray(smsItemArb, { minLength: 1, maxLength: 8, selector: (i) => `${i.phone}\u0000${i.message}` });
