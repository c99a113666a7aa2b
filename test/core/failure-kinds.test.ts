/**
 * Failures that are not the contact's: the exchange failed (transport), the recipient's pair is
 * rate limited (131056), or the provider refused the request (its charge goes back). None of them
 * uses one of the contact's retries; each is bounded.
 */
import { describe, expect, it } from 'vitest';
import { MAX_BACKOFF_MS, MAX_TRANSPORT_ATTEMPTS, ManualClock, PAIR_INTERVAL_MS, createEngine, type Engine, type OutgoingMessage } from '../../src/index.js';
import { specFleet } from './arbitraries.js';

const contact = (i: number) => ({ phone: `55119${String(80000000 + i)}`, variables: [`Name${i}`, `R$ ${i}`] });

function setup() {
  const clock = new ManualClock(0);
  const engine = createEngine(specFleet(), { clock });
  return { clock, engine };
}

function submit(engine: Engine, n: number, maxRetries = 0) {
  return engine.submit({ businessId: 1, typeId: 10, contacts: Array.from({ length: n }, (_, i) => contact(i)), maxRetries });
}

/** Room left in every number's 24 h window, summed. */
const spare = (engine: Engine) => engine.numbers().reduce((n, x) => n + x.messagingLimit24h - engine.numberWindows(x.phone)!.day.used, 0);
const windows = (engine: Engine, phone: string) => engine.numberWindows(phone)!;

describe('transport failures', () => {
  it('try the contact again with a doubling backoff under the same message id, using no retry, and end it failed after the bound', () => {
    const { clock, engine } = setup();
    submit(engine, 1, 3);
    let m = engine.poll()[0]!;
    const firstId = m.messageId;
    const waits: number[] = [];
    for (let k = 0; k + 1 < MAX_TRANSPORT_ATTEMPTS; k++) {
      const r = engine.report(m.messageId, { status: 'failed', reason: 'No answer from the provider (unknown outcome): timeout', action: { kind: 'transport', backoffMs: 1_000 } });
      expect(r).toMatchObject({ ok: true, effect: 'requeued' });
      const at = (r as { retryAt: number }).retryAt;
      waits.push(at - clock.now());
      expect(engine.poll()).toHaveLength(0);
      clock.set(at);
      m = engine.poll()[0]!;
      expect(m.messageId).toBe(firstId); // the provider's idempotency key is kept
      expect(m.isRetry).toBe(false); // no contact retry was used
    }
    expect(waits.slice(0, 4)).toEqual([1_000, 2_000, 4_000, 8_000]);
    expect(Math.max(...waits)).toBeLessThanOrEqual(MAX_BACKOFF_MS);
    const last = engine.report(m.messageId, { status: 'failed', reason: 'timeout', action: { kind: 'transport', backoffMs: 1_000 } });
    expect(last).toEqual({ ok: true, effect: 'failed' });
    const [outcome] = engine.takeOutcomes();
    expect(outcome).toMatchObject({ state: 'failed', retryIndex: null });
    expect(outcome!.reason).toContain(`after ${MAX_TRANSPORT_ATTEMPTS} tries`);
  });

  it('keep the id of a try whose outcome was unknown through a later failover (a refusal of the repeat on a restricted number)', () => {
    const { clock, engine } = setup();
    submit(engine, 1, 3);
    const first = engine.poll()[0]!;
    const r = engine.report(first.messageId, { status: 'failed', reason: 'No answer from the provider (unknown outcome): timeout', action: { kind: 'transport', backoffMs: 1_000 } });
    clock.set((r as { retryAt: number }).retryAt);
    const repeat = engine.poll()[0]!;
    expect(repeat.messageId).toBe(first.messageId);
    // The repeat meets a number taken out (368, the business account restricted): failover.
    expect(engine.report(repeat.messageId, { status: 'failed', code: 368, refused: true })).toMatchObject({ ok: true, effect: 'failover' });
    clock.set(clock.now() + 1);
    const after = engine.poll()[0]!;
    expect(after.phone).not.toBe(repeat.phone);
    expect(after.messageId).toBe(first.messageId);
    expect(engine.report(after.messageId, { status: 'sent' })).toMatchObject({ effect: 'sent' });
  });

  it('rest the number when the action says so, and the contact waits for both', () => {
    const { clock, engine } = setup();
    submit(engine, 1);
    const m = engine.poll()[0]!;
    engine.report(m.messageId, { status: 'failed', code: 190 });
    expect(engine.numbers().find((n) => n.phone === m.phone)).toMatchObject({ status: 'paused' });
    clock.set(60_000);
    expect(engine.poll()).toHaveLength(1);
  });
});

describe('the pair rate limit (131056)', () => {
  it('makes only that recipient wait, at least the pair interval and doubling, with no retry used; other recipients go on', () => {
    const { clock, engine } = setup();
    submit(engine, 3);
    const [a, b] = engine.poll({ limit: 2 });
    const r1 = engine.report(a!.messageId, { status: 'failed', code: 131056, refused: true });
    expect(r1).toEqual({ ok: true, effect: 'requeued', retryAt: PAIR_INTERVAL_MS });
    expect(engine.report(b!.messageId, { status: 'sent' })).toMatchObject({ effect: 'sent' });
    // The number is not rested: the third contact goes at once.
    const next = engine.poll();
    expect(next.map((m) => m.contact.phone)).toEqual([contact(2).phone]);
    clock.set(PAIR_INTERVAL_MS - 1);
    expect(engine.poll()).toHaveLength(0);
    clock.set(PAIR_INTERVAL_MS);
    const again = engine.poll()[0]!;
    expect(again.contact.phone).toBe(a!.contact.phone);
    expect(again.isRetry).toBe(false);
    const r2 = engine.report(again.messageId, { status: 'failed', code: 131056, refused: true });
    expect((r2 as { retryAt: number }).retryAt - clock.now()).toBe(2 * PAIR_INTERVAL_MS);
  });
});

describe('a refused attempt', () => {
  it('gives its charge back to every window of its number', () => {
    const { engine } = setup();
    submit(engine, 10);
    const before = spare(engine);
    const sent = engine.poll({ limit: 10 });
    expect(spare(engine)).toBe(before - 10);
    for (const m of sent) engine.report(m.messageId, { status: 'failed', code: 131056, refused: true });
    expect(spare(engine)).toBe(before);
    for (const n of engine.numbers()) expect(windows(engine, n.phone).hour.used).toBe(0);
  });

  it('keeps the charge of a failure that is not a refusal (the provider may have counted it)', () => {
    const { engine } = setup();
    submit(engine, 2);
    const before = spare(engine);
    const [m] = engine.poll({ limit: 1 });
    engine.report(m!.messageId, { status: 'failed', reason: 'timeout', action: { kind: 'transport', backoffMs: 1_000 } });
    expect(spare(engine)).toBe(before - 1);
  });

  it('gives back to the 24 h bucket it was charged in, even reported in a later bucket', () => {
    const { clock, engine } = setup();
    submit(engine, 2);
    const [m] = engine.poll({ limit: 1 }) as [OutgoingMessage];
    const phone = m.phone;
    clock.set(90 * 60_000); // a later 24 h bucket, whatever their width (15 or 60 minutes)
    engine.report(m.messageId, { status: 'failed', code: 130429, refused: true });
    expect(windows(engine, phone).day.used).toBe(0);
    // 24 h after the hand-out nothing leaves the window that was not there.
    clock.set(24 * 3_600_000 + 1);
    expect(windows(engine, phone).day.used).toBe(0);
  });
});

describe('a contact submitted again after a failure reported later', () => {
  it('continues its retry count (retriesUsed) and waits until notBefore, counted as waiting, never as a retry of its own', () => {
    const { clock, engine } = setup();
    clock.set(1_000);
    const ticket = engine.submit({ businessId: 1, typeId: 10, contacts: [contact(1)], maxRetries: 2, retriesUsed: 1, notBefore: 7_000, retryInterval: 60_000 });
    expect(ticket.accepted).toBe(1);
    expect(engine.stats()).toMatchObject({ queued: 0, waitingRetry: 1 });
    expect(engine.poll()).toHaveLength(0);
    expect(engine.nextWakeAt()).toBe(7_000);
    clock.set(7_000);
    const [m] = engine.poll();
    expect(m).toMatchObject({ isRetry: true, retryIndex: 0, maxRetries: 2, retryInterval: 60_000 });
    // One retry is left: a failure schedules it, the next failure ends the contact.
    const r = engine.report(m!.messageId, { status: 'failed', code: 131000 });
    expect(r).toMatchObject({ effect: 'retry-scheduled', retryAt: 67_000 });
    clock.set(67_000);
    const [again] = engine.poll();
    expect(again).toMatchObject({ retryIndex: 1 });
    expect(engine.report(again!.messageId, { status: 'failed', code: 131000 })).toEqual({ ok: true, effect: 'failed' });
  });

  it('goes at once when notBefore has passed, and refuses retriesUsed beyond maxRetries with the field named', () => {
    const { clock, engine } = setup();
    clock.set(5_000);
    engine.submit({ businessId: 1, typeId: 10, contacts: [contact(1)], notBefore: 4_000 });
    expect(engine.poll()).toHaveLength(1);
    expect(() => engine.submit({ businessId: 1, typeId: 10, contacts: [contact(2)], maxRetries: 1, retriesUsed: 2 })).toThrow(/\$\.retriesUsed/);
    expect(() => engine.submit({ businessId: 1, typeId: 10, contacts: [contact(2)], notBefore: -1 })).toThrow(/\$\.notBefore/);
  });

  it('keeps waiting contacts across a restart from a snapshot', () => {
    const { clock, engine } = setup();
    engine.submit({ businessId: 1, typeId: 10, contacts: [contact(1), { phone: '123' }], notBefore: 9_000 });
    const restored = createEngine(specFleet(), { clock, snapshot: JSON.parse(JSON.stringify(engine.snapshot())) });
    expect(restored.stats()).toMatchObject({ waitingRetry: 1, rejected: 1 });
    clock.set(9_000);
    expect(restored.poll()).toHaveLength(1);
  });
});

describe('a refused attempt in a portfolio', () => {
  it('gives the recipient back to the portfolio when the refused message made it new', () => {
    const clock = new ManualClock(0);
    const fleet = specFleet() as unknown as { portfolios?: unknown; businesses: { portfolioId?: string }[] };
    fleet.portfolios = [{ id: 'p1', messagingLimit24h: 2 }];
    for (const b of fleet.businesses) b.portfolioId = 'p1';
    const engine = createEngine(fleet, { clock });
    engine.submit({ businessId: 1, typeId: 10, contacts: [contact(1), contact(2), contact(3)] });
    const [a, b] = engine.poll();
    expect(engine.poll()).toHaveLength(0); // two recipients: the portfolio is full
    engine.report(a!.messageId, { status: 'failed', code: 131026, refused: true });
    engine.report(b!.messageId, { status: 'sent' });
    // The refused recipient left the portfolio's 24 h: the third contact goes.
    const [c] = engine.poll();
    expect(c?.contact.phone).toBe(contact(3).phone);
  });
});
