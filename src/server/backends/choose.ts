/**
 * The one place the server's backend is chosen, from its options: `redis` → the redis backend,
 * `storage` → sqlite, neither → memory. Options that cannot go together are refused here, before
 * anything is made.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../core/clock.js';
import type { RandomSource } from '../../events/random.js';
import type { BuildServerOptions } from '../options.js';
import { optionConflict, ServerOptionsError } from '../ports/errors.js';
import { createMemoryBackend } from './memory/index.js';
import { RedisBackend } from './redis/index.js';
import type { ServerBackend } from '../ports/server-backend.js';
import type { BackendParts } from './server-backend.js';
import { createSqliteBackend } from './sqlite/index.js';

export interface BackendEnv {
  readonly clock: Clock;
  readonly random: RandomSource;
  readonly log: FastifyBaseLogger;
  readonly maxTracked: number;
  readonly batchIntervalMs: number;
  readonly failureWindowMs: number;
  /** The report token key the server made, as text (kept by a durable backend); undefined: the host's. */
  readonly madeReportTokenKey: string | undefined;
  readonly deadLetters: { readonly maxPerCompany: number; readonly maxAgeMs: number };
}

export function chooseBackend(options: BuildServerOptions, env: BackendEnv): ServerBackend<BackendParts> {
  const { engine, storage, redis } = options;
  if (storage && redis) throw new ServerOptionsError([optionConflict('redis', 'no `storage` beside it (one keeps state in a file, the other in Redis)', 'both given')]);
  if (redis) {
    // A portfolio's recipients kept by each engine alone: on Redis every instance would allow the whole limit.
    if (engine.portfolios().length > 0 && !engine.sharesPortfolios) {
      throw new ServerOptionsError([
        optionConflict(
          'engine',
          'an engine whose portfolios are shared when `redis` is given (`portfolioSource: new RedisPortfolios({ client, prefix })`, sendpool/redis; the CLI does), or no `redis` (docs/scaling.md, "Portfolios on Redis")',
          'the fleet has portfolios, and the engine keeps their limits alone: on Redis each instance would allow all of it',
        ),
      ]);
    }
    return new RedisBackend({ redis, engine, ...env });
  }
  // A snapshot's next id (a snapshot file restored, maybe into an empty store), else the store's.
  const kept = options.stored?.values.get('nextContactId');
  const nextContactId = options.restore?.nextContactId ?? (typeof kept === 'number' ? kept : 1);
  if (storage) {
    return createSqliteBackend({ storage, engine, clock: env.clock, stored: options.stored, nextContactId, reportTokenKey: env.madeReportTokenKey, full: options.storeEverything === true });
  }
  return createMemoryBackend({ engine, clock: env.clock, nextContactId });
}
