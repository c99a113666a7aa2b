/**
 * The batch paths of the dispatch loop (`pollInto`, `reportAt`, `takeOutcomesInto`) against the
 * object paths, packed contacts, and the numbers of messages in flight across a fleet change.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock, createEngine, isArgumentError } from '../../src/index.js';
import { specFleet } from './arbitraries.js';

const contact = (i: number) => ({ phone: `55119${String(80000000 + i)}`, variables: [`Name${i}`, `R$ ${i}`] });
const contacts = (n: number) => Array.from({ length: n }, (_, i) => contact(i));

function setup(packContactsFrom?: number) {
  const clock = new ManualClock(0);
  const engine = createEngine(specFleet(), { clock, ...(packContactsFrom === undefined ? {} : { packContactsFrom }) });
  return { clock, engine };
}

describe('pollInto and reportAt', () => {
  it('hand out the same messages as poll, row by row', () => {
    const a = setup();
    const b = setup();
    for (const e of [a.engine, b.engine]) {
      e.submit({ businessId: 1, typeId: 10, campaignId: 7, contacts: contacts(40) });
      e.submit({ businessId: 1, typeId: 10, contacts: contacts(5) });
    }
    const objects = a.engine.poll({ limit: 30 });
    const batch = b.engine.createMessageBatch(30);
    expect(b.engine.pollInto(batch)).toBe(30);
    expect(Array.from({ length: batch.count }, (_, i) => batch.message(i))).toEqual(objects);
    expect([batch.messageId(3), batch.contactId(3), batch.submissionId(3), batch.phone(3), batch.text(3)]).toEqual([
      objects[3]!.messageId,
      objects[3]!.contactId,
      objects[3]!.submissionId,
      objects[3]!.phone,
      objects[3]!.text,
    ]);
    expect(b.engine.phoneAt(batch.numbers[3]!)).toBe(objects[3]!.phone);
    expect(batch.templateIds[3]).toBe(objects[3]!.templateId);
    // The same reports through either path have the same effects and outcomes.
    for (let i = 0; i < 30; i++) {
      const outcome = i % 3 === 0 ? ({ status: 'failed', code: 131026 } as const) : ({ status: 'sent' } as const);
      expect(b.engine.reportAt(batch, i, outcome)).toEqual(a.engine.report(objects[i]!.messageId, outcome));
    }
    expect(b.engine.stats()).toEqual(a.engine.stats());
    const rows = b.engine.createOutcomeBatch(4);
    const n = b.engine.takeOutcomesInto(rows);
    expect(Array.from({ length: n }, (_, i) => rows.outcome(i))).toEqual(a.engine.takeOutcomes());
    expect([rows.state(0), rows.contactId(0), rows.submissionId(0), rows.campaignId(0)]).toEqual(['failed', 's1.0', 's1', 7]);
    expect(b.engine.takeOutcomesInto(rows)).toBe(0);
  });

  it('refuse rows that were not filled, and answer already-final for a row reported twice', () => {
    const { engine } = setup();
    engine.submit({ businessId: 1, typeId: 10, contacts: contacts(3) });
    const batch = engine.createMessageBatch(8);
    expect(engine.pollInto(batch, 2)).toBe(2);
    expect(engine.reportAt(batch, 0, { status: 'sent' })).toEqual({ ok: true, effect: 'sent' });
    expect(engine.reportAt(batch, 0, { status: 'sent' })).toEqual({ ok: false, reason: 'already-final' });
    const errors = [
      () => engine.reportAt(batch, 2, { status: 'sent' }),
      () => batch.messageId(5),
      () => engine.pollInto(batch, 0),
      () => engine.createMessageBatch(0),
      () => engine.pollInto({} as never),
    ];
    for (const call of errors) expect(call).toThrow(expect.objectContaining({ name: 'ArgumentError' }));
    expect(isArgumentError(catchError(() => engine.reportAt(batch, -1, { status: 'sent' })))).toBe(true);
  });

  it('hand out again the rows of a finished submission as already-final', () => {
    const { engine } = setup();
    engine.submit({ businessId: 1, typeId: 10, contacts: contacts(1) });
    const batch = engine.createMessageBatch();
    engine.pollInto(batch);
    expect(engine.report(batch.messageId(0), { status: 'sent' })).toEqual({ ok: true, effect: 'sent' });
    expect(engine.reportAt(batch, 0, { status: 'failed', code: 131026 })).toEqual({ ok: false, reason: 'already-final' });
  });
});

describe('packed contacts', () => {
  it('give back the same values as new objects, in messages, outcomes and snapshots', () => {
    const { engine, clock } = setup(0);
    const given = [{ phone: '0551198000001', variables: ['Ana', 'R$ 1'] }, ...contacts(3)];
    engine.submit({ businessId: 1, typeId: 10, contacts: given });
    const out = engine.poll();
    expect(out.map((m) => m.contact)).toEqual(given);
    expect(out[0]!.contact).not.toBe(given[0]);
    expect(out[0]!.text).toBe('Hi Ana, your bill of R$ 1 is due.');
    const snapshot = JSON.parse(JSON.stringify(engine.snapshot()));
    expect(snapshot.dispatch.submissions[0].contacts).toEqual(given);
    const restarted = createEngine(specFleet(), { clock, snapshot });
    expect(restarted.poll().map((m) => m.contact)).toEqual(given);
    engine.report(out[0]!.messageId, { status: 'sent' });
    expect(engine.takeOutcomes()[0]!.contact).toEqual(given[0]);
  });

  it('keep a contact with fields of its own as the caller made it', () => {
    const { engine } = setup(0);
    const own = { ...contact(1), requestId: 'r-1' };
    engine.submit({ businessId: 1, typeId: 10, contacts: [contact(0), own] });
    const out = engine.poll();
    expect(out[1]!.contact).toBe(own);
  });

  it('are used once the queue holds packContactsFrom contacts', () => {
    const { engine } = setup(5);
    const first = contacts(5);
    const second = contacts(2);
    engine.submit({ businessId: 1, typeId: 10, contacts: first });
    engine.submit({ businessId: 1, typeId: 10, contacts: second });
    const out = engine.poll();
    const of = (submissionId: string, index: number) => out.find((m) => m.submissionId === submissionId && m.index === index)!.contact;
    expect(of('s1', 0)).toBe(first[0]);
    expect(of('s2', 0)).not.toBe(second[0]);
    expect(of('s2', 0)).toEqual(second[0]);
  });

  it('refuse a bad threshold', () => {
    expect(() => setup(-1)).toThrow(/packContactsFrom/);
  });
});

describe('a fleet change with messages in flight', () => {
  it('pauses the number that sent a failed message, wherever the new fleet puts it', () => {
    const { engine } = setup();
    engine.submit({ businessId: 1, typeId: 10, contacts: contacts(3) });
    const out = engine.poll();
    const fleet = specFleet();
    // The same numbers in another order, so their slots change.
    const business = fleet.businesses[0]!;
    engine.replaceFleet({ ...fleet, businesses: [{ ...business, numbers: [...business.numbers].reverse() }] });
    const sender = out[0]!.phone;
    expect(engine.report(out[0]!.messageId, { status: 'failed', action: { kind: 'number-out' } })).toEqual({ ok: true, effect: 'failover' });
    const paused = engine
      .numbers()
      .filter((n) => n.status === 'paused')
      .map((n) => n.phone);
    expect(paused).toEqual([sender]);
  });
});

function catchError(call: () => unknown): unknown {
  try {
    call();
  } catch (error) {
    return error;
  }
  return undefined;
}
