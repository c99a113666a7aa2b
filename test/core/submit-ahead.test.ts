/**
 * `Submission.ahead`: contacts taken over from a host that stopped go ahead of the contacts of
 * their flow never handed out; the flow keeps its turn among the others; a bad value is refused
 * with its path.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { createEngine } from '../../src/engine.js';

const fleet = {
  businesses: [
    {
      id: 1,
      name: 'A',
      numbers: [{ phone: '5511990000001', throughputPerHour: 100_000, messagingLimit24h: 100_000, status: 'active' }],
      templateTypes: [{ id: 10, name: 't', templateIds: [100] }],
    },
  ],
  templates: [{ id: 100, name: 'x', text: 'Hi', businessIds: [1], status: 'active' }],
};
const contacts = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => ({ phone: `55219${prefix}${String(i).padStart(4, '0')}` }));

describe('Submission.ahead', () => {
  it('goes before the flow’s contacts never handed out, and the flow keeps its turn with the others', () => {
    const engine = createEngine(fleet, { clock: new ManualClock(0) });
    engine.submit({ businessId: 1, typeId: 10, campaignId: 1, contacts: contacts('1000', 5) });
    engine.submit({ businessId: 1, typeId: 10, campaignId: 2, contacts: contacts('2000', 5) });
    engine.submit({ businessId: 1, typeId: 10, campaignId: 1, ahead: true, contacts: contacts('3000', 3) });
    const phones = engine.poll({ limit: 8 }).map((m) => m.contact.phone.slice(5, 9));
    // Campaigns 1 and 2 alternate; within campaign 1 the contacts taken over come first.
    expect(phones).toEqual(['3000', '2000', '3000', '2000', '3000', '2000', '1000', '2000']);
  });

  it('refuses what is not a boolean, naming the path', () => {
    const engine = createEngine(fleet, { clock: new ManualClock(0) });
    expect(() => engine.submit({ businessId: 1, typeId: 10, ahead: 'yes' as unknown as boolean, contacts: contacts('1000', 1) })).toThrow(/\$\.ahead.*true or false.*"yes"/s);
  });
});
