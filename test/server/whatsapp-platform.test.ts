/**
 * The platform's account-level events, read from Meta's documented payloads (the account_update
 * and phone_number_quality_update references, template pacing) and what they mean for the engine:
 * a restricted, disabled or deleted account pauses its numbers and its lifting resumes them; the
 * business portfolio's `max_daily_conversations_per_business` wins over the deprecated
 * `current_limit` and is the portfolio's limit, never one number's; FLAGGED and UNFLAGGED are a
 * flag; `held_for_quality_assessment` is read and changes no status.
 */
import { describe, expect, it } from 'vitest';
import { accountChange, businessLimitOf, flagOf, numberLimitsOf } from '../../src/server/channels/whatsapp/platform-changes.js';
import { readWebhook, type WebhookEvent } from '../../src/server/channels/whatsapp/webhook-events.js';
import { accountNotification, qualityNotification, statusNotification, WABA_ID } from './whatsapp-fake-graph.js';

type Account = Extract<WebhookEvent, { kind: 'account' }>;
type Quality = Extract<WebhookEvent, { kind: 'quality' }>;
const HOUR = 3_600_000;

const one = <T extends WebhookEvent>(payload: unknown): T => {
  const { events, skipped } = readWebhook(payload);
  expect(skipped).toBe(0);
  expect(events).toHaveLength(1);
  return events[0] as T;
};

describe('reading account_update', () => {
  it("reads Meta's account restriction example: every restriction with its expiration", () => {
    // The account_update reference's "Account restriction" example, as Meta writes it.
    const payload = {
      object: 'whatsapp_business_account',
      entry: [
        {
          id: '102290129340398',
          time: 1641330498,
          changes: [
            {
              value: {
                event: 'ACCOUNT_RESTRICTION',
                restriction_info: [
                  { restriction_type: 'RESTRICTED_BIZ_INITIATED_MESSAGING', expiration: 1641330498 },
                  { restriction_type: 'RESTRICTED_ADD_PHONE_NUMBER_ACTION', expiration: 1641330498 },
                ],
              },
              field: 'account_update',
            },
          ],
        },
      ],
    };
    expect(one<Account>(payload)).toEqual({
      kind: 'account',
      key: 'a:102290129340398:ACCOUNT_RESTRICTION:RESTRICTED_BIZ_INITIATED_MESSAGING@1641330498000,RESTRICTED_ADD_PHONE_NUMBER_ACTION@1641330498000:::1641330498000',
      wabaId: '102290129340398',
      event: 'ACCOUNT_RESTRICTION',
      restrictions: [
        { type: 'RESTRICTED_BIZ_INITIATED_MESSAGING', until: 1_641_330_498_000 },
        { type: 'RESTRICTED_ADD_PHONE_NUMBER_ACTION', until: 1_641_330_498_000 },
      ],
      banState: undefined,
      violation: undefined,
      at: 1_641_330_498_000,
    });
  });

  it('reads a restriction without an end, and one written as a single object with an ISO date', () => {
    expect(one<Account>(accountNotification({ event: 'ACCOUNT_RESTRICTION', restrictions: [{ type: 'RESTRICTED_BIZ_INITIATED_MESSAGING' }] })).restrictions).toEqual([
      { type: 'RESTRICTED_BIZ_INITIATED_MESSAGING', until: undefined },
    ]);
    const relayed = {
      entry: [
        {
          id: WABA_ID,
          changes: [
            { field: 'account_update', value: { event: 'ACCOUNT_RESTRICTION', restriction_info: { restriction_type: 'RESTRICTED_BIZ_INITIATED_MESSAGING', expiration: '2022-12-12T07:09:27.000Z' } } },
          ],
        },
      ],
    };
    expect(one<Account>(relayed).restrictions).toEqual([{ type: 'RESTRICTED_BIZ_INITIATED_MESSAGING', until: Date.UTC(2022, 11, 12, 7, 9, 27) }]);
  });

  it('reads a violation, a ban state and a deleted account', () => {
    expect(one<Account>(accountNotification({ event: 'ACCOUNT_VIOLATION', violation: 'ADULT', time: 1743451903 }))).toMatchObject({
      event: 'ACCOUNT_VIOLATION',
      violation: 'ADULT',
      restrictions: [],
      at: 1_743_451_903_000,
    });
    expect(one<Account>(accountNotification({ event: 'DISABLED_UPDATE', banState: 'REINSTATE' }))).toMatchObject({ event: 'DISABLED_UPDATE', banState: 'REINSTATE', wabaId: WABA_ID });
    expect(one<Account>(accountNotification({ event: 'DISABLED_UPDATE', banState: 'DISABLE' })).banState).toBe('DISABLE');
    expect(one<Account>(accountNotification({ event: 'ACCOUNT_DELETED' }))).toMatchObject({ event: 'ACCOUNT_DELETED', restrictions: [], banState: undefined });
  });

  it('names each event by what it says: a lifted restriction is another event than the restriction', () => {
    const restricted = one<Account>(accountNotification({ event: 'ACCOUNT_RESTRICTION', restrictions: [{ type: 'RESTRICTED_BIZ_INITIATED_MESSAGING', expiration: 2000 }], time: 1000 }));
    const lifted = one<Account>(accountNotification({ event: 'ACCOUNT_RESTRICTION', restrictions: [], time: 1000 }));
    expect(restricted.key).not.toBe(lifted.key);
    expect(one<Account>(accountNotification({ event: 'ACCOUNT_RESTRICTION', restrictions: [{ type: 'RESTRICTED_BIZ_INITIATED_MESSAGING', expiration: 2000 }], time: 1000 })).key).toBe(restricted.key);
  });
});

describe('reading phone_number_quality_update', () => {
  it('keeps both limit fields apart: the deprecated current_limit and the portfolio’s max_daily_conversations_per_business', () => {
    const q = one<Quality>(qualityNotification({ display: '15550783881', event: 'DOWNGRADE', oldLimit: 'TIER_10K', currentLimit: 'TIER_10K', businessLimit: 'TIER_2K', time: 1748454394 }));
    expect(q).toMatchObject({ kind: 'quality', displayPhoneNumber: '15550783881', event: 'DOWNGRADE', tier: 'TIER_10K', businessTier: 'TIER_2K', at: 1_748_454_394_000 });
  });

  it('reads FLAGGED and UNFLAGGED', () => {
    expect(one<Quality>(qualityNotification({ display: '15550783881', event: 'FLAGGED', currentLimit: 'TIER_10K' }))).toMatchObject({ event: 'FLAGGED', tier: 'TIER_10K', businessTier: undefined });
    expect(one<Quality>(qualityNotification({ display: '15550783881', event: 'UNFLAGGED' })).event).toBe('UNFLAGGED');
  });
});

describe('reading held_for_quality_assessment', () => {
  it('is a status of its own, not skipped', () => {
    const number = { phone: '5511990000001', phoneNumberId: '106540352242920' };
    const e = one<Extract<WebhookEvent, { kind: 'status' }>>(statusNotification(number, { wamid: 'wamid.H', status: 'held_for_quality_assessment', recipient: '5511980000000', opaque: 's1.0.0' }));
    expect(e).toMatchObject({ kind: 'status', status: 'held_for_quality_assessment', opaque: 's1.0.0', key: 's:wamid.H:held_for_quality_assessment' });
  });
});

describe('account events as engine changes', () => {
  const account = (over: Partial<Account>): Account => ({
    kind: 'account',
    key: 'k',
    wabaId: '1',
    event: 'ACCOUNT_RESTRICTION',
    restrictions: [],
    banState: undefined,
    violation: undefined,
    at: 0,
    ...over,
  });
  const now = 10 * HOUR;

  it.each([
    [
      'a restriction of business-initiated messaging pauses until its end',
      { restrictions: [{ type: 'RESTRICTED_BIZ_INITIATED_MESSAGING', until: now + HOUR }] },
      { kind: 'pause', until: now + HOUR, reason: 'ACCOUNT_RESTRICTION RESTRICTED_BIZ_INITIATED_MESSAGING' },
    ],
    [
      'the latest end of the restrictions that stop sending',
      {
        restrictions: [
          { type: 'RESTRICTED_BIZ_INITIATED_MESSAGING', until: now + HOUR },
          { type: 'RESTRICTED_BIZ_INITIATED_MESSAGING', until: now + 2 * HOUR },
          { type: 'RESTRICTED_ADD_PHONE_NUMBER_ACTION', until: now + 9 * HOUR },
        ],
      },
      { kind: 'pause', until: now + 2 * HOUR, reason: 'ACCOUNT_RESTRICTION RESTRICTED_BIZ_INITIATED_MESSAGING RESTRICTED_BIZ_INITIATED_MESSAGING RESTRICTED_ADD_PHONE_NUMBER_ACTION' },
    ],
    [
      'without an expiration: until lifted',
      { restrictions: [{ type: 'RESTRICTED_BIZ_INITIATED_MESSAGING', until: undefined }] },
      { kind: 'pause', reason: 'ACCOUNT_RESTRICTION RESTRICTED_BIZ_INITIATED_MESSAGING' },
    ],
    ['an empty list is the lifting', { restrictions: [] }, { kind: 'resume', reason: 'ACCOUNT_RESTRICTION lifted' }],
    [
      'restrictions that leave template sending possible are a lifting of the one that stopped it',
      { restrictions: [{ type: 'RESTRICTED_ADD_PHONE_NUMBER_ACTION', until: now + HOUR }] },
      { kind: 'resume', reason: 'ACCOUNT_RESTRICTION RESTRICTED_ADD_PHONE_NUMBER_ACTION (sending allowed)' },
    ],
    [
      'a restriction already over restricts nothing',
      { restrictions: [{ type: 'RESTRICTED_BIZ_INITIATED_MESSAGING', until: now }] },
      { kind: 'resume', reason: 'ACCOUNT_RESTRICTION RESTRICTED_BIZ_INITIATED_MESSAGING (sending allowed)' },
    ],
    ['a disabled account pauses without an end', { event: 'DISABLED_UPDATE', banState: 'DISABLE' }, { kind: 'pause', reason: 'DISABLED_UPDATE DISABLE' }],
    ['a reinstated account resumes', { event: 'DISABLED_UPDATE', banState: 'REINSTATE' }, { kind: 'resume', reason: 'DISABLED_UPDATE REINSTATE' }],
    ['a disabling scheduled is a notice', { event: 'DISABLED_UPDATE', banState: 'SCHEDULE_FOR_DISABLE' }, { kind: 'notice', reason: 'DISABLED_UPDATE SCHEDULE_FOR_DISABLE' }],
    ['a deleted account pauses without an end', { event: 'ACCOUNT_DELETED' }, { kind: 'pause', reason: 'ACCOUNT_DELETED' }],
    ['a violation is a notice', { event: 'ACCOUNT_VIOLATION', violation: 'SCAM' }, { kind: 'notice', reason: 'ACCOUNT_VIOLATION SCAM' }],
    ['a partner event is nothing', { event: 'PARTNER_ADDED' }, undefined],
  ] as [string, Partial<Account>, unknown][])('%s', (_name, over, change) => {
    expect(accountChange(account(over), now)).toEqual(change);
  });
});

describe('number quality events as engine changes', () => {
  const quality = (over: Partial<Quality>): Quality => ({
    kind: 'quality',
    key: 'k',
    wabaId: '1',
    event: 'DOWNGRADE',
    displayPhoneNumber: '1',
    tier: undefined,
    businessTier: undefined,
    rating: undefined,
    at: 0,
    ...over,
  });

  it('with both fields, the portfolio’s limit wins and lands on no number', () => {
    const both = quality({ tier: 'TIER_10K', businessTier: 'TIER_2K' });
    expect(numberLimitsOf(both, undefined)).toBeUndefined();
    expect(businessLimitOf(both)).toEqual({ tier: 'TIER_2K', limit: 2_000 });
  });

  it('current_limit alone stays the number’s own tier', () => {
    const alone = quality({ tier: 'TIER_1K' });
    expect(numberLimitsOf(alone, undefined)).toEqual({ messagingLimit24h: 1_000 });
    expect(businessLimitOf(alone)).toBeUndefined();
  });

  it('a throughput upgrade raises the per-second rate and reports no portfolio limit', () => {
    const up = quality({ event: 'THROUGHPUT_UPGRADE', tier: 'TIER_UNLIMITED', businessTier: 'TIER_UNLIMITED' });
    expect(numberLimitsOf(up, 80)).toEqual({ messagesPerSecond: 1_000 });
    expect(businessLimitOf(up)).toBeUndefined();
  });

  it('TIER_NOT_SET is no limit', () => {
    expect(businessLimitOf(quality({ businessTier: 'TIER_NOT_SET' }))).toBeUndefined();
  });

  it.each([
    [{ event: 'FLAGGED' }, true],
    [{ event: 'UNFLAGGED' }, false],
    [{ event: 'ONBOARDING', rating: 'RED' }, true],
    [{ event: 'ONBOARDING', rating: 'YELLOW' }, true],
    [{ event: 'ONBOARDING', rating: 'GREEN' }, false],
    [{ event: 'DOWNGRADE' }, undefined],
  ] as [Partial<Quality>, boolean | undefined][])('flag of %j', (over, flagged) => {
    expect(flagOf(quality(over))).toBe(flagged);
  });
});
