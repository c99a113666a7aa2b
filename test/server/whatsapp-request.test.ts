/**
 * The body of a template send with every component kind, compared, parsed, to the JSON examples of
 * Meta's documentation (docs/channels.md, "Sources"), and a property: for any described components
 * and any contact values (quotes, backslashes, control characters, lone surrogates), the body is
 * JSON and carries exactly the described parameters, filled with the contact's values.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { OutgoingMessage } from '../../src/core/dispatch/types.js';
import type { WhatsAppButton, WhatsAppHeader, WhatsAppTemplateComponents } from '../../src/core/fleet.js';
import { validateFleet } from '../../src/core/fleet-validate.js';
import type { FleetWhatsAppComponents } from '../../src/core/fleet-whatsapp-components.js';
import { templateMessageBody, templatePart } from '../../src/server/channels/whatsapp/index.js';

function message(variables: readonly string[]): OutgoingMessage {
  return {
    messageId: 's1.0.0',
    contactId: 's1.0',
    submissionId: 's1',
    index: 0,
    businessId: 1,
    typeId: 10,
    campaignId: 42,
    queueId: undefined,
    botId: undefined,
    contact: { phone: '16505551234', variables },
    phone: '5511990000001',
    templateId: 100,
    text: '',
    handedOutAt: 0,
    isRetry: false,
    retryIndex: null,
    maxRetries: 0,
    retryInterval: 0,
  };
}

/** A template's components as the fleet validator gives them (the body's default filled in). */
function validated(components: WhatsAppTemplateComponents, placeholders: number): FleetWhatsAppComponents {
  const text = Array.from({ length: placeholders }, (_, i) => `{{${i + 1}}}`).join(' ') || 'Hello';
  const result = validateFleet({
    businesses: [{ id: 1, name: 'B', numbers: [], templateTypes: [] }],
    templates: [{ id: 100, name: 't', text, businessIds: [1], whatsapp: { language: 'en_US', components } }],
  });
  if (!result.ok) throw new Error(result.problems.map((p) => p.message).join('\n'));
  return result.fleet.templates[0]!.whatsapp!.components!;
}

/** The parsed request: what the platform reads. */
function sent(components: WhatsAppTemplateComponents | undefined, values: readonly string[], name = 'tpl', language = 'en_US') {
  const part = templatePart({ name, language, components: components === undefined ? undefined : validated(components, values.length) });
  return JSON.parse(templateMessageBody(message(values), part)) as { template: { name: string; language: unknown; components?: unknown[] } } & Record<string, unknown>;
}

/**
 * Meta's pages write a button's `index` as a string ("0") in most examples and as an integer in
 * some, and `sub_type` in lowercase in most and in capitals on the coupon page: sendpool sends the
 * common form, a string index and a lowercase sub-type, and the examples are compared in it.
 */
function commonForm(components: unknown[]): unknown[] {
  return components.map((c) => {
    const o = c as Record<string, unknown>;
    return o['type'] === 'button' ? { ...o, sub_type: String(o['sub_type']).toLowerCase(), index: String(o['index']) } : o;
  });
}

describe('the request body of a rich template, against Meta’s documented examples', () => {
  it('keeps the old body without components: every value a body text parameter', () => {
    expect(sent(undefined, ['Ana', 'R$ 10,00']).template).toEqual({
      name: 'tpl',
      language: { policy: 'deterministic', code: 'en_US' },
      components: [
        {
          type: 'body',
          parameters: [
            { type: 'text', text: 'Ana' },
            { type: 'text', text: 'R$ 10,00' },
          ],
        },
      ],
    });
  });

  it('sends an image header by link, body text and quick reply payloads (WhatsApp Node.js SDK, TemplateObject)', () => {
    const meta = [
      { type: 'header', parameters: [{ type: 'image', image: { link: 'https://example.com/URL.png' } }] },
      { type: 'body', parameters: [{ type: 'text', text: 'TEXT_STRING' }] },
      { type: 'button', sub_type: 'quick_reply', index: '0', parameters: [{ type: 'payload', payload: 'PAYLOAD' }] },
      { type: 'button', sub_type: 'quick_reply', index: '1', parameters: [{ type: 'payload', payload: 'PAYLOAD' }] },
    ];
    const body = sent(
      {
        header: { type: 'image', link: 'https://example.com/URL.png' },
        buttons: [
          { type: 'quick_reply', index: 1, variable: 1 },
          { type: 'quick_reply', index: 0, payload: 'PAYLOAD' },
        ],
      },
      ['TEXT_STRING', 'PAYLOAD'],
    );
    // The body was not described: it takes the value no button takes.
    expect(body.template.components).toEqual(commonForm(meta));
  });

  it('sends media headers by id, by link with a file name, and a video (Media message templates)', () => {
    expect(sent({ header: { type: 'document', id: '1166543234523', filename: 'invoice.pdf' }, body: [] }, []).template.components).toEqual([
      { type: 'header', parameters: [{ type: 'document', document: { id: '1166543234523', filename: 'invoice.pdf' } }] },
    ]);
    expect(sent({ header: { type: 'document', variable: 1, filename: 'invoice.pdf' } }, ['Ana', 'https://bills.example.com/ana.pdf']).template.components).toEqual([
      { type: 'header', parameters: [{ type: 'document', document: { link: 'https://bills.example.com/ana.pdf', filename: 'invoice.pdf' } }] },
      { type: 'body', parameters: [{ type: 'text', text: 'Ana' }] },
    ]);
    expect(sent({ header: { type: 'video', link: 'https://example.com/v.mp4' }, body: [] }, []).template.components).toEqual([
      { type: 'header', parameters: [{ type: 'video', video: { link: 'https://example.com/v.mp4' } }] },
    ]);
  });

  it('sends a text header and a URL button with a per-contact suffix (Component object: url)', () => {
    const meta = [
      { type: 'header', parameters: [{ type: 'text', text: 'Order 1234' }] },
      { type: 'body', parameters: [{ type: 'text', text: 'Alex' }] },
      { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: 'A12345' }] },
    ];
    expect(sent({ header: { type: 'text', variable: 1 }, body: [{ variable: 0 }], buttons: [{ type: 'url', index: 0, variable: 2 }] }, ['Alex', 'Order 1234', 'A12345']).template.components).toEqual(
      commonForm(meta),
    );
  });

  it('sends a coupon code, fixed or per contact (Sending coupon code templates: "sub_type": "COPY_CODE", an integer index)', () => {
    const meta = [{ type: 'button', sub_type: 'COPY_CODE', index: 1, parameters: [{ type: 'coupon_code', coupon_code: '25OFF' }] }];
    expect(sent({ body: [], buttons: [{ type: 'copy_code', index: 1, couponCode: '25OFF' }] }, []).template.components).toEqual(commonForm(meta));
    expect(sent({ body: [], buttons: [{ type: 'copy_code', index: 1, variable: 0 }] }, ['25OFF']).template.components).toEqual(commonForm(meta));
  });

  it('sends an authentication template’s one-time password in the body and in its copy code button, a url button (Authentication templates)', () => {
    const meta = [
      { type: 'body', parameters: [{ type: 'text', text: 'J$FpnYnP' }] },
      { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: 'J$FpnYnP' }] },
    ];
    expect(sent({ body: [{ variable: 0 }], buttons: [{ type: 'otp', index: 0, variable: 0 }] }, ['J$FpnYnP']).template.components).toEqual(commonForm(meta));
  });

  it('sends named parameters with parameter_name (templates created with named parameters)', () => {
    const meta = [
      { type: 'header', parameters: [{ type: 'text', parameter_name: 'sale_start_date', text: 'December 1st' }] },
      {
        type: 'body',
        parameters: [
          { type: 'text', parameter_name: 'customer_name', text: 'John' },
          { type: 'text', parameter_name: 'order_id', text: '9128312831' },
        ],
      },
    ];
    const components: WhatsAppTemplateComponents = {
      header: { type: 'text', variable: 2, parameterName: 'sale_start_date' },
      body: [
        { variable: 0, parameterName: 'customer_name' },
        { variable: 1, parameterName: 'order_id' },
      ],
    };
    expect(sent(components, ['John', '9128312831', 'December 1st']).template.components).toEqual(meta);
  });

  it('sends no components when the described template takes no parameters', () => {
    expect(sent({}, []).template).toEqual({ name: 'tpl', language: { policy: 'deterministic', code: 'en_US' } });
  });
});

// ---------------------------------------------------------------------------------------------

/** Text of any UTF-16 code units: quotes, backslashes, control characters, lone surrogates. */
const anyText = fc.oneof(
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength: 12 }),
  fc.string({ unit: fc.constantFrom('"', '\\', '\n', '\u2028', '\u0000', '}', ']', ',', 'a', 'ç', '😀'), maxLength: 8 }),
);

function componentsArb(count: number): fc.Arbitrary<WhatsAppTemplateComponents> {
  const variable = fc.integer({ min: 0, max: count - 1 });
  const header: fc.Arbitrary<WhatsAppHeader> = fc.oneof(
    variable.map((v) => ({ type: 'text' as const, variable: v })),
    fc.tuple(fc.constantFrom<'image' | 'video' | 'document'>('image', 'video', 'document'), variable).map(([type, v]) => ({ type, variable: v })),
    fc.constantFrom('https://example.com/a.png?x="1"', 'https://example.com/\\path').map((link) => ({ type: 'image' as const, link })),
    fc.constant({ type: 'document' as const, id: '12345', filename: 'Fatura "março".pdf' }),
  );
  const button = (index: number): fc.Arbitrary<WhatsAppButton> =>
    fc.oneof(
      variable.map((v) => ({ type: 'url' as const, index, variable: v })),
      variable.map((v) => ({ type: 'otp' as const, index, variable: v })),
      variable.map((v) => ({ type: 'quick_reply' as const, index, variable: v })),
      fc.constant({ type: 'quick_reply' as const, index, payload: 'STOP "now"\n' }),
      variable.map((v) => ({ type: 'copy_code' as const, index, variable: v })),
      fc.constant({ type: 'copy_code' as const, index, couponCode: 'SAVE25' }),
    );
  return fc.record(
    {
      header,
      body: fc.array(
        variable.map((v) => ({ variable: v })),
        { maxLength: 4 },
      ),
      buttons: fc.uniqueArray(fc.integer({ min: 0, max: 9 }), { maxLength: 4 }).chain((indexes) => fc.tuple(...indexes.map(button))),
    },
    { requiredKeys: [] },
  );
}

/** What the platform must read, built as objects from the description (not from our JSON text). */
function expectedComponents(c: FleetWhatsAppComponents, values: readonly string[]): unknown[] {
  const out: unknown[] = [];
  const h = c.header;
  if (h) {
    if (h.type === 'text') out.push({ type: 'header', parameters: [{ type: 'text', text: values[h.variable] }] });
    else {
      const media: Record<string, string> = h.id !== undefined ? { id: h.id } : { link: h.link ?? values[h.variable!]! };
      if (h.filename !== undefined) media['filename'] = h.filename;
      out.push({ type: 'header', parameters: [{ type: h.type, [h.type]: media }] });
    }
  }
  if (c.body.length > 0) out.push({ type: 'body', parameters: c.body.map((b) => ({ type: 'text', text: values[b.variable] })) });
  for (const b of [...c.buttons].sort((x, y) => x.index - y.index)) {
    const index = String(b.index);
    if (b.type === 'url' || b.type === 'otp') out.push({ type: 'button', sub_type: 'url', index, parameters: [{ type: 'text', text: values[b.variable] }] });
    else if (b.type === 'quick_reply') out.push({ type: 'button', sub_type: 'quick_reply', index, parameters: [{ type: 'payload', payload: b.payload ?? values[b.variable!] }] });
    else out.push({ type: 'button', sub_type: 'copy_code', index, parameters: [{ type: 'coupon_code', coupon_code: b.couponCode ?? values[b.variable!] }] });
  }
  return out;
}

describe('the request body (property)', () => {
  it('is JSON and carries exactly the described parameters, whatever the values', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }).chain((count) => fc.tuple(componentsArb(count), fc.array(anyText, { minLength: count, maxLength: count }))),
        fc.constantFrom('5511987654321', '16505551234'),
        ([description, values], phone) => {
          const components = validated(description, values.length);
          const text = templateMessageBody({ ...message(values), contact: { phone, variables: values } }, templatePart({ name: 'tpl_x', language: 'pt_BR', components }));
          const body = JSON.parse(text) as Record<string, any>;
          expect(body).toEqual({
            messaging_product: 'whatsapp',
            recipient_type: 'individual',
            to: phone,
            type: 'template',
            biz_opaque_callback_data: 's1.0.0',
            template: {
              name: 'tpl_x',
              language: { policy: 'deterministic', code: 'pt_BR' },
              ...(expectedComponents(components, values).length > 0 ? { components: expectedComponents(components, values) } : {}),
            },
          });
        },
      ),
      { numRuns: 500, seed: 20261201 },
    );
  });

  it('is JSON with the values as body parameters for a template without components', () => {
    fc.assert(
      fc.property(fc.array(anyText, { maxLength: 6 }), (values) => {
        const body = JSON.parse(templateMessageBody(message(values), templatePart({ name: 'tpl', language: 'es' }))) as Record<string, any>;
        expect(body['template'].components ?? []).toEqual(values.length === 0 ? [] : [{ type: 'body', parameters: values.map((text) => ({ type: 'text', text })) }]);
      }),
      { numRuns: 300, seed: 20261202 },
    );
  });
});
