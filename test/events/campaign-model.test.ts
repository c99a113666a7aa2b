/**
 * The campaign statistics model (campaign-model.ts) run against the in-process aggregator, with
 * the durable server's way of keeping it: rows written after every step (`takeChanges`) and a
 * restart from them (`fromRows`), or from a snapshot (`restore`).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CampaignStatistics, type CampaignRow, type CampaignStatisticsOptions, type ContactRow } from '../../src/events/campaign-stats.js';
import { CAMPAIGN, WINDOW, campaignCommands, newModel, type StatsUnderTest } from './campaign-model.js';
import { T0, seededRandom } from './helpers.js';

function inProcess(): StatsUnderTest {
  const options: CampaignStatisticsOptions = { batchIntervalMs: 0, failureWindowMs: WINDOW, trackChanges: true };
  let s = new CampaignStatistics(options);
  s.registerCampaign({ campaignId: CAMPAIGN, name: 'model', createdAt: T0 });
  const random = seededRandom(5);
  // The database the durable server writes after every step.
  const campaigns = new Map<number, CampaignRow>();
  const contacts = new Map<string, ContactRow>();
  let lastBatchAt: number | null = null;
  const write = (): void => {
    const c = s.takeChanges();
    lastBatchAt = c.lastBatchAt;
    for (const id of c.settled) for (const key of [...contacts.keys()]) if (key.startsWith(`${id}:`)) contacts.delete(key);
    for (const row of c.campaigns) campaigns.set(row.campaignId, row);
    for (const row of c.contacts) contacts.set(`${row[0]}:${row[1]}`, row);
  };
  write();
  return {
    admit: async (id, admission) => {
      // Accepted contacts come as ranges (the server's way) or one by one.
      if (admission === 'accepted' && Number(id) % 2 === 0) s.admitAccepted(CAMPAIGN, Number(id), 1);
      else s.admit(CAMPAIGN, id, admission);
      write();
    },
    record: async (change) => {
      s.recordStatus(change);
      write();
    },
    countsAt: async (now) => {
      const p = s.statistics(CAMPAIGN, now);
      write();
      const counts = s.counts(CAMPAIGN);
      expect(counts).toEqual(s.recount(CAMPAIGN));
      expect(p.status).toBe(counts.total > 0 && counts.remaining === 0 ? 'FINISHED' : 'RUNNING');
      expect([p.count_sent, p.count_remaining, p.count_invalid_data]).toEqual([counts.sent, counts.remaining, counts.invalidData]);
      return counts;
    },
    batch: async (now) => {
      s.takeBatch(now, random);
      write();
    },
    restart: async (kind) => {
      const before = s;
      s =
        kind === 'rows'
          ? CampaignStatistics.fromRows({ lastBatchAt, campaigns: campaigns.values(), contacts: contacts.values() }, options)
          : CampaignStatistics.restore(JSON.parse(JSON.stringify(before.snapshot())), options);
      expect(s.counts(CAMPAIGN)).toEqual(before.counts(CAMPAIGN));
      expect(s.nextWakeAt()).toBe(before.nextWakeAt());
    },
  };
}

describe('campaign statistics model', () => {
  it('counts equal the model after every step of random campaigns, restarts included (model-based, 1,000 cases)', async () => {
    await fc.assert(
      fc.asyncProperty(campaignCommands, async (commands) => {
        await fc.asyncModelRun(() => ({ model: newModel(T0), real: { stats: inProcess() } }), commands);
      }),
      { numRuns: 1_000 },
    );
  });
});
