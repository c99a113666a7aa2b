/**
 * Child process of the Redis-down-at-start test: `runServer({ redis })` against a Redis that is not
 * there yet, logging at info to stderr (with `metricsPort`, /metrics on a listener of its own; with
 * `port`, the API's port, else one picked);
 * writes its address to `<dir>/address` once listening.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runServer } from '../../src/server/index.js';

const cfg = JSON.parse(process.env['SENDPOOL_START_CHILD']!) as { fleetFile: string; redisUrl: string; dir: string; metricsPort?: number; port?: number };
const running = await runServer({
  fleetFile: cfg.fleetFile,
  port: cfg.port ?? 0,
  redis: { url: cfg.redisUrl, prefix: 'start:' },
  apiKeys: [{ key: 'redis-start-key-0123456789abcdef', companyId: 1 }],
  handleSignals: false,
  logger: { level: 'info' },
  ...(cfg.metricsPort === undefined ? {} : { metrics: { listen: { port: cfg.metricsPort } } }),
});
writeFileSync(join(cfg.dir, 'address'), running.address);
