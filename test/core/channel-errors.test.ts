import { describe, expect, it } from 'vitest';
import { CHANNEL_ERRORS, PAIR_INTERVAL_MS, TRANSPORT_FAILURES, UNKNOWN_ACTION, actionForCode, blockingCause, channelError, failureReason } from '../../src/index.js';

describe('error-to-action table', () => {
  it.each([
    [130429, 'requeue'],
    [131049, 'retry'],
    [131026, 'give-up'],
    [132015, 'template-out'],
    [132016, 'template-out'],
    [131048, 'number-out'],
    [133010, 'number-out'],
    [131047, 'give-up'],
    [131056, 'recipient-wait'],
    [190, 'transport'],
    [0, 'transport'],
    [100, 'give-up'],
    [133004, 'transport'],
    [131016, 'transport'],
    [131000, 'retry'],
  ])('code %i means %s', (code, kind) => {
    expect(actionForCode(code).kind).toBe(kind);
  });

  it('retries 131049 not before 24 hours', () => {
    expect(actionForCode(131049)).toEqual({ kind: 'retry', notBeforeMs: 86_400_000 });
  });

  it('pauses a template on 132015 and disables it on 132016', () => {
    expect(actionForCode(132015)).toMatchObject({ kind: 'template-out', status: 'paused' });
    expect(actionForCode(132016)).toEqual({ kind: 'template-out', status: 'disabled' });
  });

  it('treats unknown and absent codes as one contact retry', () => {
    expect(actionForCode(999_999)).toBe(UNKNOWN_ACTION);
    expect(actionForCode(undefined)).toBe(UNKNOWN_ACTION);
    expect(UNKNOWN_ACTION.kind).toBe('retry');
  });

  it('lists each code once, in order, with a provider and a description', () => {
    const codes = CHANNEL_ERRORS.map((e) => e.code);
    expect(codes).toEqual([...new Set(codes)].sort((a, b) => a - b));
    for (const e of CHANNEL_ERRORS) {
      expect(e.provider).toBe('WhatsApp');
      expect(e.description.length).toBeGreaterThan(5);
      expect(channelError(e.code)).toBe(e);
    }
  });

  it('builds the spec 7.1 reason string', () => {
    expect(failureReason(131026)).toBe('WhatsApp, 131026, Message undeliverable');
    expect(failureReason(555, 'Carrier said no', 'SMS')).toBe('SMS, 555, Carrier said no');
    expect(failureReason(555)).toBe('WhatsApp, 555, Unknown error');
  });

  it('keeps the message of a credentials problem for a bounded time: the number rests a minute, no retry is used, the number is blocked', () => {
    for (const code of [0, 3, 10, 190, 200]) {
      expect(actionForCode(code)).toEqual({ kind: 'transport', backoffMs: 10_000, restMs: 10_000 });
      expect(blockingCause(code)).toBe('credentials');
    }
    expect(blockingCause(131026)).toBeUndefined();
    expect(blockingCause(undefined)).toBeUndefined();
  });

  it('waits at least the pair interval for a recipient on 131056', () => {
    expect(actionForCode(131056)).toEqual({ kind: 'recipient-wait', waitMs: PAIR_INTERVAL_MS });
    expect(PAIR_INTERVAL_MS).toBeGreaterThanOrEqual(6_000);
  });

  it('tries an unknown outcome and what never left again as transport failures, giving back only what never left', () => {
    expect(TRANSPORT_FAILURES['unknown-outcome'].action).toEqual({ kind: 'transport', backoffMs: 1_000 });
    expect(TRANSPORT_FAILURES['unknown-outcome'].refused).toBe(false);
    expect(TRANSPORT_FAILURES['not-sent'].action).toEqual({ kind: 'transport', backoffMs: 1_000, restMs: 5_000 });
    expect(TRANSPORT_FAILURES['not-sent'].refused).toBe(true);
    expect(TRANSPORT_FAILURES['not-sent'].blocks).toBe('unreachable');
    expect(TRANSPORT_FAILURES.throttled.action.kind).toBe('requeue');
  });
});
