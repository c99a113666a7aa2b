import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { campaignStatisticsPayload, countProblems, emptyCounts, type Admission, type CampaignCounts } from '../../src/events/campaign-counts.js';
import { CampaignStatistics, type CampaignRow, type ContactRow } from '../../src/events/campaign-stats.js';
import { CampaignBatchSchema, CampaignStatisticsSchema } from '../../src/events/schemas/campaign.js';
import { HSM_STATUSES, type HsmStatus } from '../../src/events/schemas/hsm.js';
import { validatePayload } from '../../src/events/validate.js';
import { T0, expectRefusedOrValid, seededRandom } from './helpers.js';

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
    }
  | { kind: 'range'; campaignId: number; first: number; count: number };

/** Contact ids: some only reported one by one, some (integers) also admitted by range. */
const CONTACT_IDS = ['c1', 'c2', '1', '2', '3', '4', '5', '6'];

const arbFeed: fc.Arbitrary<Feed> = fc.oneof(
  fc.record({
    kind: fc.constant('admit' as const),
    campaignId: fc.constantFrom(1, 2),
    contactId: fc.constantFrom(...CONTACT_IDS),
    admission: fc.constantFrom<Admission>('accepted', 'accepted', 'accepted', 'invalid-phone', 'duplicated', 'blocked', 'already-sent', 'does-not-exist'),
  }),
  fc.record({
    kind: fc.constant('status' as const),
    campaignId: fc.constantFrom(1, 2),
    contactId: fc.constantFrom(...CONTACT_IDS),
    retryIndex: fc.constantFrom(null, null, null, 0, 1),
    status: fc.constantFrom(...HSM_STATUSES),
    failureCode: fc.constantFrom(131026, 131000),
    blocklistResponse: fc.boolean(),
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
  const s = new CampaignStatistics(options);
  s.registerCampaign({ campaignId: 1, name: 'one', createdAt: T0 });
  s.registerCampaign({ campaignId: 2, name: 'two', createdAt: T0 });
  for (const f of feeds) feed(s, f);
  return s;
}

const PROGRESS: readonly HsmStatus[] = ['ENQUEUED', 'SENT', 'SERVER', 'DEVICE', 'READ', 'REPLIED'];

/** Reference: the documented definitions, written out plainly over the whole history. */
function reference(all: readonly Feed[], campaignId: number): CampaignCounts {
  const feeds = expand(all);
  const c = emptyCounts();
  const contacts = new Set(feeds.flatMap((f) => (f.campaignId === campaignId && f.kind !== 'range' ? [f.contactId] : [])));
  for (const id of contacts) {
    const mine = feeds.filter((f) => f.campaignId === campaignId && f.kind !== 'range' && f.contactId === id);
    c.total++;
    const admissions = new Set(mine.flatMap((f) => (f.kind === 'admit' ? [f.admission] : [])));
    const rejection = (['invalid-phone', 'duplicated', 'blocked', 'already-sent', 'does-not-exist'] as const).find((a) => admissions.has(a));
    if (rejection) {
      c.processed++;
      const key = { 'invalid-phone': 'invalidPhone', duplicated: 'duplicated', blocked: 'blocked', 'already-sent': 'alreadySent', 'does-not-exist': 'doesNotExist' } as const;
      c[key[rejection]]++;
      continue;
    }
    const statuses = mine.flatMap((f) => (f.kind === 'status' ? [f] : []));
    const latest = Math.max(-1, ...statuses.map((f) => f.retryIndex ?? -1));
    const last = statuses.filter((f) => (f.retryIndex ?? -1) === latest);
    const seen = new Set(last.map((f) => f.status));
    const highest = Math.max(-1, ...last.map((f) => PROGRESS.indexOf(f.status)));
    const replied = seen.has('REPLIED');
    if (!replied && seen.has('FAILED')) {
      c.processed++;
      if (last.some((f) => f.status === 'FAILED' && f.failureCode === 131026)) c.doesNotExist++;
      else c.failed++;
      continue;
    }
    if (!replied && seen.has('EXPIRED')) {
      c.processed++;
      c.expired++;
    } else if (highest >= 1) {
      c.processed++;
      c.sent++;
    } else {
      c.remaining++;
      continue;
    }
    if (highest >= 3) c.delivered++;
    if (highest >= 4) c.read++;
    if (replied) {
      c.replied++;
      if (last.some((f) => f.status === 'REPLIED' && f.blocklistResponse === true)) c.blocklistResponse++;
    }
  }
  return c;
}

/** A permutation of `list` with some elements repeated, driven by `keys`. */
function permuteWithDuplicates<T>(list: readonly T[], keys: readonly number[]): T[] {
  const extra = keys.length && list.length ? keys.slice(0, 10).map((k) => list[k % list.length] as T) : [];
  return [...list, ...extra]
    .map((x, i) => ({ x, k: keys[i % Math.max(1, keys.length)] ?? i, i }))
    .sort((a, b) => a.k - b.k || b.i - a.i)
    .map((e) => e.x);
}

describe('campaign statistics', () => {
  it('counts a small campaign by the documented definitions', () => {
    const s = feedAll([
      { kind: 'admit', campaignId: 1, contactId: 'a', admission: 'accepted' },
      { kind: 'admit', campaignId: 1, contactId: 'b', admission: 'invalid-phone' },
      { kind: 'admit', campaignId: 1, contactId: 'c', admission: 'accepted' },
      { kind: 'admit', campaignId: 1, contactId: 'd', admission: 'accepted' },
      { kind: 'status', campaignId: 1, contactId: 'a', retryIndex: null, status: 'READ' },
      { kind: 'status', campaignId: 1, contactId: 'c', retryIndex: null, status: 'FAILED', failureCode: 131000 },
    ]);
    expect(s.counts(1)).toMatchObject({ total: 4, invalidPhone: 1, sent: 1, delivered: 1, read: 1, failed: 1, processed: 3, remaining: 1 });
    // The failed contact is retried and delivered: the latest attempt decides.
    s.recordStatus({ campaignId: 1, contactId: 'c', retryIndex: 0, status: 'DEVICE' });
    expect(s.counts(1)).toMatchObject({ failed: 0, sent: 2, delivered: 2 });
    // A FAILED "does not exist" code counts apart from failures.
    s.recordStatus({ campaignId: 1, contactId: 'd', retryIndex: null, status: 'FAILED', failureCode: 131026 });
    expect(s.counts(1)).toMatchObject({ doesNotExist: 1, remaining: 0 });
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

  it('any permutation or duplication of the same reports yields the same counts (property)', () => {
    fc.assert(
      fc.property(fc.array(arbFeed, { maxLength: 60 }), fc.array(fc.nat(1000), { maxLength: 80 }), (feeds, keys) => {
        const a = feedAll(feeds);
        const b = feedAll(permuteWithDuplicates(feeds, keys));
        for (const id of [1, 2]) expect(b.counts(id)).toEqual(a.counts(id));
      }),
    );
  });

  it('snapshot and restore keep the counts (property)', () => {
    fc.assert(
      fc.property(fc.array(arbFeed, { maxLength: 40 }), (feeds) => {
        const a = feedAll(feeds);
        const b = CampaignStatistics.restore(JSON.parse(JSON.stringify(a.snapshot())));
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
        const options = { batchIntervalMs: 0, retainContactsMs: 1_000, trackChanges: true };
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
    s.recordStatus({ campaignId: 1, contactId: '151', retryIndex: null, status: 'SENT' });
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
  });

  describe('batches', () => {
    it('emits only changed campaigns, once per change, at most once per interval', () => {
      const random = seededRandom(3);
      const s = new CampaignStatistics({ batchIntervalMs: 60_000 });
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

      s.recordStatus({ campaignId: 1, contactId: 'a', retryIndex: null, status: 'SENT' });
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
      expect(() => s.recordStatus({ campaignId: 1, contactId: 'a', retryIndex: null, status: 'DELIVERED' as never })).toThrow(/recordStatus\(status\)/);
      expect(() => s.recordStatus({ campaignId: 1, contactId: 'a', retryIndex: null, status: 'FAILED', failureCode: 1.5 })).toThrow(/recordStatus\(failureCode\)/);
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
    const stats = new CampaignStatistics({ batchIntervalMs: 0, retainContactsMs: 7 * day });
    stats.registerCampaign({ campaignId: 1, name: 'c', createdAt: 0 });
    for (const id of ['a', 'b']) {
      stats.admit(1, id, 'accepted');
      stats.recordStatus({ campaignId: 1, contactId: id, status: 'SENT', retryIndex: null });
    }
    const random = { randomBytes: (n: number) => new Uint8Array(n).fill(7) };
    expect(stats.takeBatch(1000, random)).not.toBeNull();
    const final = stats.counts(1);
    expect(final.remaining).toBe(0);
    stats.takeBatch(1000 + 7 * day, random); // quiet for the retention: settled
    const snapshot = JSON.parse(JSON.stringify(stats.snapshot()));
    expect(snapshot.campaigns[0].contacts).toEqual([]);
    expect(snapshot.campaigns[0].settledCounts).toEqual(final);
    stats.recordStatus({ campaignId: 1, contactId: 'a', status: 'READ', retryIndex: null });
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
