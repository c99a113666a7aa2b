import { describe, expect, it } from 'vitest';
import { CHANNEL_ERRORS, TRANSPORT_FAILURES, UNKNOWN_ACTION, actionForCode, channelError, failureReason } from '../../src/index.js';

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
    [131056, 'requeue'],
    [190, 'requeue'],
    [0, 'requeue'],
    [100, 'give-up'],
    [133004, 'retry'],
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

  it('keeps the message of a credentials problem: the number rests, no contact fails', () => {
    for (const code of [0, 3, 10, 190, 200]) expect(actionForCode(code)).toEqual({ kind: 'requeue', restMs: 60_000 });
  });

  it('retries an unknown outcome and requeues what never left', () => {
    expect(TRANSPORT_FAILURES['unknown-outcome'].action).toEqual({ kind: 'retry', notBeforeMs: 0 });
    expect(TRANSPORT_FAILURES['not-sent'].action).toEqual({ kind: 'requeue', restMs: 5_000 });
    expect(TRANSPORT_FAILURES.throttled.action.kind).toBe('requeue');
  });
});
