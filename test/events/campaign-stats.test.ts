import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { campaignStatisticsPayload, countProblems, emptyCounts, type Admission, type CampaignCounts } from '../../src/events/campaign-counts.js';
import { CampaignStatistics, type CampaignRow, type ContactRow } from '../../src/events/campaign-stats.js';
import { CampaignBatchSchema, CampaignStatisticsSchema } from '../../src/events/schemas/campaign.js';
import { HSM_STATUSES, type HsmStatus } from '../../src/events/schemas/hsm.js';
import { validatePayload } from '../../src/events/validate.js';
import { NO_PROGRESS, observe } from '../../src/events/status-merge.js';
import { Reference } from './campaign-model.js';
import { T0, expectRefusedOrValid, seededRandom } from './helpers.js';

/** The progress bits of these statuses. */
function observeAll(...statuses: HsmStatus[]): number {
  return statuses.reduce((p, status) => observe(p, { status }), NO_PROGRESS);
}

type Feed =
  | { kind: 'admit'; campaignId: number; contactId: string; admission: Admission }
  | {
      kind: 'status';
      campaignId: number;
      contactId: string;
      retryIndex: number | null;
      status: HsmStatus;
      failureCode?: number;
      blocklistResponse?: boolean;
      retrying?: boolean;
      at: number;
    }
  | { kind: 'range'; campaignId: number; first: number; count: number };

/** The failure window of these tests (the reports' times straddle it). */
const WINDOW_MS = 1_000;

/** Contact ids: some only reported one by one, some (integers) also admitted by range. */
const CONTACT_IDS = ['c1', 'c2', '1', '2', '3', '4', '5', '6'];

const arbFeed: fc.Arbitrary<Feed> = fc.oneof(
  fc.record({
    kind: fc.constant('admit' as const),
    campaignId: fc.constantFrom(1, 2),
    contactId: fc.constantFrom(...CONTACT_IDS),
    admission: fc.constantFrom<Admission>('accepted', 'accepted', 'accepted', 'invalid-phone', 'invalid-data', 'duplicated', 'blocked', 'already-sent', 'does-not-exist'),
  }),
  fc.record({
    kind: fc.constant('status' as const),
    campaignId: fc.constantFrom(1, 2),
    contactId: fc.constantFrom(...CONTACT_IDS),
    retryIndex: fc.constantFrom(null, null, null, 0, 1),
    status: fc.constantFrom(...HSM_STATUSES),
    failureCode: fc.constantFrom(131026, 131000),
    blocklistResponse: fc.boolean(),
    retrying: fc.boolean(),
    // Out of order in time too: a report may say an earlier time than the one before it.
    at: fc.constantFrom(T0, T0 + 500, T0 + WINDOW_MS, T0 + 2_500),
  }),
  // Blocks of two ids: whole repeats and neighbours, never a partial overlap.
  fc.record({ kind: fc.constant('range' as const), campaignId: fc.constantFrom(1, 2), first: fc.constantFrom(1, 3, 5), count: fc.constant(2) }),
);

function feed(s: CampaignStatistics, f: Feed): void {
  if (f.kind === 'admit') s.admit(f.campaignId, f.contactId, f.admission);
  else if (f.kind === 'range') s.admitAccepted(f.campaignId, f.first, f.count);
  else s.recordStatus(f);
}

/** The feeds with every range written out as one admission per id (what the reference reads). */
function expand(feeds: readonly Feed[]): Feed[] {
  return feeds.flatMap((f) =>
    f.kind !== 'range' ? [f] : Array.from({ length: f.count }, (_, i): Feed => ({ kind: 'admit', campaignId: f.campaignId, contactId: String(f.first + i), admission: 'accepted' })),
  );
}

function feedAll(feeds: readonly Feed[], options: ConstructorParameters<typeof CampaignStatistics>[0] = {}): CampaignStatistics {
  const s = new CampaignStatistics({ failureWindowMs: WINDOW_MS, ...options });
  s.registerCampaign({ campaignId: 1, name: 'one', createdAt: T0 });
  s.registerCampaign({ campaignId: 2, name: 'two', createdAt: T0 });
  for (const f of feeds) feed(s, f);
  return s;
}

/** Reference: the model (docs/events.md) written out plainly, fed the same reports one by one. */
function reference(all: readonly Feed[], campaignId: number): CampaignCounts {
  const ref = new Reference(WINDOW_MS);
  for (const f of expand(all)) {
    if (f.campaignId !== campaignId) continue;
    if (f.kind === 'admit') ref.admit(f.contactId, f.admission);
    else if (f.kind === 'status') ref.record(f);
  }
  return ref.counts();
}

describe('campaign statistics', () => {
  it('counts a small campaign by the documented definitions', () => {
    const s = feedAll([
      { kind: 'admit', campaignId: 1, contactId: 'a', admission: 'accepted' },
      { kind: 'admit', campaignId: 1, contactId: 'b', admission: 'invalid-phone' },
      { kind: 'admit', campaignId: 1, contactId: 'c', admission: 'accepted' },
      { kind: 'admit', campaignId: 1, contactId: 'd', admission: 'accepted' },
      { kind: 'admit', campaignId: 1, contactId: 'e', admission: 'invalid-data' },
      { kind: 'status', campaignId: 1, contactId: 'a', retryIndex: null, status: 'READ', at: T0 },
      { kind: 'status', campaignId: 1, contactId: 'c', retryIndex: null, status: 'FAILED', failureCode: 131000, retrying: true, at: T0 },
    ]);
    // A FAILED the server sends again leaves the contact remaining.
    expect(s.counts(1)).toMatchObject({ total: 5, invalidPhone: 1, invalidData: 1, sent: 1, delivered: 1, read: 1, failed: 0, processed: 3, remaining: 2 });
    // Its retry is delivered: sent.
    s.recordStatus({ campaignId: 1, contactId: 'c', retryIndex: 0, status: 'DEVICE', at: T0 });
    expect(s.counts(1)).toMatchObject({ failed: 0, sent: 2, delivered: 2 });
    // A final FAILED "does not exist" code counts apart from failures.
    s.recordStatus({ campaignId: 1, contactId: 'd', retryIndex: null, status: 'FAILED', failureCode: 131026, at: T0 });
    expect(s.counts(1)).toMatchObject({ doesNotExist: 1, remaining: 0 });
    // Settled contacts never change stage: a failure after delivery changes no count.
    s.recordStatus({ campaignId: 1, contactId: 'a', retryIndex: null, status: 'FAILED', failureCode: 131000, at: T0 });
    expect(s.counts(1)).toMatchObject({ sent: 2, failed: 0, doesNotExist: 1, remaining: 0 });
  });

  it('a SENT stays remaining for the failure window, then settles as sent; a failure within it counts instead', () => {
    const s = feedAll([]);
    for (const id of ['a', 'b', 'c']) {
      s.admit(1, id, 'accepted');
      s.recordStatus({ campaignId: 1, contactId: id, retryIndex: null, status: 'SENT', at: T0 });
    }
    expect(s.counts(1)).toMatchObject({ total: 3, sent: 0, remaining: 3 });
    expect(s.nextWakeAt()).toBe(0); // changes to batch; the window's end comes after
    s.takeBatch(T0, seededRandom(1));
    expect(s.nextWakeAt()).toBe(T0 + WINDOW_MS);
    // Within the window: a failure the server does not send again counts as failed.
    s.recordStatus({ campaignId: 1, contactId: 'a', retryIndex: null, status: 'FAILED', failureCode: 131000, at: T0 + WINDOW_MS - 1 });
    // Delivered: sent at once.
    s.recordStatus({ campaignId: 1, contactId: 'b', retryIndex: null, status: 'DEVICE', at: T0 + 10 });
    expect(s.statistics(1, T0 + WINDOW_MS - 1)).toMatchObject({ status: 'RUNNING', count_failed: 1, count_sent: 1, count_remaining: 1 });
    // The window passes: c settles as sent; a failure reported after it changes no count.
    expect(s.statistics(1, T0 + WINDOW_MS)).toMatchObject({ status: 'FINISHED', count_failed: 1, count_sent: 2, count_remaining: 0 });
    s.recordStatus({ campaignId: 1, contactId: 'c', retryIndex: null, status: 'FAILED', failureCode: 131000, at: T0 + WINDOW_MS + 1 });
    s.recordStatus({ campaignId: 1, contactId: 'c', retryIndex: null, status: 'READ', at: T0 + WINDOW_MS + 2 });
    expect(s.counts(1)).toMatchObject({ failed: 1, sent: 2, delivered: 2, read: 1, remaining: 0 });
  });

  it('a status after the window settles its contact first, whether or not the window was settled by a call', () => {
    const s = feedAll([]);
    s.admit(1, 'a', 'accepted');
    s.recordStatus({ campaignId: 1, contactId: 'a', retryIndex: null, status: 'SENT', at: T0 });
    s.recordStatus({ campaignId: 1, contactId: 'a', retryIndex: null, status: 'FAILED', failureCode: 131000, at: T0 + WINDOW_MS });
    expect(s.counts(1)).toMatchObject({ sent: 1, failed: 0, remaining: 0 });
  });

  it('rows and snapshots of an older version (no stage) keep the counts they had', () => {
    const row = { campaignId: 1, name: 'c', createdAt: T0, lastSent: null, dirty: false };
    const old: ContactRow[] = [
      [1, 'a', 32, -1, observeAll('SENT')],
      [1, 'b', 32, -1, observeAll('SENT', 'FAILED')],
      [1, 'c', 32, -1, observeAll('ENQUEUED')],
      [1, 'd', 1, -1, 0],
    ];
    const s = CampaignStatistics.fromRows({ lastBatchAt: null, campaigns: [row], contacts: old });
    expect(s.counts(1)).toMatchObject({ total: 4, sent: 1, failed: 1, invalidPhone: 1, remaining: 1 });
    const snap = CampaignStatistics.restore({ version: 2, lastBatchAt: null, campaigns: [{ ...row, contacts: old.map(([, ...c]) => c) }] });
    expect(snap.counts(1)).toEqual(s.counts(1));
  });

  it('a report delivered twice in a row changes nothing the second time (property)', () => {
    fc.assert(
      fc.property(fc.array(arbFeed, { maxLength: 40 }), fc.array(fc.boolean(), { maxLength: 40 }), (feeds, twice) => {
        const a = feedAll(feeds);
        const b = feedAll(feeds.flatMap((f, i) => (twice[i] === true ? [f, f] : [f])));
        for (const id of [1, 2]) expect(b.counts(id)).toEqual(a.counts(id));
      }),
    );
  });

  it('counts equal the reference, add up, and equal a recount, after every report (property)', () => {
    fc.assert(
      fc.property(fc.array(arbFeed, { maxLength: 60 }), (feeds) => {
        const s = feedAll([]);
        const done: Feed[] = [];
        for (const f of feeds) {
          feed(s, f);
          done.push(f);
          for (const id of [1, 2]) {
            const counts = s.counts(id);
            expect(countProblems(counts)).toEqual([]);
            expect(counts).toEqual(s.recount(id));
          }
        }
        for (const id of [1, 2]) expect(s.counts(id)).toEqual(reference(done, id));
      }),
    );
  });

  it('snapshot and restore keep the counts (property)', () => {
    fc.assert(
      fc.property(fc.array(arbFeed, { maxLength: 40 }), (feeds) => {
        const a = feedAll(feeds);
        const b = CampaignStatistics.restore(JSON.parse(JSON.stringify(a.snapshot())), { failureWindowMs: WINDOW_MS });
        for (const id of [1, 2]) expect(b.counts(id)).toEqual(a.counts(id));
        expect(b.nextWakeAt()).toBe(a.nextWakeAt());
      }),
    );
  });

  it('rows written from takeChanges rebuild the same statistics, settling included (property)', () => {
    type Step = { kind: 'feed'; f: Feed } | { kind: 'take' } | { kind: 'batch'; advance: number };
    const arbStep: fc.Arbitrary<Step> = fc.oneof(
      { weight: 6, arbitrary: arbFeed.map((f): Step => ({ kind: 'feed', f })) },
      { weight: 2, arbitrary: fc.constant<Step>({ kind: 'take' }) },
      { weight: 1, arbitrary: fc.constantFrom(0, 500, 5_000).map((advance): Step => ({ kind: 'batch', advance })) },
    );
    fc.assert(
      fc.property(fc.array(arbStep, { maxLength: 60 }), fc.boolean(), (steps, fullFirst) => {
        const options = { batchIntervalMs: 0, retainContactsMs: 1_000, trackChanges: true, failureWindowMs: WINDOW_MS };
        const s = feedAll([], options);
        const random = seededRandom(1);
        let now = T0;
        // The database: campaign rows by id, contact rows by campaign and id; settled campaigns lose their contacts.
        const campaigns = new Map<number, CampaignRow>();
        const contacts = new Map<string, ContactRow>();
        let lastBatchAt: number | null = null;
        const write = (full: boolean) => {
          const c = s.takeChanges({ full });
          lastBatchAt = c.lastBatchAt;
          for (const id of c.settled) for (const key of [...contacts.keys()]) if (key.startsWith(`${id}:`)) contacts.delete(key);
          for (const row of c.campaigns) campaigns.set(row.campaignId, row);
          for (const row of c.contacts) contacts.set(`${row[0]}:${row[1]}`, row);
        };
        if (fullFirst) write(true);
        for (const step of steps) {
          if (step.kind === 'feed') feed(s, step.f);
          else if (step.kind === 'take') write(false);
          else {
            now += step.advance;
            s.takeBatch(now, random);
          }
        }
        write(false);
        const back = CampaignStatistics.fromRows({ lastBatchAt, campaigns: campaigns.values(), contacts: contacts.values() }, options);
        for (const id of [1, 2]) {
          expect(back.counts(id)).toEqual(s.counts(id));
          expect(back.recount(id)).toEqual(back.counts(id));
        }
        expect(back.nextWakeAt()).toBe(s.nextWakeAt());
        // The same state, whatever order the rows came in.
        const sorted = (x: CampaignStatistics) => {
          const snap = x.snapshot();
          return { ...snap, campaigns: [...snap.campaigns].sort((a, b) => a.campaignId - b.campaignId) };
        };
        expect(sorted(back)).toEqual(sorted(s));
      }),
    );
  });

  it('a range admits a request at the cost of one range, and refuses a partial overlap', () => {
    const s = feedAll([]);
    s.admitAccepted(1, 100, 1_000_000);
    s.admit(1, '150', 'invalid-phone');
    s.recordStatus({ campaignId: 1, contactId: '151', retryIndex: null, status: 'DEVICE', at: T0 });
    expect(s.counts(1)).toMatchObject({ total: 1_000_000, invalidPhone: 1, sent: 1, remaining: 999_998 });
    const snapshot = s.snapshot();
    expect(snapshot.campaigns[0]?.accepted).toEqual([100, 1_000_100]);
    expect(snapshot.campaigns[0]?.contacts).toHaveLength(2);
    s.admitAccepted(1, 100, 10);
    expect(s.counts(1).total).toBe(1_000_000);
    expect(() => s.admitAccepted(1, 1_000_000, 200)).toThrow(/admitAccepted\(first\)/);
    expect(() => s.admitAccepted(1, -1, 2)).toThrow(/admitAccepted\(first\)/);
    expect(s.counts(1).total).toBe(1_000_000);
  });

  it('countProblems catches counts that do not add up', () => {
    const c = { ...emptyCounts(), total: 3, processed: 2, remaining: 1, sent: 1, read: 1, delivered: 0 };
    const paths = countProblems(c).map((p) => p.path);
    expect(paths).toContain('$.processed');
    expect(paths).toContain('$.read');
    // count_invalid_data is a processed bucket; delivered is at most sent (an expired contact has no funnel).
    expect(countProblems({ ...emptyCounts(), total: 2, processed: 2, invalidData: 1, sent: 1 })).toEqual([]);
    expect(countProblems({ ...emptyCounts(), total: 1, processed: 1, expired: 1, delivered: 1 }).map((p) => p.path)).toEqual(['$.delivered']);
  });

  describe('batches', () => {
    it('emits only changed campaigns, once per change, at most once per interval', () => {
      const random = seededRandom(3);
      const s = new CampaignStatistics({ batchIntervalMs: 60_000, failureWindowMs: 0 });
      s.registerCampaign({ campaignId: 1, name: 'one', createdAt: T0 });
      s.registerCampaign({ campaignId: 2, name: 'two', createdAt: T0 });
      expect(s.nextWakeAt()).toBeNull();
      expect(s.takeBatch(T0, random)).toBeNull();

      s.admit(1, 'a', 'accepted');
      expect(s.nextWakeAt()).toBe(0);
      const first = s.takeBatch(T0, random);
      expect(first && validatePayload(CampaignBatchSchema, first)).toEqual([]);
      expect(first?.campaigns.map((c) => c.campaign_id)).toEqual([1]);
      expect(first?.campaigns[0]).toMatchObject({ status: 'RUNNING', count_total: 1, count_remaining: 1, datetime: '2025-01-01T09:00:00.000-03:00' });
      expect(s.nextWakeAt()).toBeNull();

      // A duplicate changes nothing: no batch.
      s.admit(1, 'a', 'accepted');
      expect(s.takeBatch(T0 + 60_000, random)).toBeNull();

      s.recordStatus({ campaignId: 1, contactId: 'a', retryIndex: null, status: 'SENT', at: T0 });
      s.admit(2, 'x', 'blocked');
      expect(s.nextWakeAt()).toBe(T0 + 60_000);
      expect(s.takeBatch(T0 + 59_999, random)).toBeNull();
      const second = s.takeBatch(T0 + 60_000, random);
      expect(second?.campaigns.map((c) => [c.campaign_id, c.status])).toEqual([
        [1, 'FINISHED'],
        [2, 'FINISHED'],
      ]);
      expect(second?.event_id).not.toBe(first?.event_id);
      expect(validatePayload(CampaignBatchSchema, second)).toEqual([]);
    });

    it('every batch payload validates and its counts add up (property)', () => {
      fc.assert(
        fc.property(fc.array(arbFeed, { minLength: 1, maxLength: 40 }), (feeds) => {
          const s = feedAll(feeds);
          const batch = s.takeBatch(T0, seededRandom(1));
          expect(batch).not.toBeNull();
          expect(validatePayload(CampaignBatchSchema, batch)).toEqual([]);
        }),
      );
    });

    it('refuses an undeclared campaign', () => {
      expect(() => new CampaignStatistics().admit(9, 'a', 'accepted')).toThrow(/registerCampaign/);
    });

    it('refuses, with ArgumentError, what would make a batch fail its schema', () => {
      const s = new CampaignStatistics({ batchIntervalMs: 0 });
      expect(() => s.registerCampaign({ campaignId: 1.5, name: 'c', createdAt: T0 })).toThrow(/registerCampaign\(campaignId\)/);
      expect(() => s.registerCampaign({ campaignId: 1, name: 'c', createdAt: Number.NaN })).toThrow(/registerCampaign\(createdAt\)/);
      expect(() => s.registerCampaign({ campaignId: 1, name: 7 as never, createdAt: T0 })).toThrow(/registerCampaign\(name\)/);
      s.registerCampaign({ campaignId: 1, name: 'c', createdAt: T0 });
      expect(() => s.admit(1, 'a', 'rejected' as never)).toThrow(/admit\(admission\)/);
      expect(() => s.recordStatus({ campaignId: 1, contactId: 'a', retryIndex: null, status: 'DELIVERED' as never, at: T0 })).toThrow(/recordStatus\(status\)/);
      expect(() => s.recordStatus({ campaignId: 1, contactId: 'a', retryIndex: null, status: 'FAILED', failureCode: 1.5, at: T0 })).toThrow(/recordStatus\(failureCode\)/);
      expect(() => s.recordStatus({ campaignId: 1, contactId: 'a', retryIndex: null, status: 'FAILED', retrying: 'yes' as never, at: T0 })).toThrow(/recordStatus\(retrying\)/);
      expect(() => s.recordStatus({ campaignId: 1, contactId: 'a', retryIndex: null, status: 'SENT', at: Number.NaN })).toThrow(/recordStatus\(at\)/);
      expect(() => new CampaignStatistics({ failureWindowMs: -1 })).toThrow(/failureWindowMs/);
      s.admit(1, 'a', 'accepted');
      // A bad time is refused before anything changes: the next good call still sends the change.
      expect(() => s.takeBatch(Number.NaN, seededRandom(1))).toThrow(/takeBatch\(now\)/);
      const batch = s.takeBatch(T0, seededRandom(1));
      expect(batch?.campaigns.map((c) => [c.campaign_id, c.count_total])).toEqual([[1, 1]]);
      expect(validatePayload(CampaignBatchSchema, batch)).toEqual([]);
    });

    it('campaignStatisticsPayload: any one bad field is an ArgumentError naming it, or a valid object', () => {
      const counts = { ...emptyCounts(), total: 3, processed: 2, sent: 2, delivered: 1, remaining: 1 };
      const input = { campaign: { campaignId: 4, name: 'Black Friday', createdAt: T0 }, counts, now: T0 + 1000 };
      const refused = expectRefusedOrValid(input, CampaignStatisticsSchema, (i) => campaignStatisticsPayload(i.campaign, i.counts, i.now));
      expect(refused).toBeGreaterThan(100);
    });
  });
});

describe('settling finished campaigns', () => {
  it('keeps the counts, drops the contacts, and ignores late reports of forgotten contacts, admissions included', () => {
    const day = 86_400_000;
    const stats = new CampaignStatistics({ batchIntervalMs: 0, retainContactsMs: 7 * day, failureWindowMs: 0 });
    stats.registerCampaign({ campaignId: 1, name: 'c', createdAt: 0 });
    for (const id of ['a', 'b']) {
      stats.admit(1, id, 'accepted');
      stats.recordStatus({ campaignId: 1, contactId: id, status: 'SENT', retryIndex: null, at: 0 });
    }
    const random = { randomBytes: (n: number) => new Uint8Array(n).fill(7) };
    expect(stats.takeBatch(1000, random)).not.toBeNull();
    const final = stats.counts(1);
    expect(final.remaining).toBe(0);
    stats.takeBatch(1000 + 7 * day, random); // quiet for the retention: settled
    const snapshot = JSON.parse(JSON.stringify(stats.snapshot()));
    expect(snapshot.campaigns[0].contacts).toEqual([]);
    expect(snapshot.campaigns[0].settledCounts).toEqual(final);
    stats.recordStatus({ campaignId: 1, contactId: 'a', status: 'READ', retryIndex: null, at: 1000 + 7 * day });
    expect(stats.lateIgnored).toBe(1);
    expect(stats.counts(1)).toEqual(final);
    stats.admit(1, 'a', 'accepted'); // a replayed admission cannot be told from a new contact
    expect(stats.lateIgnored).toBe(2);
    expect(stats.counts(1)).toEqual(final);
    expect(stats.recount(1)).toEqual(stats.counts(1));
    const restored = CampaignStatistics.restore(JSON.parse(JSON.stringify(stats.snapshot())));
    expect(restored.counts(1)).toEqual(stats.counts(1));
  });
});
