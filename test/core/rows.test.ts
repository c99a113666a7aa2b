/**
 * Rows kept from `engine.takeChanges()` make a snapshot only when every change set is applied in
 * order: a later change of a submission whose first change (with its contacts) was never applied is
 * a SnapshotError, and the rows are left as they were.
 */
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { isSnapshotError } from '../../src/core/errors.js';
import { applyChanges, emptyRows, mergeSubmission } from '../../src/core/rows.js';
import { ManualClock, type FleetDescription } from '../../src/index.js';

const FLEET: FleetDescription = {
  businesses: [{ id: 1, name: 'A', numbers: [{ phone: '5511900000010', throughputPerHour: 1000, messagingLimit24h: 10_000 }], templateTypes: [{ id: 10, name: 'billing', templateIds: [100] }] }],
  templates: [{ id: 100, name: 'a', text: 'Hi {{1}}', businessIds: [1] }],
};

describe('rows', () => {
  it('refuse a change of a submission whose contacts were never kept, as a SnapshotError', () => {
    const engine = createEngine(FLEET, { clock: new ManualClock(0), trackChanges: true });
    engine.takeChanges({ full: true });
    engine.submit({ businessId: 1, typeId: 10, contacts: [{ phone: '5521900000001', variables: ['x'] }] });
    const first = engine.takeChanges();
    expect(first.submissions[0]?.contacts).toBeDefined();
    engine.poll({ limit: 1 });
    const later = engine.takeChanges();
    const change = later.submissions[0];
    expect(change?.contacts).toBeUndefined();
    let thrown: unknown;
    try {
      mergeSubmission(undefined, change!);
    } catch (e) {
      thrown = e;
    }
    expect(isSnapshotError(thrown)).toBe(true);
    expect((thrown as Error).message).toBe(`rows: submission s${change!.seq} changed before its contacts were kept`);
    // Applied in order, the same changes make the row.
    const rows = emptyRows();
    applyChanges(rows, first);
    applyChanges(rows, later);
    expect(rows.submissions.get(change!.seq)?.contacts).toHaveLength(1);
  });
});
