/**
 * The engine's state as snapshots and durable rows hold it: numbers' and templates' statuses and
 * where each pool's rotation stands, written from the fleet's tables and read back into them.
 * (The format and its checks: snapshot.ts.)
 */
import type { FleetTables } from './fleet-tables.js';
import type { StoreSnapshot } from './limits/store.js';
import type { PortfolioSnapshot } from './portfolio-types.js';
import { type EngineSnapshot, type NumberStatusSnapshot, type PoolSnapshot, SNAPSHOT_FORMAT, SNAPSHOT_VERSION, type TemplateStatusSnapshot } from './snapshot.js';

/** A number's status as a snapshot keeps it. */
export function numberStatusOf(t: FleetTables, slot: number): NumberStatusSnapshot {
  const until = t.numberUntil.get(slot);
  return { phone: t.phones[slot]!, status: t.numberActive[slot] === 1 ? 'active' : 'paused', ...(until !== undefined ? { pausedUntil: until } : {}) };
}

/** A template's status as a snapshot keeps it. */
export function templateStatusOf(t: FleetTables, i: number): TemplateStatusSnapshot {
  const until = t.templateUntil[i]!;
  return { id: t.templateIds[i]!, status: t.templateStatus[i]!, ...(Number.isNaN(until) ? {} : { pausedUntil: until }) };
}

/** The whole engine as plain JSON, from its tables and the sections of its store, queue and portfolios. */
export function engineSnapshot(t: FleetTables, now: number, store: StoreSnapshot, dispatch: unknown, portfolios: readonly PortfolioSnapshot[]): EngineSnapshot {
  return {
    format: SNAPSHOT_FORMAT,
    version: SNAPSHOT_VERSION,
    takenAt: now,
    store,
    numbers: t.phones.map((_, slot) => numberStatusOf(t, slot)),
    templates: t.templates.map((_, i) => templateStatusOf(t, i)),
    dispatch,
    portfolios,
    pools: t.businesses.flatMap((b) =>
      b.pools.map((p): PoolSnapshot => {
        const rotation = p.exportRotation();
        return {
          businessId: b.id,
          typeId: p.typeId,
          ring: rotation.ring.map((m) => t.phones[p.members[m]!]!),
          waiting: rotation.waiting.map(([m, at]) => [t.phones[p.members[m]!]!, at] as const),
          cursors: Array.from(p.classTemplates, (list, c) => list[p.classCursor[c]!] ?? null),
        };
      }),
    ),
  };
}

/** Puts each pool's rotation back where the snapshot had it; pools and phones no longer in the fleet are skipped. */
export function restoreRotations(t: FleetTables, pools: readonly PoolSnapshot[]): void {
  for (const p of pools) {
    const b = t.businessIndex.get(p.businessId);
    const pool = t.pool(p.businessId, p.typeId);
    if (b === undefined || !pool) continue;
    // Phones of another business (the fleet changed in between) are not members here.
    pool.importRotation(
      p.ring.map((phone) => t.memberOf(phone, b)),
      p.waiting.map(([phone, at]) => [t.memberOf(phone, b), at] as const),
    );
    p.cursors.forEach((id, c) => {
      const at = id === null ? -1 : (pool.classTemplates[c]?.indexOf(id) ?? -1);
      if (at >= 0) pool.classCursor[c] = at;
    });
  }
}
