import { describe, expect, it } from 'vitest';
import { ManualClock, type SubmissionError, createEngine, isSubmissionError, type Submission } from '../../src/index.js';
import { specFleet } from './arbitraries.js';

const HOUR = 3_600_000;
const contact = (i: number) => ({ phone: `55119${String(80000000 + i)}`, variables: [`Name${i}`, `R$ ${i}`] });

function setup() {
  const clock = new ManualClock(0);
  const engine = createEngine(specFleet(), { clock });
  return { clock, engine };
}

function submit(engine: ReturnType<typeof setup>['engine'], n: number, extra: Partial<Submission> = {}) {
  return engine.submit({ businessId: 1, typeId: 10, contacts: Array.from({ length: n }, (_, i) => contact(i)), ...extra });
}

describe('submit and poll', () => {
  it('hands out pairs exactly as assign does, with rendered text', () => {
    const a = setup();
    const b = setup();
    submit(a.engine, 6);
    const polled = a.engine.poll();
    const assigned = b.engine.assign(1, 10, 6).assignments;
    expect(polled.map((m) => ({ phone: m.phone, templateId: m.templateId }))).toEqual(assigned);
    expect(polled[0]).toMatchObject({ messageId: 's1.0.0', isRetry: false, retryIndex: null, text: 'Hi Name0, your bill of R$ 0 is due.' });
    expect(polled[1]!.text).toBe('Name1, R$ 1 is due tomorrow.');
  });

  it('never hands out more than the windows permit, and says when more can go', () => {
    const { engine, clock } = setup();
    submit(engine, 5000);
    expect(engine.poll({ limit: 100_000 })).toHaveLength(3000);
    expect(engine.poll()).toHaveLength(0);
    expect(engine.queueStatus(1, 10)).toEqual({ queued: 2000, waitingRetry: 0, blocked: 'no-capacity', retryAt: 3600 });
    expect(engine.nextWakeAt()).toBe(3600);
    clock.set(3600);
    expect(engine.poll()).toHaveLength(3);
  });

  it('respects the poll limit', () => {
    const { engine } = setup();
    submit(engine, 50);
    expect(engine.poll({ limit: 20 })).toHaveLength(20);
    expect(engine.nextWakeAt()).toBe(0);
    expect(engine.poll({ limit: 100 })).toHaveLength(30);
    expect(engine.nextWakeAt()).toBe(null);
  });

  it('rejects contacts that can never go, and counts them', () => {
    const { engine } = setup();
    const ticket = engine.submit({
      businessId: 1,
      typeId: 10,
      contacts: [contact(1), { phone: '123', variables: ['a', 'b'] }, { phone: '5511987654321', variables: ['only one'] }, { phone: '5511987654322', variables: ['a', ''] }],
    });
    expect(ticket.accepted).toBe(1);
    expect(ticket.rejected.map((r) => [r.index, r.reason, r.problem.path])).toEqual([
      [1, 'invalid_phone', '$.contacts[1].phone'],
      [2, 'invalid_variables', '$.contacts[2].variables'],
      [3, 'invalid_variables', '$.contacts[3].variables[1]'],
    ]);
    expect(engine.stats()).toMatchObject({ submitted: 4, queued: 1, rejected: 3 });
  });
});

describe('bad submissions', () => {
  const { engine } = setup();
  it.each([
    ['unknown business', { businessId: 9 }, '$.businessId'],
    ['unknown type', { typeId: 99 }, '$.typeId'],
    ['negative retries', { maxRetries: -1 }, '$.maxRetries'],
    ['fractional interval', { retryInterval: 1.5 }, '$.retryInterval'],
    ['empty contacts', { contacts: [] }, '$.contacts'],
    ['zero weight', { weight: 0 }, '$.weight'],
  ])('%s is refused with its path, and nothing is queued', (_n, patch, path) => {
    const before = engine.stats();
    let thrown: unknown;
    try {
      engine.submit({ businessId: 1, typeId: 10, contacts: [contact(1)], ...patch });
    } catch (e) {
      thrown = e;
    }
    expect(isSubmissionError(thrown)).toBe(true);
    expect((thrown as SubmissionError).problems.map((p) => p.path)).toContain(path);
    expect(engine.stats()).toEqual(before);
  });
});

describe('retries', () => {
  it('retries a failed contact after retryInterval, up to maxRetries, with retry_index 0, 1, 2', () => {
    const { engine, clock } = setup();
    submit(engine, 1, { maxRetries: 3, retryInterval: 60_000 });
    const seen: [boolean, number | null][] = [];
    for (let attempt = 0; attempt < 4; attempt++) {
      const [m] = engine.poll();
      seen.push([m!.isRetry, m!.retryIndex]);
      engine.report(m!.messageId, { status: 'failed', code: 131000 });
      expect(engine.poll()).toHaveLength(0);
      clock.advance(60_000);
    }
    expect(seen).toEqual([
      [false, null],
      [true, 0],
      [true, 1],
      [true, 2],
    ]);
    expect(engine.stats()).toMatchObject({ failed: 1, waitingRetry: 0 });
    const [outcome] = engine.takeOutcomes();
    expect(outcome).toMatchObject({ state: 'failed', code: 131000, reason: 'WhatsApp, 131000, Something went wrong', messageId: 's1.0.3' });
  });

  it('waits at least what the code requires (131049: 24 h)', () => {
    const { engine, clock } = setup();
    submit(engine, 1, { maxRetries: 1, retryInterval: 60_000 });
    const [m] = engine.poll();
    expect(engine.report(m!.messageId, { status: 'failed', code: 131049 })).toEqual({ ok: true, effect: 'retry-scheduled', retryAt: 24 * HOUR });
    clock.set(24 * HOUR - 1);
    expect(engine.poll()).toHaveLength(0);
    clock.set(24 * HOUR);
    expect(engine.poll()).toHaveLength(1);
  });

  it('gives up at once on 131026', () => {
    const { engine } = setup();
    submit(engine, 1, { maxRetries: 5 });
    const [m] = engine.poll();
    expect(engine.report(m!.messageId, { status: 'failed', code: 131026 })).toEqual({ ok: true, effect: 'failed' });
    expect(engine.stats()).toMatchObject({ failed: 1 });
  });
});

describe('failover of in-flight messages', () => {
  it('132015 pauses the template and sends the message again on another, without using a retry', () => {
    const { engine } = setup();
    submit(engine, 1, { maxRetries: 0 });
    const [m] = engine.poll();
    expect(m!.templateId).toBe(100);
    expect(engine.report(m!.messageId, { status: 'failed', code: 132015 })).toEqual({ ok: true, effect: 'failover' });
    expect(engine.templates().find((t) => t.id === 100)).toMatchObject({ status: 'paused', pausedUntil: 3 * HOUR });
    const [again] = engine.poll();
    expect(again).toMatchObject({ templateId: 101, isRetry: false, retryIndex: null, messageId: 's1.0.1' });
  });

  it('a number taken out (131048) leaves the pool and the message goes through another', () => {
    const { engine } = setup();
    submit(engine, 1);
    const [m] = engine.poll();
    engine.report(m!.messageId, { status: 'failed', code: 131048 });
    expect(engine.throughput(1, 10)).toBe(2000);
    const [again] = engine.poll();
    expect(again!.phone).not.toBe(m!.phone);
  });

  it('130429 rests the number for a moment and requeues the message at the head', () => {
    const { engine, clock } = setup();
    submit(engine, 2);
    const [first] = engine.poll({ limit: 1 });
    engine.report(first!.messageId, { status: 'failed', code: 130429 });
    const next = engine.poll({ limit: 1 });
    expect(next[0]!.contact).toBe(first!.contact); // head of the queue
    expect(next[0]!.phone).not.toBe(first!.phone); // the number rests
    clock.advance(1000);
    expect(engine.throughput(1, 10)).toBe(3000);
  });

  it('the host can override the action for a failure', () => {
    const { engine } = setup();
    submit(engine, 1);
    const [m] = engine.poll();
    engine.report(m!.messageId, { status: 'failed', reason: 'number banned', action: { kind: 'number-out' } });
    expect(engine.numbers().find((n) => n.phone === m!.phone)!.status).toBe('paused');
  });
});

describe('dead ends and deadlines', () => {
  it('a type with no active template waits and says so; nextWakeAt is the timed resume or null', () => {
    const { engine, clock } = setup();
    engine.setTemplateStatus(100, 'disabled');
    engine.setTemplateStatus(101, 'paused', { until: HOUR });
    const { submissionId } = submit(engine, 3);
    expect(engine.poll()).toEqual([]);
    expect(engine.submissionStatus(submissionId)).toMatchObject({ queued: 3, blocked: 'no-template', retryAt: HOUR });
    expect(engine.nextWakeAt()).toBe(HOUR);
    engine.setTemplateStatus(101, 'disabled');
    expect(engine.poll()).toEqual([]);
    expect(engine.nextWakeAt()).toBe(null);
    engine.setTemplateStatus(101, 'active');
    expect(engine.nextWakeAt()).toBe(clock.now());
    expect(engine.poll()).toHaveLength(3);
  });

  it('contacts still waiting at the deadline end expired instead of going late', () => {
    const { engine, clock } = setup();
    submit(engine, 3500, { deadline: 30 * 60_000 });
    expect(engine.poll({ limit: 10_000 })).toHaveLength(3000);
    expect(engine.nextWakeAt()).toBe(3600);
    clock.set(30 * 60_000);
    expect(engine.poll()).toEqual([]);
    expect(engine.stats()).toMatchObject({ queued: 0, expired: 500, inFlight: 3000 });
    expect(engine.takeOutcomes().filter((o) => o.state === 'expired')).toHaveLength(500);
  });
});

describe('restart', () => {
  it('sends each pending contact exactly once more and never re-sends one reported sent', () => {
    const { engine, clock } = setup();
    submit(engine, 3010, { maxRetries: 1, retryInterval: 1000 });
    const out = engine.poll({ limit: 10_000 }); // 3000 in flight, 10 queued
    for (const m of out.slice(0, 2000)) engine.report(m.messageId, { status: 'sent' });
    for (const m of out.slice(2000, 2100)) engine.report(m.messageId, { status: 'failed', code: 131000 });
    const snapshot = JSON.parse(JSON.stringify(engine.snapshot()));
    const restarted = createEngine(specFleet(), { clock, snapshot });
    expect(restarted.stats()).toEqual({ ...engine.stats(), queued: 910, inFlight: 0 });
    clock.set(HOUR);
    const again = restarted.poll({ limit: 10_000 });
    const indexes = again.map((m) => Number(m.messageId.split('.')[1]));
    expect(new Set(indexes).size).toBe(indexes.length);
    expect(indexes.filter((i) => i < 2000)).toEqual([]);
    expect(again).toHaveLength(1010);
    // A late report for a hand-out from before the restart settles its contact.
    expect(restarted.report(out[2500]!.messageId, { status: 'sent' })).toEqual({ ok: true, effect: 'sent' });
    expect(restarted.report(out[2500]!.messageId, { status: 'sent' })).toEqual({ ok: false, reason: 'already-final' });
    expect(restarted.report('s99.0.0', { status: 'sent' })).toEqual({ ok: false, reason: 'unknown-message' });
  });
});
