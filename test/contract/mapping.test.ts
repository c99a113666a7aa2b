import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseSendRequest, toSubmission } from '../../src/contract/index.js';
import { lookupFor, sendRequestArb } from './arbitraries.js';

describe('toSubmission', () => {
  it('maps every field, converts retry_interval minutes to ms, and keeps only accepted contacts', () => {
    const r = parseSendRequest(
      {
        business_id: 1,
        template_type_id: 10,
        campaign_id: 7,
        queue_id: 3,
        bot_id: 4,
        max_retries: 2,
        retry_interval: 15,
        contacts: [
          { phone_number: '+55 11 98765-4321', template_variables: ['Ana'], document: '52998224725', contract: 'C-1', data: { order: '42' } },
          { phone_number: 'bad', template_variables: ['Bia'] },
          { phone_number: '14155552671', template_variables: ['Cy'] },
        ],
      },
      { templateTypes: lookupFor(1, 10, 1) },
    );
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(toSubmission(r.value)).toEqual({
      businessId: 1,
      typeId: 10,
      campaignId: 7,
      queueId: 3,
      botId: 4,
      maxRetries: 2,
      retryInterval: 15 * 60_000,
      contacts: [
        { phone: '5511987654321', variables: ['Ana'], document: '52998224725', contract: 'C-1', data: { order: '42' } },
        { phone: '14155552671', variables: ['Cy'] },
      ],
    });
  });

  it('defaults: no retries, zero interval, no queue or bot keys, empty variables', () => {
    const r = parseSendRequest({ business_id: 1, template_type_id: 10, campaign_id: 7, contacts: [{ phone_number: '14155552671' }] }, { templateTypes: lookupFor(1, 10, 0) });
    expect(r.ok && toSubmission(r.value)).toEqual({ businessId: 1, typeId: 10, campaignId: 7, maxRetries: 0, retryInterval: 0, contacts: [{ phone: '14155552671', variables: [] }] });
  });

  it('is pure and keeps one submission contact per accepted contact, in order', () => {
    fc.assert(
      fc.property(sendRequestArb, ({ body, placeholders }) => {
        const r = parseSendRequest(body, { templateTypes: lookupFor(body.business_id, body.template_type_id, placeholders) });
        if (!r.ok) throw new Error('valid body refused');
        const a = toSubmission(r.value);
        expect(toSubmission(r.value)).toEqual(a);
        expect(a.contacts.map((c) => c.phone)).toEqual(body.contacts.map((c) => c.phone_number));
        expect(a.retryInterval).toBe((body.retry_interval ?? 0) * 60_000);
        for (const c of a.contacts) expect(c.variables).toHaveLength(placeholders);
      }),
    );
  });
});
