/**
 * The dispatch loop under random fleets, submissions, status changes, channel outcomes (including
 * failures that trigger failover) and restarts from snapshots in the middle:
 * conservation, windows, no double send, retries bounded and numbered 0, 1, 2, …
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ManualClock, createEngine, type ContactOutcome, type Engine, type OutgoingMessage } from '../../src/index.js';
import { fleetArb } from './arbitraries.js';
import { type Send, windowViolation } from './window-check.js';

const CODES = [131000, 131026, 132015, 132016, 131048, 130429, 131049, 999];

type Step =
  | { kind: 'submit'; pool: number; contacts: number; maxRetries: number; retryMinutes: number; campaign: number; deadlineIn?: number }
  | { kind: 'poll'; limit: number }
  | { kind: 'report'; pick: number; outcome: 'sent' | 'expired' | number }
  | { kind: 'advance'; ms: number }
  | { kind: 'number'; index: number; active: boolean }
  | { kind: 'template'; index: number; status: 'active' | 'paused' | 'disabled' }
  | { kind: 'restart' };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.record(
      {
        kind: fc.constant('submit' as const),
        pool: fc.nat(),
        contacts: fc.integer({ min: 1, max: 40 }),
        maxRetries: fc.integer({ min: 0, max: 3 }),
        retryMinutes: fc.integer({ min: 0, max: 30 }),
        campaign: fc.integer({ min: 0, max: 3 }),
        deadlineIn: fc.integer({ min: 1, max: 6 * 3_600_000 }),
      },
      { requiredKeys: ['kind', 'pool', 'contacts', 'maxRetries', 'retryMinutes', 'campaign'] },
    ),
  },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('poll' as const), limit: fc.integer({ min: 1, max: 200 }) }) },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('report' as const),
      pick: fc.nat(),
      outcome: fc.oneof(fc.constant('sent' as const), fc.constant('sent' as const), fc.constant('expired' as const), fc.constantFrom(...CODES)),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 2 * 3_600_000 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('number' as const), index: fc.nat(), active: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('template' as const), index: fc.nat(), status: fc.constantFrom('active' as const, 'paused' as const, 'disabled' as const) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'restart' as const }) },
);

describe('dispatch invariants', () => {
  it('conservation, windows, no double send, bounded and numbered retries — across restarts', () => {
    fc.assert(
      fc.property(fleetArb({ perSecond: true, maxRate: 400, maxLimit24h: 3000 }), fc.array(stepArb, { minLength: 5, maxLength: 70 }), (shape, steps) => {
        const clock = new ManualClock(0);
        let engine: Engine = createEngine(shape.fleet, { clock });
        let inFlight: OutgoingMessage[] = [];
        const outcomes: ContactOutcome[] = [];
        const sends = new Map<string, Send[]>(); // per sending number
        const sentContacts = new Set<string>(); // contacts reported sent
        const handedOut = new Map<string, number>(); // hand-outs per contact key
        const maxRetries = new Map<string, number>(); // per submission
        const retryIndexes = new Map<string, (number | null)[]>(); // per contact key
        let submitted = 0;
        let phoneSeq = 0;
        const keyOf = (m: { submissionId: string; index?: number; messageId?: string }) => `${m.submissionId}.${m.index ?? m.messageId!.split('.')[1]}`;

        for (const step of steps) {
          switch (step.kind) {
            case 'submit': {
              const p = shape.pools[step.pool % shape.pools.length]!;
              const placeholders = engine.templateType(p.businessId, p.typeId)!.placeholders;
              const contacts = Array.from({ length: step.contacts }, () => ({
                phone: String(5521900000000 + phoneSeq++),
                variables: Array.from({ length: placeholders }, (_, i) => `v${i}`),
              }));
              const ticket = engine.submit({
                businessId: p.businessId,
                typeId: p.typeId,
                campaignId: step.campaign,
                maxRetries: step.maxRetries,
                retryInterval: step.retryMinutes * 60_000,
                ...(step.deadlineIn !== undefined ? { deadline: clock.now() + step.deadlineIn } : {}),
                contacts,
              });
              expect(ticket.accepted).toBe(step.contacts);
              maxRetries.set(ticket.submissionId, step.maxRetries);
              submitted += step.contacts;
              break;
            }
            case 'poll': {
              for (const m of engine.poll({ limit: step.limit })) {
                const key = keyOf(m);
                expect(sentContacts.has(key), `${key} handed out after it was sent`).toBe(false);
                handedOut.set(key, (handedOut.get(key) ?? 0) + 1);
                const list = sends.get(m.phone) ?? [];
                list.push({ at: clock.now(), count: 1 });
                sends.set(m.phone, list);
                const indexes = retryIndexes.get(key) ?? [];
                indexes.push(m.retryIndex);
                retryIndexes.set(key, indexes);
                expect(m.isRetry).toBe(m.retryIndex !== null);
                if (m.retryIndex !== null) expect(m.retryIndex).toBeLessThan(maxRetries.get(m.submissionId)!);
                expect(m.text).not.toMatch(/\{\{\d+\}\}/);
                inFlight.push(m);
              }
              break;
            }
            case 'report': {
              if (inFlight.length === 0) break;
              const [m] = inFlight.splice(step.pick % inFlight.length, 1);
              const outcome = step.outcome === 'sent' || step.outcome === 'expired' ? { status: step.outcome } : { status: 'failed' as const, code: step.outcome };
              const result = engine.report(m!.messageId, outcome);
              if (result.ok && result.effect === 'sent') sentContacts.add(keyOf(m!));
              break;
            }
            case 'advance':
              clock.advance(step.ms);
              break;
            case 'number':
              engine.setNumberStatus(shape.phones[step.index % shape.phones.length]!, step.active ? 'active' : 'paused');
              break;
            case 'template':
              engine.setTemplateStatus(shape.templateIds[step.index % shape.templateIds.length]!, step.status);
              break;
            case 'restart': {
              outcomes.push(...engine.takeOutcomes());
              const snapshot = JSON.parse(JSON.stringify(engine.snapshot()));
              engine = createEngine(shape.fleet, { clock, snapshot });
              // Hand-outs in flight at the restart are pending again; their messages are not reported.
              inFlight = [];
              break;
            }
          }
          // Conservation at every step.
          const s = engine.stats();
          expect(s.submitted).toBe(submitted);
          expect(s.queued + s.waitingRetry + s.inFlight + s.sent + s.failed + s.expired + s.rejected).toBe(submitted);
        }
        outcomes.push(...engine.takeOutcomes());

        // Each contact reaches at most one terminal outcome, and the outcomes match the counts.
        const terminal = new Map<string, string>();
        for (const o of outcomes) {
          const key = keyOf(o);
          expect(terminal.has(key), `${key} ended twice`).toBe(false);
          terminal.set(key, o.state);
        }
        const s = engine.stats();
        expect(terminal.size).toBe(s.sent + s.failed + s.expired + s.rejected);
        expect([...terminal.values()].filter((x) => x === 'sent').length).toBe(s.sent);

        // Retries are numbered 0, 1, 2… in order, never beyond maxRetries (null for first tries and failovers).
        for (const [key, indexes] of retryIndexes) {
          const retries = indexes.filter((i): i is number => i !== null);
          retries.forEach((r, i) => expect(r).toBeGreaterThanOrEqual(i === 0 ? 0 : retries[i - 1]!));
          expect(new Set(retries).size).toBeLessThanOrEqual(maxRetries.get(key.split('.')[0]!)!);
        }

        // No number exceeded a window.
        for (const b of shape.fleet.businesses) {
          for (const n of b.numbers) {
            expect(windowViolation(sends.get(n.phone) ?? [], { perHour: n.throughputPerHour, per24h: n.messagingLimit24h, perSecond: n.messagesPerSecond })).toBeUndefined();
          }
        }
      }),
      { numRuns: 80 },
    );
  });

  it('determinism: the same fleet, submissions, outcomes and clock give the same messages', () => {
    fc.assert(
      fc.property(fleetArb(), fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 30 }), fc.integer({ min: 0, max: 600_000 })), { maxLength: 15 }), (shape, plan) => {
        const run = () => {
          const clock = new ManualClock(0);
          const engine = createEngine(shape.fleet, { clock });
          const log: string[] = [];
          plan.forEach(([pool, n, dt], i) => {
            const p = shape.pools[pool % shape.pools.length]!;
            const k = engine.templateType(p.businessId, p.typeId)!.placeholders;
            engine.submit({
              businessId: p.businessId,
              typeId: p.typeId,
              campaignId: i % 3,
              contacts: Array.from({ length: n }, (_, j) => ({ phone: String(5531900000000 + i * 100 + j), variables: Array(k).fill('x') })),
            });
            clock.advance(dt);
            for (const m of engine.poll()) {
              log.push(`${m.messageId}:${m.phone}:${m.templateId}`);
              engine.report(m.messageId, (i + m.templateId) % 3 === 0 ? { status: 'failed', code: 131000 } : { status: 'sent' });
            }
          });
          return log;
        };
        expect(run()).toEqual(run());
      }),
    );
  });
});
