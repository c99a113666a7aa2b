import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { WEBHOOK_TOLERANCE_MS, generateWebhookSecret, signWebhook, verifyWebhook } from '../../src/events/signing.js';
import { T0, seededRandom } from './helpers.js';

describe('Standard Webhooks signing', () => {
  it('matches the Standard Webhooks reference vector', () => {
    const headers = signWebhook({
      id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      now: 1614265330 * 1000,
      body: '{"test": 2432232314}',
      secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    });
    expect(headers).toEqual({
      'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'webhook-timestamp': '1614265330',
      'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    });
  });

  const secret = generateWebhookSecret(seededRandom(5));
  const body = '{"event_id":"e","status":"READ"}';
  const signed = signWebhook({ id: 'evt1', now: T0, body, secret });

  it('generates whsec_ secrets of 32 bytes', () => {
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  });

  it('accepts a genuine delivery, with Node or fetch headers', () => {
    expect(verifyWebhook({ headers: signed, body, secret, now: T0 })).toEqual({ ok: true, id: 'evt1', timestamp: T0 / 1000 });
    const upper = { 'Webhook-Id': 'evt1', 'Webhook-Timestamp': signed['webhook-timestamp'], 'Webhook-Signature': signed['webhook-signature'] };
    expect(verifyWebhook({ headers: upper, body, secret, now: T0 }).ok).toBe(true);
    expect(verifyWebhook({ headers: new Headers(signed), body, secret, now: T0 }).ok).toBe(true);
  });

  it('rejects bad signatures: other secret, altered body, id or timestamp', () => {
    const other = generateWebhookSecret(seededRandom(6));
    expect(verifyWebhook({ headers: signed, body, secret: other, now: T0 })).toEqual({ ok: false, reason: 'bad-signature' });
    expect(verifyWebhook({ headers: signed, body: body + ' ', secret, now: T0 })).toEqual({ ok: false, reason: 'bad-signature' });
    expect(verifyWebhook({ headers: { ...signed, 'webhook-id': 'evt2' }, body, secret, now: T0 }).ok).toBe(false);
    const ts = String(T0 / 1000 + 1);
    expect(verifyWebhook({ headers: { ...signed, 'webhook-timestamp': ts }, body, secret, now: T0 })).toEqual({ ok: false, reason: 'bad-signature' });
    expect(verifyWebhook({ headers: { ...signed, 'webhook-signature': 'v2,' + signed['webhook-signature'].slice(3) }, body, secret, now: T0 }).ok).toBe(false);
  });

  it('any single-character change of the body is rejected (property)', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.nat(), fc.string({ minLength: 1, maxLength: 1 }), (text, at, ch) => {
        const i = at % text.length;
        fc.pre(text[i] !== ch);
        const h = signWebhook({ id: 'x', now: T0, body: text, secret });
        const altered = text.slice(0, i) + ch + text.slice(i + 1);
        expect(verifyWebhook({ headers: h, body: text, secret, now: T0 }).ok).toBe(true);
        expect(verifyWebhook({ headers: h, body: altered, secret, now: T0 })).toEqual({ ok: false, reason: 'bad-signature' });
      }),
    );
  });

  it('accepts up to 5 minutes of clock difference either way, not one millisecond more', () => {
    const v = (now: number) => verifyWebhook({ headers: signed, body, secret, now });
    expect(v(T0 + WEBHOOK_TOLERANCE_MS).ok).toBe(true);
    expect(v(T0 + WEBHOOK_TOLERANCE_MS + 1)).toEqual({ ok: false, reason: 'timestamp-too-old' });
    expect(v(T0 - WEBHOOK_TOLERANCE_MS).ok).toBe(true);
    expect(v(T0 - WEBHOOK_TOLERANCE_MS - 1)).toEqual({ ok: false, reason: 'timestamp-too-new' });
    // The timestamp is whole seconds: signed at T0 + 999 ms it reads T0.
    const late = signWebhook({ id: 'evt1', now: T0 + 999, body, secret });
    expect(late['webhook-timestamp']).toBe(String(T0 / 1000));
  });

  it('rejects missing headers and malformed timestamps', () => {
    const { 'webhook-signature': _, ...noSig } = signed;
    expect(verifyWebhook({ headers: noSig, body, secret, now: T0 })).toEqual({ ok: false, reason: 'missing-header' });
    expect(verifyWebhook({ headers: { ...signed, 'webhook-timestamp': '12.5' }, body, secret, now: T0 })).toEqual({ ok: false, reason: 'bad-timestamp' });
  });

  it('supports secret rotation: several signatures, several accepted secrets', () => {
    const next = generateWebhookSecret(seededRandom(9));
    const both = signWebhook({ id: 'evt1', now: T0, body, secret: [next, secret] });
    expect(both['webhook-signature'].split(' ')).toHaveLength(2);
    expect(verifyWebhook({ headers: both, body, secret, now: T0 }).ok).toBe(true);
    expect(verifyWebhook({ headers: signed, body, secret: [next, secret], now: T0 }).ok).toBe(true);
  });

  it('refuses unusable secrets and ids as programmer errors', () => {
    expect(() => signWebhook({ id: 'a', now: T0, body, secret: 'whsec_' })).toThrow(/secret/);
    expect(() => signWebhook({ id: 'a.b', now: T0, body, secret })).toThrow(/id/);
  });
});
