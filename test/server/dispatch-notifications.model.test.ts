/**
 * Model test of the dispatch notifications (dispatch-notifications.ts) over a real engine: whatever
 * the order of hand-outs, answers (sent, failed, expired), outcomes taken, time passing (a deadline
 * ending contacts that wait) and restarts from a snapshot (the engine's, with the notifications'
 * `endsNotified`), each contact's end is notified exactly once, and the record of ends notified
 * is empty once every outcome was taken (it holds only the ends of the moment).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { OutgoingMessage, SendOutcome } from '../../src/core/dispatch/types.js';
import type { Engine } from '../../src/core/engine.js';
import type { FleetDescription } from '../../src/core/fleet.js';
import type { EngineSnapshot } from '../../src/core/snapshot.js';
import { createEngine } from '../../src/engine.js';
import type { FleetDispatch } from '../../src/server/ports/server-backend.js';
import { serverContact, type ServerContact } from '../../src/server/contacts.js';
import { dispatchNotifications, type DispatchNotifications } from '../../src/server/dispatch-notifications.js';
import type { Notifier } from '../../src/server/notifier.js';

const FLEET: FleetDescription = {
  businesses: [
    {
      id: 1,
      name: 'A',
      numbers: [
        { phone: '5511900000010', throughputPerHour: 1_000_000, messagingLimit24h: 10_000_000 },
        { phone: '5511900000011', throughputPerHour: 1_000_000, messagingLimit24h: 10_000_000 },
      ],
      templateTypes: [{ id: 10, name: 'billing', templateIds: [100] }],
    },
  ],
  templates: [{ id: 100, name: 'a', text: 'Hi {{1}}', businessIds: [1] }],
};

/** One process: nothing to do for a fleet (as backends/local.ts). */
const ONE_PROCESS: FleetDispatch = {
  handedOut: () => {},
  handOutEnded: () => {},
  outcomes: () => {},
  retryIndexOf: (o) => o.retryIndex,
  about: (_contact, fn) => fn(),
  roomFreed: () => {},
  resubmit: () => {},
};

/** A notifier that counts each contact's end notifications (SENT, a FAILED not retried, EXPIRED, a rejection). */
function countingNotifier(ends: Map<number, string[]>): Notifier {
  const end = (id: number, what: string) => ends.set(id, [...(ends.get(id) ?? []), what]);
  const notifier = {
    sent: (m: OutgoingMessage) => end(serverContact(m.contact).id, 'SENT'),
    retryPending: () => {},
    hsm: (contact: ServerContact, _campaignId: number, _retryIndex: number | null, _now: number, event: { status: string }, extra?: { retrying?: boolean }) => {
      if (event.status === 'FAILED' && extra?.retrying === true) return;
      end(contact.id, event.status);
    },
    reject: (_companyId: number, _campaignId: number, id: number) => end(id, 'REJECTED'),
  };
  return notifier as unknown as Notifier;
}

type Action =
  | { readonly kind: 'poll'; readonly limit: number }
  | { readonly kind: 'answer'; readonly pick: number; readonly outcome: SendOutcome['status'] }
  | { readonly kind: 'outcomes' }
  | { readonly kind: 'advance'; readonly ms: number }
  | { readonly kind: 'restart' };

const action: fc.Arbitrary<Action> = fc.oneof(
  fc.record({ kind: fc.constant('poll' as const), limit: fc.integer({ min: 1, max: 4 }) }),
  fc.record({ kind: fc.constant('answer' as const), pick: fc.nat(), outcome: fc.constantFrom<SendOutcome['status']>('sent', 'failed', 'failed', 'expired') }),
  fc.record({ kind: fc.constant('outcomes' as const) }),
  fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 4_000 }) }),
  fc.record({ kind: fc.constant('restart' as const) }),
);

const answerOf = (status: SendOutcome['status']): SendOutcome => (status === 'failed' ? { status, reason: 'test' } : { status });

describe('dispatch notifications (model)', () => {
  it("property: each contact's end is notified once, across restarts, and no record of it stays", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 0, max: 2 }), fc.array(action, { maxLength: 60 }), (count, maxRetries, actions) => {
        const clock = new ManualClock(0);
        const ends = new Map<number, string[]>();
        const notifier = countingNotifier(ends);
        const make = (endsNotified?: readonly string[]): DispatchNotifications => dispatchNotifications({ notifier, clock, fleet: ONE_PROCESS, ...(endsNotified ? { endsNotified } : {}) });
        let engine: Engine = createEngine(FLEET, { clock });
        let notifications = make();
        const contacts: ServerContact[] = Array.from({ length: count }, (_, i) => ({ phone: `551198000000${i}`, variables: ['x'], id: i + 1, requestId: 'r', companyId: 1, costCenterId: 0 }));
        engine.submit({ businessId: 1, typeId: 10, campaignId: 1, maxRetries, retryInterval: 1_000, deadline: 10_000, contacts });
        let inFlight: OutgoingMessage[] = [];
        const answer = (m: OutgoingMessage, outcome: SendOutcome) => {
          const result = engine.report(m.messageId, outcome);
          if (result.ok) notifications.result(m, outcome, result);
        };
        const takeOutcomes = () => notifications.outcomes(engine.takeOutcomes());
        for (const a of actions) {
          switch (a.kind) {
            case 'poll':
              inFlight.push(...engine.poll({ limit: a.limit }));
              break;
            case 'answer': {
              const m = inFlight.splice(a.pick % Math.max(1, inFlight.length), 1)[0];
              if (m !== undefined) answer(m, answerOf(a.outcome));
              break;
            }
            case 'outcomes':
              takeOutcomes();
              break;
            case 'advance':
              clock.advance(a.ms);
              break;
            case 'restart': {
              // What a snapshot file keeps: the engine (with the outcomes not taken) and the ends notified.
              const snapshot = JSON.parse(JSON.stringify(engine.snapshot())) as EngineSnapshot;
              const kept = notifications.endsNotified();
              engine = createEngine(FLEET, { clock, snapshot });
              notifications = make(kept);
              inFlight = []; // the channel's answers to the old process are lost: those contacts go again
              break;
            }
          }
        }
        // Everything left ends: the rest sent, time past the deadline for contacts waiting a retry.
        const open = () => {
          const s = engine.stats();
          return s.queued + s.waitingRetry + s.inFlight;
        };
        for (let turn = 0; turn < 100 && (open() > 0 || inFlight.length > 0); turn++) {
          for (const m of inFlight.splice(0)) answer(m, { status: 'sent' });
          inFlight.push(...engine.poll({ limit: 100 }));
          takeOutcomes();
          clock.advance(1_000);
        }
        expect(open()).toBe(0);
        takeOutcomes();
        for (const c of contacts) expect(ends.get(c.id), `contact ${c.id}: ${JSON.stringify(ends.get(c.id))}`).toHaveLength(1);
        expect(notifications.endsNotified()).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });
});
