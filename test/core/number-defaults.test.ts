/**
 * `engine.setNumberDefaults`: a provider's per-second rate for the numbers whose fleet entry sets
 * none (the WhatsApp Cloud API's 80 messages a second). The engine hands out at that pace, keeps a
 * rate the fleet gave or a later change set, and gives it to the numbers of a fleet loaded later.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock, createEngine } from '../../src/index.js';

const contacts = (n: number) => Array.from({ length: n }, (_, i) => ({ phone: `55119${String(80_000_000 + i)}`, variables: [`Name ${i}`] }));

function fleet(numbers: readonly { phone: string; messagesPerSecond?: number }[]) {
  return {
    businesses: [
      {
        id: 1,
        name: 'Acme',
        numbers: numbers.map((n) => ({ throughputPerHour: 1_000_000, messagingLimit24h: 10_000_000, ...n })),
        templateTypes: [{ id: 10, name: 'billing', templateIds: [100] }],
      },
    ],
    templates: [{ id: 100, name: 'billing_a', text: 'Hi {{1}}, your bill is due.', businessIds: [1] }],
  };
}

/** Messages handed out per number in each second of `seconds`, polling every 10 ms. */
function handOutsPerSecond(engine: ReturnType<typeof createEngine>, clock: ManualClock, seconds: number): Map<string, number[]> {
  const per = new Map<string, number[]>();
  for (let s = 0; s < seconds; s++) {
    for (let tick = 0; tick < 100; tick++) {
      for (const m of engine.poll({ limit: 10_000 })) {
        const counts = per.get(m.phone) ?? Array.from({ length: seconds }, () => 0);
        counts[s]!++;
        per.set(m.phone, counts);
        engine.report(m.messageId, { status: 'sent' });
      }
      clock.advance(10);
    }
  }
  return per;
}

describe('number defaults', () => {
  it('paces a number without a per-second rate at the default, and leaves a number with one alone', () => {
    const clock = new ManualClock(0);
    const engine = createEngine(fleet([{ phone: '5511990000001' }, { phone: '5511990000002', messagesPerSecond: 20 }]), { clock });
    engine.setNumberDefaults({ messagesPerSecond: 80 });
    expect(engine.numbers().map((n) => n.messagesPerSecond)).toEqual([80, 20]);
    // Output at full buckets: what may go at once, 80 + 20.
    expect(engine.output(1, 10)).toBe(100);
    engine.submit({ businessId: 1, typeId: 10, contacts: contacts(2_000) });
    const per = handOutsPerSecond(engine, clock, 5);
    // The window's full bucket goes at once, then one message every 1/rate s: the first second
    // carries the bucket and what refilled (docs/concepts.md, "Limits of a number"), then the rate.
    expect(per.get('5511990000001')).toEqual([159, 80, 80, 80, 80]);
    expect(per.get('5511990000002')).toEqual([39, 20, 20, 20, 20]);
  });

  it('without defaults a number without a rate has no per-second window', () => {
    const clock = new ManualClock(0);
    const engine = createEngine(fleet([{ phone: '5511990000001' }]), { clock });
    engine.submit({ businessId: 1, typeId: 10, contacts: contacts(2_000) });
    expect(engine.poll({ limit: 10_000 })).toHaveLength(2_000);
  });

  it('keeps a rate set since (a throughput upgrade), and gives the default to numbers of a fleet loaded later', () => {
    const clock = new ManualClock(0);
    const engine = createEngine(fleet([{ phone: '5511990000001' }, { phone: '5511990000002' }]), { clock });
    engine.setNumberLimits('5511990000002', { messagesPerSecond: 1_000 });
    engine.setNumberDefaults({ messagesPerSecond: 80 });
    expect(engine.numbers().map((n) => n.messagesPerSecond)).toEqual([80, 1_000]);
    // An upgrade after the defaults raises 80 to 1,000.
    engine.setNumberLimits('5511990000001', { messagesPerSecond: 1_000 });
    expect(engine.numbers().map((n) => n.messagesPerSecond)).toEqual([1_000, 1_000]);

    engine.replaceFleet(fleet([{ phone: '5511990000001' }, { phone: '5511990000003' }, { phone: '5511990000004', messagesPerSecond: 5 }]));
    expect(engine.numbers().map((n) => [n.phone, n.messagesPerSecond])).toEqual([
      ['5511990000001', 80],
      ['5511990000003', 80],
      ['5511990000004', 5],
    ]);
    engine.submit({ businessId: 1, typeId: 10, contacts: contacts(1_000) });
    const per = handOutsPerSecond(engine, clock, 2);
    expect(per.get('5511990000003')).toEqual([159, 80]);
    expect(per.get('5511990000004')).toEqual([9, 5]);
  });

  it('changes the default of the numbers at the old one, and {} removes it', () => {
    const engine = createEngine(fleet([{ phone: '5511990000001' }]), { clock: new ManualClock(0) });
    engine.setNumberDefaults({ messagesPerSecond: 80 });
    engine.setNumberDefaults({ messagesPerSecond: 100 });
    expect(engine.numbers()[0]!.messagesPerSecond).toBe(100);
    engine.setNumberDefaults({});
    expect(engine.numbers()[0]!.messagesPerSecond).toBeUndefined();
  });

  it('refuses a rate that is not a positive integer, naming it, and changes nothing', () => {
    const engine = createEngine(fleet([{ phone: '5511990000001' }]), { clock: new ManualClock(0) });
    expect(() => engine.setNumberDefaults({ messagesPerSecond: 0 })).toThrow(/messagesPerSecond/);
    expect(() => engine.setNumberDefaults({ messagesPerSecond: 2.5 })).toThrow(/2\.5/);
    expect(engine.numbers()[0]!.messagesPerSecond).toBeUndefined();
  });
});
