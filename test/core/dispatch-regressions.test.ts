/**
 * Reproductions of dispatch-queue bugs found through the public API: a queue entry that outlived
 * its submission (expired by deadline, or settled by a late report) pointed at whatever submission
 * took its place next, so a contact went out with another type's template and `poll` crashed.
 * Each sequence is the reported one, step by step.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock, createEngine, type Engine, type OutgoingMessage } from '../../src/index.js';

const HOUR = 3_600_000;

/** One number; type 10 uses template 100 "Bill {{1}}", type 20 uses template 200 "Welcome {{1}}". */
export function twoTypeFleet() {
  return {
    businesses: [
      {
        id: 1,
        name: 'Acme',
        numbers: [{ phone: '5511990000001', throughputPerHour: 1000, messagingLimit24h: 10_000, status: 'active' }],
        templateTypes: [
          { id: 10, name: 'billing', templateIds: [100] },
          { id: 20, name: 'welcome', templateIds: [200] },
        ],
      },
    ],
    templates: [
      { id: 100, name: 'bill', text: 'Bill {{1}}', businessIds: [1], status: 'active' },
      { id: 200, name: 'welcome', text: 'Welcome {{1}}', businessIds: [1], status: 'active' },
    ],
  };
}

let phoneSeq = 0;
const contacts = (n: number) => Array.from({ length: n }, () => ({ phone: String(5521900000000 + phoneSeq++), variables: [`v${phoneSeq}`] }));

function restart(engine: Engine, clock: ManualClock): Engine {
  return createEngine(twoTypeFleet(), { clock, snapshot: JSON.parse(JSON.stringify(engine.snapshot())) });
}

/** Every message carries a template of its own type, rendered with its own contact's value. */
function expectOwnTemplate(messages: readonly OutgoingMessage[]): void {
  for (const m of messages) {
    expect(m.templateId).toBe(m.typeId === 10 ? 100 : 200);
    expect(m.text).toBe(`${m.typeId === 10 ? 'Bill' : 'Welcome'} ${m.contact.variables![0]}`);
  }
}

function expectCountsAgree(engine: Engine): void {
  const stats = engine.stats();
  const queued = engine.queueStatus(1, 10).queued + engine.queueStatus(1, 20).queued;
  expect(queued).toBe(stats.queued);
  const { submitted, ...states } = stats;
  expect(Object.values(states).reduce((a, b) => a + b, 0)).toBe(submitted);
}

describe('dispatch queue regressions', () => {
  it('1. a deadline-expired entry does not carry a later submission of another type (no restart)', () => {
    const clock = new ManualClock(0);
    const engine = createEngine(twoTypeFleet(), { clock });
    const handed: OutgoingMessage[] = [];
    engine.submit({ businessId: 1, typeId: 20, campaignId: 1, contacts: contacts(2) }); // s1
    engine.submit({ businessId: 1, typeId: 20, campaignId: 1, contacts: contacts(1), deadline: 1000 }); // s2
    engine.submit({ businessId: 1, typeId: 10, campaignId: 1, contacts: contacts(1) }); // s3
    handed.push(...engine.poll({ limit: 2 }));
    engine.submit({ businessId: 1, typeId: 20, campaignId: 1, contacts: contacts(1) }); // s4
    handed.push(...engine.poll({ limit: 1 }));
    clock.advance(HOUR);
    expect(engine.report('s1.0.0', { status: 'sent' })).toMatchObject({ ok: true, effect: 'sent' });
    const s5 = engine.submit({ businessId: 1, typeId: 10, campaignId: 1, contacts: contacts(1) });
    handed.push(...engine.poll({ limit: 1 }));
    handed.push(...engine.poll());
    expectOwnTemplate(handed);
    expect(handed.filter((m) => m.submissionId === s5.submissionId)).toHaveLength(1);
    expect(engine.stats()).toMatchObject({ submitted: 6, expired: 1, sent: 1, inFlight: 4, queued: 0 });
    expectCountsAgree(engine);
  });

  it('2. after a restart, expired entries are not restored as someone else’s contacts', () => {
    const clock = new ManualClock(0);
    let engine = createEngine(twoTypeFleet(), { clock });
    engine.submit({ businessId: 1, typeId: 10, campaignId: 1, contacts: contacts(3), deadline: 1000 });
    clock.advance(HOUR);
    expect(engine.poll()).toHaveLength(0);
    engine.submit({ businessId: 1, typeId: 10, campaignId: 2, contacts: contacts(3) });
    engine = restart(engine, clock);
    expect(engine.stats().queued).toBe(3);
    expect(engine.queueStatus(1, 10).queued).toBe(3);
    const handed = engine.poll();
    expect(handed).toHaveLength(3);
    expectOwnTemplate(handed);
    expect(engine.stats()).toMatchObject({ submitted: 6, expired: 3, inFlight: 3, queued: 0 });
    expectCountsAgree(engine);
  });

  it('3. a late report across restarts does not leave an entry that strands later contacts', () => {
    const clock = new ManualClock(0);
    let engine = createEngine(twoTypeFleet(), { clock });
    engine.submit({ businessId: 1, typeId: 10, contacts: contacts(1) }); // s1: X
    const [x] = engine.poll();
    engine.submit({ businessId: 1, typeId: 10, contacts: contacts(1) }); // s2: Z
    engine = restart(engine, clock);
    expect(engine.report(x!.messageId, { status: 'sent' })).toMatchObject({ ok: true, effect: 'sent' });
    expect(engine.submissionStatus('s1')).toMatchObject({ sent: 1, queued: 0, inFlight: 0 });
    engine.submit({ businessId: 1, typeId: 20, contacts: contacts(1) }); // s3: Y
    engine = restart(engine, clock);
    const handed = engine.poll();
    expectOwnTemplate(handed);
    expect(handed.map((m) => m.submissionId).sort()).toEqual(['s2', 's3']);
    expect(engine.stats()).toMatchObject({ submitted: 3, sent: 1, inFlight: 2, queued: 0 });
    expectCountsAgree(engine);
  });
});

describe('the API around the queue', () => {
  it('a contact keeps one id over hand-outs and retries; messages say which contact they carry', () => {
    const clock = new ManualClock(0);
    const engine = createEngine(twoTypeFleet(), { clock });
    engine.submit({ businessId: 1, typeId: 10, maxRetries: 1, contacts: contacts(2) });
    const [first] = engine.poll({ limit: 1 });
    expect(first).toMatchObject({ messageId: 's1.0.0', contactId: 's1.0', submissionId: 's1', index: 0 });
    expect(engine.report(first!.messageId, { status: 'failed', code: 131000 })).toMatchObject({ effect: 'retry-scheduled' });
    clock.advance(HOUR);
    const again = engine.poll().find((m) => m.index === 0)!;
    expect(again).toMatchObject({ messageId: 's1.0.1', contactId: 's1.0', isRetry: true, retryIndex: 0 });
    engine.report(again.messageId, { status: 'sent' });
    expect(engine.takeOutcomes()).toEqual([expect.objectContaining({ contactId: 's1.0', messageId: 's1.0.1', state: 'sent' })]);
  });

  it('after a restart, a late report for a finished submission is already-final and its status still answers', () => {
    const clock = new ManualClock(0);
    let engine = createEngine(twoTypeFleet(), { clock });
    engine.submit({ businessId: 1, typeId: 10, contacts: contacts(1) });
    const [m] = engine.poll();
    engine.report(m!.messageId, { status: 'sent' });
    engine = restart(engine, clock);
    expect(engine.report(m!.messageId, { status: 'sent' })).toEqual({ ok: false, reason: 'already-final' });
    expect(engine.report('s1.0.7', { status: 'failed', code: 131000 })).toEqual({ ok: false, reason: 'already-final' });
    expect(engine.report('s9.0.0', { status: 'sent' })).toEqual({ ok: false, reason: 'unknown-message' });
    expect(engine.submissionStatus('s1')).toMatchObject({ submissionId: 's1', finished: true, submitted: 1, sent: 1 });
    expect(() => engine.submissionStatus('s9')).toThrow(/Unknown submission "s9"/);
  });

  it('a report with an outcome the engine does not know is refused with the field named', () => {
    const engine = createEngine(twoTypeFleet(), { clock: new ManualClock(0) });
    engine.submit({ businessId: 1, typeId: 10, contacts: contacts(1) });
    const [m] = engine.poll();
    expect(() => engine.report(m!.messageId, { status: 'delivered' } as never)).toThrow(/report\(outcome\.status\).*"delivered"/s);
    expect(engine.stats().inFlight).toBe(1);
  });

  it('readers see an overdue contact as expired without a poll', () => {
    const clock = new ManualClock(0);
    const engine = createEngine(twoTypeFleet(), { clock });
    engine.setTemplateStatus(100, 'disabled');
    const { submissionId } = engine.submit({ businessId: 1, typeId: 10, deadline: 5000, contacts: contacts(2) });
    expect(engine.nextWakeAt()).toBe(5000); // blocked for good, but the deadline will end them
    expect(engine.submissionStatus(submissionId)).toMatchObject({ queued: 2, blocked: 'no-template' });
    clock.set(5000);
    expect(engine.stats()).toMatchObject({ queued: 0, expired: 2 });
    expect(engine.submissionStatus(submissionId)).toMatchObject({ finished: true, expired: 2 });
    expect(engine.queueStatus(1, 10)).toEqual({ queued: 0, waitingRetry: 0 });
    expect(engine.nextWakeAt()).toBeNull();
  });

  it('nextWakeAt says now only when poll can hand out something', () => {
    const clock = new ManualClock(0);
    const engine = createEngine(twoTypeFleet(), { clock });
    engine.submit({ businessId: 1, typeId: 10, contacts: contacts(1000) });
    expect(engine.poll({ limit: 5000 })).toHaveLength(1000);
    engine.submit({ businessId: 1, typeId: 20, contacts: contacts(3) }); // the number is out for the hour
    const wake = engine.nextWakeAt()!;
    expect(wake).toBeGreaterThan(0);
    expect(engine.poll()).toHaveLength(0);
    expect(engine.queueStatus(1, 20)).toMatchObject({ queued: 3, blocked: 'no-capacity', retryAt: wake });
    clock.set(wake);
    expect(engine.nextWakeAt()).toBe(wake);
    expect(engine.poll().length).toBeGreaterThan(0);
  });

  it('queueStatus counts contacts waiting for a retry', () => {
    const clock = new ManualClock(0);
    const engine = createEngine(twoTypeFleet(), { clock });
    engine.submit({ businessId: 1, typeId: 10, maxRetries: 2, retryInterval: 60_000, contacts: contacts(2) });
    for (const m of engine.poll()) engine.report(m.messageId, { status: 'failed', code: 131000 });
    expect(engine.queueStatus(1, 10)).toEqual({ queued: 0, waitingRetry: 2 });
    expect(engine.nextWakeAt()).toBe(60_000);
    clock.set(60_000);
    expect(engine.queueStatus(1, 10)).toEqual({ queued: 2, waitingRetry: 0 });
  });

  it('a snapshot of version 1 (one entry per queued contact) still restores, every contact once', () => {
    const clock = new ManualClock(0);
    const engine = createEngine(twoTypeFleet(), { clock });
    engine.submit({ businessId: 1, typeId: 10, campaignId: 3, contacts: contacts(4) });
    engine.poll({ limit: 1 });
    const v2 = JSON.parse(JSON.stringify(engine.snapshot()));
    const d = v2.dispatch;
    const v1 = {
      ...v2,
      version: 1,
      dispatch: {
        nextSeq: d.nextSeq,
        counts: d.counts,
        submissions: d.submissions.map(({ fresh: _f, back: _b, ...s }: Record<string, unknown>) => s),
        queues: [
          {
            businessId: 1,
            typeId: 10,
            flows: [
              {
                key: 'c3',
                weight: 1,
                entries: [
                  [1, 1],
                  [1, 2],
                  [1, 3],
                ],
              },
            ],
          },
        ],
        retries: [],
        outcomes: [],
      },
    };
    const restored = createEngine(twoTypeFleet(), { clock, snapshot: v1 });
    expect(restored.stats()).toMatchObject({ submitted: 4, queued: 4, inFlight: 0 });
    const handed = restored.poll();
    expect(handed.map((m) => m.contactId)).toEqual(['s1.0', 's1.1', 's1.2', 's1.3']);
    expectOwnTemplate(handed);
  });

  it('a snapshot whose dispatch section is damaged is refused with every problem, nothing loaded', () => {
    const clock = new ManualClock(0);
    const engine = createEngine(twoTypeFleet(), { clock });
    engine.submit({ businessId: 1, typeId: 10, contacts: contacts(2) });
    const snap = JSON.parse(JSON.stringify(engine.snapshot()));
    snap.dispatch.submissions[0].state = '09';
    snap.dispatch.submissions[0].back = [7];
    snap.dispatch.retries = [[42, 0, 0, 10]];
    let error: unknown;
    try {
      createEngine(twoTypeFleet(), { clock, snapshot: snap });
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ name: 'SnapshotError' });
    const paths = (error as { problems: { path: string }[] }).problems.map((p) => p.path);
    expect(paths).toEqual(['$.dispatch.submissions[0].state', '$.dispatch.submissions[0].back', '$.dispatch.retries[0]']);
  });
});
