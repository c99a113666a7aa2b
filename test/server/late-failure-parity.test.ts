/**
 * One error table, two paths: for every code the table knows, a failure the provider reports later
 * (a status webhook, late-failures.ts) does to the fleet and to the contact what the same code in
 * the send's answer does (the engine's `report`): the same template or number taken out or rested,
 * and the same fate for the contact (ends, a contact retry, or goes again without one).
 */
import { describe, expect, it } from 'vitest';
import { CHANNEL_ERRORS, ManualClock, createEngine, type Engine, type OutgoingMessage, type Submission } from '../../src/index.js';
import { lateFailures } from '../../src/server/late-failures.js';
import { NumberIncidents } from '../../src/server/number-incidents.js';
import type { ServerContact } from '../../src/server/contacts.js';
import type { TrackedMessage } from '../../src/server/tracked-messages.js';
import { testFleet } from './helpers.js';

const silent = { error: () => {}, warn: () => {}, info: () => {} } as never;
type Fate = 'end' | 'retry' | 'again';

function sendOne(maxRetries: number): { engine: Engine; clock: ManualClock; m: OutgoingMessage } {
  const clock = new ManualClock(1_000_000);
  const engine = createEngine(testFleet(), { clock });
  const contact = { phone: '5511987650001', variables: ['Ana'], id: 7, requestId: 'r-1', companyId: 1, costCenterId: 0 };
  engine.submit({ businessId: 1, typeId: 10, campaignId: 3, maxRetries, retryInterval: 1_000, contacts: [contact] });
  const [m] = engine.poll();
  return { engine, clock, m: m! };
}

/** What the fleet looks like: templates and numbers out, with the time their pause ends. */
function fleetState(engine: Engine) {
  return {
    templates: engine
      .templates()
      .filter((t) => t.status !== 'active')
      .map((t) => [t.id, t.status, t.pausedUntil ?? null]),
    numbers: engine
      .numbers()
      .filter((n) => n.status !== 'active')
      .map((n) => [n.phone, n.pausedUntil ?? null]),
  };
}

describe('a code in the send’s answer and the same code by webhook', () => {
  it.each(CHANNEL_ERRORS.map((e) => [e.code, e.action.kind] as const))('%i (%s): the same fleet change and the same fate for the contact', (code) => {
    for (const maxRetries of [0, 1]) {
      // The send's answer.
      const answered = sendOne(maxRetries);
      const r = answered.engine.report(answered.m.messageId, { status: 'failed', code, refused: true });
      if (!r.ok) throw new Error('report refused');
      const syncFate: Fate = r.effect === 'failed' || r.effect === 'expired' ? 'end' : r.effect === 'retry-scheduled' ? 'retry' : 'again';

      // The same code by webhook, after the send was accepted.
      const later = sendOne(maxRetries);
      later.engine.report(later.m.messageId, { status: 'sent' });
      const resubmitted: Submission[] = [];
      const act = lateFailures({
        engine: later.engine,
        clock: later.clock,
        log: silent,
        incidents: new NumberIncidents(silent, later.clock),
        resubmit: (s) => void resubmitted.push(s),
        retryPending: () => {},
      });
      const m = later.m;
      const tracked: TrackedMessage = {
        contact: m.contact as ServerContact,
        campaignId: m.campaignId ?? 0,
        from: m.phone,
        text: m.text,
        retryIndex: m.retryIndex,
        sentAt: later.clock.now(),
        again: { businessId: m.businessId, typeId: m.typeId, templateId: m.templateId, campaignId: m.campaignId ?? null, maxRetries: m.maxRetries, retryInterval: m.retryInterval, followUps: 0 },
      };
      act(tracked, m.messageId, code);
      const next = resubmitted[0];
      const lateFate: Fate = next === undefined ? 'end' : (next.retriesUsed ?? 0) > 0 ? 'retry' : 'again';

      expect(lateFate, `fate of ${code} with max_retries ${maxRetries}`).toBe(syncFate);
      expect(fleetState(later.engine), `fleet after ${code}`).toEqual(fleetState(answered.engine));
      if (next !== undefined) {
        // Sent again as the contact it was: its id, values, campaign and rules.
        expect(next).toMatchObject({ businessId: 1, typeId: 10, campaignId: 3, maxRetries, retryInterval: 1_000 });
        expect(next.contacts[0]).toMatchObject({ phone: '5511987650001', variables: ['Ana'], id: 7, requestId: 'r-1' });
      }
    }
  });
});
