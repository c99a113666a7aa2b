import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalisePhone } from '../../src/contract/index.js';
import { brazilLandlineArb, brazilMobileArb, foreignPhoneArb } from './arbitraries.js';

describe('normalisePhone', () => {
  it('removes harmless formatting and keeps the digits', () => {
    expect(normalisePhone('+55 (11) 98765-4321')).toEqual({ ok: true, value: '5511987654321' });
    expect(normalisePhone('1.415.555.2671')).toEqual({ ok: true, value: '14155552671' });
    expect(normalisePhone('5511987654321')).toEqual({ ok: true, value: '5511987654321' });
  });

  it('refuses letters, other symbols, a leading 0 or 00 prefix, and lengths outside 8..15', () => {
    for (const bad of ['55119876543x1', '5511#987654321', '005511987654321', '0115551234', '1234567', '1234567890123456', '', '+', '++5511987654321']) {
      expect(normalisePhone(bad).ok, bad).toBe(false);
    }
  });

  it('accepts Brazilian mobiles with the ninth digit and landlines', () => {
    expect(normalisePhone('5511912345678').ok).toBe(true);
    expect(normalisePhone('551133334444').ok).toBe(true);
    expect(normalisePhone('559132345678').ok).toBe(true);
  });

  it('refuses a Brazilian mobile without its ninth digit', () => {
    const r = normalisePhone('551198765432');
    expect(r).toEqual({ ok: false, expected: expect.stringContaining('ninth digit') });
  });

  it('refuses a 13-digit Brazilian number whose subscriber does not start with 9', () => {
    expect(normalisePhone('5511812345678')).toEqual({ ok: false, expected: expect.stringContaining('ninth digit 9') });
  });

  it('refuses Brazilian area codes not in use (20, 23, 25, 26, 29, 30, 36, 39, 40, 50, 52, 56..60, 70, 72, 76, 78, 80, 90, 10)', () => {
    for (const ddd of [10, 20, 23, 25, 26, 29, 30, 36, 39, 40, 50, 52, 56, 57, 58, 59, 60, 70, 72, 76, 78, 80, 90]) {
      const r = normalisePhone(`55${ddd}912345678`);
      expect(r, String(ddd)).toEqual({ ok: false, expected: expect.stringContaining('area code') });
    }
  });

  it('refuses Brazilian numbers of other lengths and landlines starting 0 or 1', () => {
    expect(normalisePhone('55119123456789').ok).toBe(false);
    expect(normalisePhone('55119123456').ok).toBe(false);
    expect(normalisePhone('551113334444').ok).toBe(false);
  });

  it('accepts every generated valid phone unchanged, and its formatted spelling to the same digits', () => {
    fc.assert(
      fc.property(fc.oneof(brazilMobileArb, brazilLandlineArb, foreignPhoneArb), (phone) => {
        expect(normalisePhone(phone)).toEqual({ ok: true, value: phone });
        const formatted = `+${phone.slice(0, 2)} (${phone.slice(2, 4)}) ${phone.slice(4, 8)}-${phone.slice(8)}`;
        expect(normalisePhone(formatted)).toEqual({ ok: true, value: phone });
      }),
    );
  });
});
