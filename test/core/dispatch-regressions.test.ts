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
