import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { NO_PROGRESS, StatusMerger, attemptKey, currentStatus, observe, reached, statusRank } from '../../src/events/status-merge.js';
import { HSM_STATUSES, type HsmStatus } from '../../src/events/schemas/hsm.js';

const arbStatus = fc.constantFrom(...HSM_STATUSES);

function finalOf(statuses: readonly HsmStatus[]): HsmStatus | null {
  return currentStatus(statuses.reduce((p, status) => observe(p, { status }), NO_PROGRESS));
}

describe('status merge', () => {
  it('follows ENQUEUED < SENT < SERVER < DEVICE < READ < REPLIED', () => {
    expect(finalOf(['ENQUEUED', 'SENT', 'SERVER', 'DEVICE', 'READ'])).toBe('READ');
    expect(finalOf(['READ', 'DEVICE'])).toBe('READ');
    expect(finalOf(['SENT', 'READ'])).toBe('READ');
    expect(finalOf(['REPLIED', 'READ', 'SENT'])).toBe('REPLIED');
  });

  it('FAILED and EXPIRED end a message; a reply outranks both', () => {
    expect(finalOf(['FAILED', 'DEVICE'])).toBe('FAILED');
    expect(finalOf(['DEVICE', 'FAILED'])).toBe('FAILED');
    expect(finalOf(['READ', 'EXPIRED', 'DEVICE'])).toBe('EXPIRED');
    expect(finalOf(['EXPIRED', 'FAILED'])).toBe('FAILED');
    expect(finalOf(['FAILED', 'REPLIED'])).toBe('REPLIED');
    expect(finalOf([])).toBeNull();
  });

  it('fills in skipped statuses: READ without DEVICE was delivered', () => {
    const p = observe(NO_PROGRESS, { status: 'READ' });
    expect(reached(p, 'DEVICE')).toBe(true);
    expect(reached(p, 'SENT')).toBe(true);
    expect(reached(p, 'REPLIED')).toBe(false);
    expect(reached(NO_PROGRESS, 'ENQUEUED')).toBe(false);
  });

  it('is independent of order and duplication (property)', () => {
    fc.assert(
      fc.property(fc.array(arbStatus, { maxLength: 12 }), fc.array(fc.nat(), { maxLength: 30 }), (statuses, picks) => {
        // A permutation with duplicates of the same set of notifications.
        const shuffled = [...statuses].sort(() => 0);
        for (let i = shuffled.length - 1; i > 0; i--) {
          const j = (picks[i % Math.max(1, picks.length)] ?? 0) % (i + 1);
          [shuffled[i], shuffled[j]] = [shuffled[j] as HsmStatus, shuffled[i] as HsmStatus];
        }
        const duplicated = [...shuffled, ...picks.flatMap((k) => (statuses.length ? [statuses[k % statuses.length] as HsmStatus] : []))];
        expect(finalOf(duplicated)).toBe(finalOf(statuses));
      }),
    );
  });

  it('never moves a message back (property)', () => {
    fc.assert(
      fc.property(fc.array(arbStatus, { maxLength: 15 }), (statuses) => {
        let p = NO_PROGRESS;
        let rank = -1;
        for (const status of statuses) {
          p = observe(p, { status });
          const now = currentStatus(p);
          expect(now).not.toBeNull();
          const r = statusRank(now as HsmStatus);
          expect(r).toBeGreaterThanOrEqual(rank);
          rank = r;
        }
      }),
    );
  });

  it('StatusMerger is idempotent by event_id and by (message, status)', () => {
    const m = new StatusMerger();
    const key = attemptKey('m1', null);
    expect(m.apply({ eventId: 'e1', messageKey: key, status: 'SENT' })).toEqual({ kind: 'advanced', from: null, to: 'SENT' });
    expect(m.apply({ eventId: 'e1', messageKey: key, status: 'SENT' })).toEqual({ kind: 'duplicate-event', status: 'SENT' });
    expect(m.apply({ eventId: 'e2', messageKey: key, status: 'SENT' })).toEqual({ kind: 'duplicate-status', status: 'SENT' });
    expect(m.apply({ eventId: 'e3', messageKey: key, status: 'READ' })).toEqual({ kind: 'advanced', from: 'SENT', to: 'READ' });
    expect(m.apply({ eventId: 'e4', messageKey: key, status: 'DEVICE' })).toEqual({ kind: 'late', status: 'READ' });
    expect(m.status(key)).toBe('READ');
    // A retry is a separate attempt: its statuses do not merge with the first try's.
    m.apply({ eventId: 'e5', messageKey: attemptKey('m1', 0), status: 'FAILED' });
    expect(m.status(key)).toBe('READ');
    expect(m.status(attemptKey('m1', 0))).toBe('FAILED');
    expect(m.size).toBe(2);
    m.forget(key);
    expect(m.status(key)).toBeNull();
    expect(m.apply({ eventId: 'e1', messageKey: key, status: 'SENT' }).kind).toBe('advanced');
  });

  it('StatusMerger final statuses do not depend on arrival order (property)', () => {
    const arbNotes = fc.uniqueArray(fc.record({ message: fc.constantFrom('a', 'b', 'c'), status: arbStatus, eventId: fc.uuid() }), { selector: (n) => n.eventId, maxLength: 20 });
    fc.assert(
      fc.property(arbNotes, fc.nat(), (notes, seed) => {
        const run = (list: typeof notes) => {
          const m = new StatusMerger();
          for (const n of list) m.apply({ eventId: n.eventId, messageKey: n.message, status: n.status });
          return ['a', 'b', 'c'].map((k) => m.status(k));
        };
        const permuted = [...notes, ...notes]
          .map((n, i) => ({ n, k: (i * 2654435761 + seed) % 1009 }))
          .sort((x, y) => x.k - y.k)
          .map((x) => x.n);
        expect(run(permuted)).toEqual(run(notes));
      }),
    );
  });
  it('StatusMerger advances only forward: the statuses it reports as advanced rise in rank, in any order (property)', () => {
    const arbNotes = fc.array(fc.record({ status: arbStatus, eventId: fc.uuid() }), { maxLength: 20 });
    fc.assert(
      fc.property(arbNotes, (notes) => {
        const m = new StatusMerger();
        let rank = -1;
        for (const n of notes) {
          const out = m.apply({ eventId: n.eventId, messageKey: 'a', status: n.status });
          if (out.kind !== 'advanced') continue;
          // What a notifier sends on 'advanced' only (server/notifier.ts) never goes back.
          expect(statusRank(out.to)).toBeGreaterThan(rank);
          rank = statusRank(out.to);
        }
      }),
      { seed: 20_251_105 },
    );
  });
});
