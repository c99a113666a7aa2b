/**
 * `createEngine`: the engine with the system clock and an in-memory store as defaults. The pure
 * core (`src/core/engine.ts`) takes both as required ports; this file is the only thing that picks
 * real ones.
 */
import type { Clock } from './core/clock.js';
import { Engine } from './core/engine.js';
import type { Store } from './core/limits/store.js';
import type { PortfolioSource } from './core/portfolio-types.js';
import { systemClock } from './runtime/system-clock.js';

/** Options of {@link createEngine}. */
export interface EngineOptions {
  /**
   * Source of time in milliseconds. Tests and simulations pass a `ManualClock`.
   * @default the system clock (`Date.now()`, never going back)
   */
  readonly clock?: Clock;
  /**
   * Where the numbers' limit state lives. Pass a shared store to run several engines on one fleet.
   * @default new MemoryStore() (rolling 24 h counted in 60-minute buckets)
   */
  readonly store?: Store;
  /**
   * Where portfolios' limits are kept when several engines share them: `new RedisPortfolios(…)`
   * (sendpool/redis) on the server on Redis.
   * @default undefined (each portfolio counts in this engine: exact in one process)
   */
  readonly portfolioSource?: PortfolioSource;
  /** State to resume from, as written by `engine.snapshot()` (parsed JSON). */
  readonly snapshot?: unknown;
  /**
   * Keep a list of what changes (submissions, numbers' usage and status, templates' status) for
   * `engine.takeChanges()`, so a durable host writes only that after each step.
   * @default false
   */
  readonly trackChanges?: boolean;
  /**
   * Queued contacts from which a new submission's contacts are kept packed (phones as numbers,
   * values in one string) instead of as the caller's objects; 0 packs every submission, `Infinity`
   * none. Packed contacts come back as new objects with the same values; contacts with fields of
   * their own are never packed (docs/dispatch-loop.md, "Memory").
   * @default 10000
   */
  readonly packContactsFrom?: number;
}

/**
 * Builds an engine from a fleet description.
 *
 * @example
 * const engine = createEngine(fleet, { clock: new ManualClock(0) });
 * engine.assign(1, 10, 3); // { assignments: [{ phone, templateId }, …] }
 * @throws {FleetValidationError} listing every problem when the description does not validate
 */
export function createEngine(fleet: unknown, options: EngineOptions = {}): Engine {
  return new Engine(fleet, {
    clock: options.clock ?? systemClock,
    ...(options.store ? { store: options.store } : {}),
    ...(options.portfolioSource ? { portfolioSource: options.portfolioSource } : {}),
    ...(options.snapshot !== undefined ? { snapshot: options.snapshot } : {}),
    ...(options.trackChanges !== undefined ? { trackChanges: options.trackChanges } : {}),
    ...(options.packContactsFrom !== undefined ? { packContactsFrom: options.packContactsFrom } : {}),
  });
}
