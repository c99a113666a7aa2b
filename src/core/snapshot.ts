/**
 * The engine's snapshot: plain JSON with a format name and a version, so a restarted engine
 * remembers what was sent in the last 24 hours and which numbers and templates were out.
 * A snapshot from a newer version is refused rather than half-understood.
 */
import { SnapshotError } from './errors.js';
import type { NumberStatus, TemplateStatus } from './fleet.js';
import type { StoreSnapshot } from './limits/store.js';
import type { PortfolioSnapshot } from './portfolio-types.js';
import { type Problem, problem } from './problems.js';

export const SNAPSHOT_FORMAT = 'sendpool.engine';
/** Version this sendpool writes and the newest it reads. */
export const SNAPSHOT_VERSION = 2;

export interface NumberStatusSnapshot {
  readonly phone: string;
  readonly status: NumberStatus;
  readonly pausedUntil?: number;
}

export interface TemplateStatusSnapshot {
  readonly id: number;
  readonly status: TemplateStatus;
  readonly pausedUntil?: number;
}

/** Where a pool's rotation stands, so a restored engine makes the same assignments. */
export interface PoolSnapshot {
  readonly businessId: number;
  readonly typeId: number;
  /** Phones on the ring, from the one served next. */
  readonly ring: readonly string[];
  /** Phones waiting for capacity, with the clock time it returns. */
  readonly waiting: readonly (readonly [string, number])[];
  /** Per account class, the id of the template served next (null: the class has none). */
  readonly cursors: readonly (number | null)[];
}

export interface EngineSnapshot {
  readonly format: typeof SNAPSHOT_FORMAT;
  readonly version: number;
  /** Clock time the snapshot was taken. */
  readonly takenAt: number;
  readonly store: StoreSnapshot;
  readonly numbers: readonly NumberStatusSnapshot[];
  readonly templates: readonly TemplateStatusSnapshot[];
  readonly pools: readonly PoolSnapshot[];
  /** Recipients in each portfolio's moving 24 h (absent in snapshots of sendpool before portfolios). */
  readonly portfolios?: readonly PortfolioSnapshot[];
  /** Sections added by later parts of the engine (the dispatch queue). */
  readonly [section: string]: unknown;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Checks the shape of a snapshot; throws {@link SnapshotError} listing every problem. */
export function checkSnapshot(input: unknown): EngineSnapshot {
  if (!isObject(input) || input['format'] !== SNAPSHOT_FORMAT) {
    throw new SnapshotError('Not a sendpool engine snapshot', [problem('$.format', JSON.stringify(SNAPSHOT_FORMAT), isObject(input) ? input['format'] : input)]);
  }
  const version = input['version'];
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1) {
    throw new SnapshotError('Snapshot has no valid version', [problem('$.version', 'a positive integer', version)]);
  }
  if (version > SNAPSHOT_VERSION) {
    throw new SnapshotError(`Snapshot version ${version} was written by a newer sendpool; this one reads versions up to ${SNAPSHOT_VERSION}. Upgrade sendpool to restore it.`);
  }
  const problems: Problem[] = [];
  if (!isObject(input['store']) || typeof input['store']['kind'] !== 'string') problems.push(problem('$.store', 'a store snapshot with a "kind"', input['store']));
  const numbers = input['numbers'];
  if (!Array.isArray(numbers)) problems.push(problem('$.numbers', 'an array', numbers));
  else
    numbers.forEach((n, i) => {
      if (!isObject(n) || typeof n['phone'] !== 'string') problems.push(problem(`$.numbers[${i}].phone`, 'a phone', isObject(n) ? n['phone'] : n));
      else if (n['status'] !== 'active' && n['status'] !== 'paused') problems.push(problem(`$.numbers[${i}].status`, 'one of "active", "paused"', n['status']));
      else if (n['pausedUntil'] !== undefined && !Number.isSafeInteger(n['pausedUntil'])) problems.push(problem(`$.numbers[${i}].pausedUntil`, 'milliseconds', n['pausedUntil']));
    });
  const templates = input['templates'];
  if (!Array.isArray(templates)) problems.push(problem('$.templates', 'an array', templates));
  else
    templates.forEach((t, i) => {
      if (!isObject(t) || typeof t['id'] !== 'number') problems.push(problem(`$.templates[${i}].id`, 'a template id', isObject(t) ? t['id'] : t));
      else if (!['active', 'paused', 'disabled'].includes(t['status'] as string)) problems.push(problem(`$.templates[${i}].status`, 'one of "active", "paused", "disabled"', t['status']));
      else if (t['pausedUntil'] !== undefined && !Number.isSafeInteger(t['pausedUntil'])) problems.push(problem(`$.templates[${i}].pausedUntil`, 'milliseconds', t['pausedUntil']));
    });
  const pools = input['pools'];
  if (!Array.isArray(pools)) problems.push(problem('$.pools', 'an array', pools));
  else
    pools.forEach((p, i) => {
      if (!isObject(p) || typeof p['businessId'] !== 'number' || typeof p['typeId'] !== 'number' || !Array.isArray(p['ring']) || !Array.isArray(p['waiting']) || !Array.isArray(p['cursors'])) {
        problems.push(problem(`$.pools[${i}]`, 'an object with businessId, typeId, ring, waiting and cursors', p));
      }
    });
  const portfolios = input['portfolios'];
  if (portfolios !== undefined && !Array.isArray(portfolios)) problems.push(problem('$.portfolios', 'an array', portfolios));
  else
    portfolios?.forEach((p, i) => {
      const w = isObject(p) ? p['window'] : undefined;
      if (!isObject(p) || typeof p['id'] !== 'string') problems.push(problem(`$.portfolios[${i}].id`, 'a portfolio id', isObject(p) ? p['id'] : p));
      else if (!isObject(w) || !Array.isArray(w['recipients']) || typeof w['anonymous'] !== 'number') {
        problems.push(problem(`$.portfolios[${i}].window`, 'an object with recipients and anonymous', w));
      } else {
        (w['recipients'] as unknown[]).forEach((r, k) => {
          if (!Array.isArray(r) || typeof r[0] !== 'string' || !Number.isSafeInteger(r[1]) || typeof r[2] !== 'boolean') {
            problems.push(problem(`$.portfolios[${i}].window.recipients[${k}]`, '[recipient, milliseconds, made new]', r));
          }
        });
      }
    });
  if (problems.length > 0) throw new SnapshotError('Malformed sendpool engine snapshot', problems);
  return input as unknown as EngineSnapshot;
}
