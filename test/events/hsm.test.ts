import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { buildHsmNotification, type HsmNotificationInput } from '../../src/events/hsm.js';
import { HSM_STATUSES, HsmNotificationSchema, type HsmStatus } from '../../src/events/schemas/hsm.js';
import { validatePayload } from '../../src/events/validate.js';
import { isUuidV4 } from '../../src/events/uuid.js';
import { T0, expectRefusedOrValid, seededRandom } from './helpers.js';

const common = {
  id: 42,
  to: '5511999990000',
  campaignId: 7,
  requestId: 'b1a7c7a2-8c1e-4c8e-9a51-0d2f5c3b1e10',
  costCenterId: 3,
  sentAt: T0,
} as const;

/** One valid input per status, with or without a retry. */
function inputFor(status: HsmStatus, retryIndex: number | null): HsmNotificationInput {
  const c = { ...common, retryIndex };
  switch (status) {
    case 'ENQUEUED':
    case 'EXPIRED':
      return { ...c, status, from: null, message: null };
    case 'SENT':
      return { ...c, status, from: '5511900000001', message: 'Hi' };
    case 'SERVER':
    case 'DEVICE':
    case 'READ':
      return { ...c, status, from: '5511900000001', message: 'Hi', bsuid: 'BR.123' };
    case 'FAILED':
      return { ...c, status, from: null, message: null, failure: { code: 131026 } };
    case 'REPLIED':
      return { ...c, status, from: '5511900000001', message: 'Hi', blocklistResponse: true };
  }
}

const WITH_IDS = new Set<HsmStatus>(['SERVER', 'DEVICE', 'READ', 'FAILED', 'REPLIED']);

describe('buildHsmNotification', () => {
  for (const status of HSM_STATUSES) {
    for (const retryIndex of [null, 0, 3]) {
      it(`builds a valid ${status} notification (retry ${retryIndex})`, () => {
        const p = buildHsmNotification(inputFor(status, retryIndex), seededRandom(1));
        expect(validatePayload(HsmNotificationSchema, p)).toEqual([]);
        expect(isUuidV4(p.event_id)).toBe(true);
        expect(p.status).toBe(status);
        expect('bsuid' in p).toBe(WITH_IDS.has(status));
        expect('username' in p).toBe(WITH_IDS.has(status));
        expect(p.reason === null).toBe(status !== 'FAILED');
        expect(p.blocklistResponse === null).toBe(status !== 'REPLIED');
        expect(p.is_retry).toBe(retryIndex !== null);
        expect(p.retry_index).toBe(retryIndex);
        expect(p.datetime).toBe('2025-01-01T09:00:00.000-03:00');
      });
    }
  }

  it('writes the spec 7.1 reason for FAILED', () => {
    const p = buildHsmNotification(inputFor('FAILED', null), seededRandom(1));
    expect(p.reason).toBe('WhatsApp, 131026, Message undeliverable');
    expect(p).toMatchObject({ bsuid: null, username: null });
  });

  it('keeps keys in the order of the spec table', () => {
    const p = buildHsmNotification(inputFor('READ', null), seededRandom(1));
    expect(Object.keys(p)).toEqual([
      'event_id',
      'id',
      'from',
      'to',
      'bsuid',
      'username',
      'status',
      'campaign_id',
      'request_id',
      'cost_center_id',
      'data',
      'document',
      'contract',
      'message',
      'datetime',
      'is_retry',
      'retry_index',
      'reason',
      'blocklistResponse',
    ]);
  });

  it('rejects impossible combinations at compile time', () => {
    const r = seededRandom(1);
    const c = { ...common, retryIndex: null };
    // Never called: the assertions are the @ts-expect-error lines, checked by tsc.
    const typeChecks = () => {
      // @ts-expect-error bsuid is absent for SENT
      buildHsmNotification({ ...c, status: 'SENT', from: 'a', message: 'b', bsuid: 'x' }, r);
      // @ts-expect-error SENT carries from and message
      buildHsmNotification({ ...c, status: 'SENT', from: null, message: 'b' }, r);
      // @ts-expect-error FAILED needs a failure
      buildHsmNotification({ ...c, status: 'FAILED', from: null, message: null }, r);
      // @ts-expect-error REPLIED needs blocklistResponse
      buildHsmNotification({ ...c, status: 'REPLIED', from: 'a', message: 'b' }, r);
      // @ts-expect-error reason only for FAILED
      buildHsmNotification({ ...c, status: 'READ', from: 'a', message: 'b', failure: { code: 1 } }, r);
    };
    expect(typeof typeChecks).toBe('function');
  });

  it('throws ArgumentError for a negative or fractional retry index or id', () => {
    const r = seededRandom(1);
    expect(() => buildHsmNotification(inputFor('SENT', -1), r)).toThrow(/retryIndex/);
    expect(() => buildHsmNotification({ ...inputFor('SENT', null), id: 1.5 }, r)).toThrow(/input\.id/);
  });

  it('throws ArgumentError for a fractional campaign or cost center, an unknown status, a missing failure', () => {
    const r = seededRandom(1);
    expect(() => buildHsmNotification({ ...inputFor('SENT', null), campaignId: 7.5 }, r)).toThrow(/input\.campaignId\)` to be an integer, got 7\.5/);
    expect(() => buildHsmNotification({ ...inputFor('SENT', null), costCenterId: Number.NaN }, r)).toThrow(/input\.costCenterId/);
    expect(() => buildHsmNotification({ ...inputFor('SENT', null), status: 'DELIVERED' } as never, r)).toThrow(/input\.status\)` to be one of "ENQUEUED"/);
    expect(() => buildHsmNotification({ ...inputFor('FAILED', null), failure: undefined as never }, r)).toThrow(/input\.failure/);
    expect(() => buildHsmNotification({ ...inputFor('SENT', null), sentAt: Number.NaN }, r)).toThrow(/input\.sentAt/);
    expect(r.calls).toBe(0);
  });

  for (const status of HSM_STATUSES) {
    it(`any one bad field of a ${status} input: an ArgumentError naming it, or a valid payload`, () => {
      const input = { ...inputFor(status, 2), data: { ref: 'A-1' }, document: '52998224725' };
      expect(expectRefusedOrValid(input, HsmNotificationSchema, (i, random) => buildHsmNotification(i, random))).toBeGreaterThan(40);
    });
  }

  it('the schema rejects payloads that break a conditional key', () => {
    const r = seededRandom(2);
    const sent = buildHsmNotification(inputFor('SENT', null), r);
    const read = buildHsmNotification(inputFor('READ', 1), r);
    const failed = buildHsmNotification(inputFor('FAILED', null), r);
    const bad: [unknown, string][] = [
      [{ ...sent, bsuid: null, username: null }, '$.bsuid'],
      [{ ...sent, from: null }, '$.from'],
      [{ ...read, bsuid: undefined }, '$.bsuid'],
      [{ ...read, is_retry: false }, '$'],
      [{ ...read, retry_index: null }, '$'],
      [{ ...failed, reason: null }, '$.reason'],
      [{ ...sent, reason: 'x' }, '$.reason'],
      [{ ...sent, blocklistResponse: false }, '$.blocklistResponse'],
      [{ ...sent, status: 'DELIVERED' }, '$'],
      [{ ...sent, datetime: 'yesterday' }, '$.datetime'],
      [{ ...sent, event_id: 'x' }, '$.event_id'],
    ];
    for (const [payload, path] of bad) {
      const clean = JSON.parse(JSON.stringify(payload));
      const problems = validatePayload(HsmNotificationSchema, clean);
      expect(problems.length, JSON.stringify(clean)).toBeGreaterThan(0);
      // The closest shape may be another status group (a SENT with bsuid reads as a SERVER with the wrong status).
      expect(
        problems.some((p) => p.path === path || p.path === '$.status' || path === '$'),
        JSON.stringify(problems),
      ).toBe(true);
    }
  });

  it('every built notification validates (property)', () => {
    const arbInput: fc.Arbitrary<HsmNotificationInput> = fc
      .record({
        status: fc.constantFrom(...HSM_STATUSES),
        retryIndex: fc.option(fc.nat(20), { nil: null }),
        id: fc.option(fc.integer(), { nil: null }),
        to: fc.string(),
        from: fc.string(),
        message: fc.string(),
        nullMessage: fc.boolean(),
        bsuid: fc.option(fc.string(), { nil: null }),
        code: fc.integer({ min: 1, max: 999_999 }),
        blocklist: fc.boolean(),
        data: fc.option(fc.dictionary(fc.string(), fc.string()), { nil: null }),
        sentAt: fc.integer({ min: 0, max: 4_102_444_800_000 }),
      })
      .map((x) => {
        const base = { ...common, id: x.id, to: x.to, retryIndex: x.retryIndex, data: x.data, sentAt: x.sentAt };
        const m = x.nullMessage ? { from: null, message: null } : { from: x.from, message: x.message };
        switch (x.status) {
          case 'ENQUEUED':
          case 'EXPIRED':
            return { ...base, status: x.status, ...m };
          case 'SENT':
            return { ...base, status: x.status, from: x.from, message: x.message };
          case 'SERVER':
          case 'DEVICE':
          case 'READ':
            return { ...base, status: x.status, from: x.from, message: x.message, bsuid: x.bsuid };
          case 'FAILED':
            return { ...base, status: x.status, ...m, bsuid: x.bsuid, failure: { code: x.code } };
          case 'REPLIED':
            return { ...base, status: x.status, from: x.from, message: x.message, blocklistResponse: x.blocklist };
        }
      });
    fc.assert(
      fc.property(arbInput, fc.integer(), (input, seed) => {
        const p = buildHsmNotification(input, seededRandom(seed));
        expect(validatePayload(HsmNotificationSchema, JSON.parse(JSON.stringify(p)))).toEqual([]);
      }),
    );
  });
});
