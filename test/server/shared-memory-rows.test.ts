/**
 * What the server on Redis keeps of a tracked message (shared-memory.ts) gives back everything a
 * later status is built from: the notification's ids, the sending number, the text, the attempt.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeRow, encodeRow } from '../../src/server/backends/redis/shared-memory.js';
import type { TrackedMessage } from '../../src/server/notifier.js';

const tracked = fc.record({
  contact: fc.record(
    {
      id: fc.nat(),
      requestId: fc.uuid(),
      companyId: fc.nat(),
      costCenterId: fc.nat(),
      phone: fc.stringMatching(/^55\d{10,11}$/),
      variables: fc.array(fc.string()),
      document: fc.string(),
      contract: fc.string(),
      data: fc.dictionary(fc.string(), fc.string()),
    },
    { requiredKeys: ['id', 'requestId', 'companyId', 'costCenterId', 'phone'] },
  ),
  campaignId: fc.nat(),
  from: fc.stringMatching(/^55\d{10,11}$/),
  text: fc.string(),
  retryIndex: fc.option(fc.nat(), { nil: null }),
  sentAt: fc.nat(),
});

describe('shared memory rows', () => {
  it('property: a tracked message comes back with all a later status uses, without the variables', () => {
    fc.assert(
      fc.property(tracked, (t) => {
        const back = decodeRow('m:1', encodeRow('m:1', t)) as TrackedMessage;
        const { variables: _variables, ...contact } = t.contact;
        expect(back).toEqual({ ...t, contact });
      }),
    );
  });

  it('an SMS row is kept as its JSON', () => {
    const sms = { smsId: 's1', phone: '5511987654321', text: 'hi', reference: 'r' };
    expect(decodeRow('s:s1', encodeRow('s:s1', sms))).toEqual(sms);
  });
});
