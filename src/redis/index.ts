/**
 * `sendpool/redis`: capacity shared by many instances through Redis (ioredis, an optional peer).
 * See docs/scaling.md.
 */
export { RedisStore } from './redis-store.js';
export type { RedisStoreOptions, RedisStoreClient, RedisStoreSnapshot } from './redis-store-options.js';
export { leaseSize, burstOf } from './lease-sizing.js';
export type { LeaseSizingInput } from './lease-sizing.js';
export type { RedisCapacityEvent, RedisStoreMetrics, RedisStoreState } from './health.js';
export type { RedisEpoch } from './epoch.js';
export { FleetSync } from './fleet-sync.js';
export type { FleetSyncOptions, FleetSyncClient, FleetSyncSubscriber, FleetSyncState, FleetSyncEvent } from './fleet-sync-options.js';
export { RedisCampaignStatistics } from './campaign-stats-store.js';
export type { RedisCampaignStatisticsOptions, CampaignStatsClient } from './campaign-stats-store.js';
export { createCapacityWaker } from './capacity-waker.js';
export type { CapacityWaker } from './capacity-waker.js';
export { runScript, script } from './script-runner.js';
export type { RedisScriptClient, Script } from './script-runner.js';
export { LEASE_SCRIPT } from './scripts/lease.js';
export { GIVE_BACK_SCRIPT } from './scripts/give-back.js';
export { RedisPortfolios } from './redis-portfolios.js';
export type { RedisPortfoliosOptions } from './redis-portfolios.js';
export { PORTFOLIO_LEASE_SCRIPT, PORTFOLIO_RECORD_SCRIPT } from './scripts/portfolio.js';
export {
  FleetSyncStoppedError,
  RedisStateError,
  RedisTimeoutError,
  RedisUnavailableError,
  isFleetSyncStoppedError,
  isRedisStateError,
  isRedisTimeoutError,
  isRedisUnavailableError,
} from './errors.js';
