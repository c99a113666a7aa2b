/**
 * Assignments per second per instance through the Redis-backed capacity, and Redis round trips per
 * 1,000 assignments, side by side with rate-limiter-flexible's RateLimiterRedis (one `consume` per
 * message) on the same Redis server, in the same run.
 *
 *   SENDPOOL_REDIS_URL=redis://127.0.0.1:6391 npx tsx bench/redis.bench.ts
 *
 * sendpool: one engine on a RedisStore (Redis TIME, default lease options), 100 numbers with ample
 * limits, `assignInto` batches of 10,000; the host yields to the event loop after every batch so
 * leases arrive in the background, as in a server. Round trips are counted twice: the store's own
 * counter and Redis' `INFO commandstats` (evalsha + eval calls) before and after.
 * Peer: RateLimiterRedis, one key per number, round-robin, one awaited `consume` per assignment.
 */
import { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { createEngine } from '../src/index.js';
import { RedisStore } from '../src/redis/index.js';
import { BUSINESS, TYPE, makeFleet } from './fleets.js';

const url = process.env['SENDPOOL_REDIS_URL'];
if (url === undefined) {
  console.error('SENDPOOL_REDIS_URL is not set (e.g. redis://127.0.0.1:6391)');
  process.exit(1);
}
const NUMBERS = 100;
const BATCH = 10_000;
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 3);
const client = new Redis(url);
const prefix = `sendpool-bench:${process.pid}:`;

async function commandCalls(): Promise<number> {
  const info = await client.info('commandstats');
  let calls = 0;
  for (const line of info.split('\n')) {
    const m = /^cmdstat_([a-z|]+):calls=(\d+)/.exec(line.trim());
    if (m) calls += Number(m[2]);
  }
  return calls;
}

async function benchSendpool(): Promise<{ perSecond: number; roundTripsPer1000: number; commandsPer1000: number; assignments: number }> {
  const store = new RedisStore({ client, prefix });
  const engine = createEngine(makeFleet({ numbers: NUMBERS, templates: 1 }), { store });
  const outN = new Int32Array(BATCH);
  const outT = new Float64Array(BATCH);
  // Warm-up: first leases, JIT.
  const warmEnd = performance.now() + 500;
  while (performance.now() < warmEnd) {
    engine.assignInto(BUSINESS, TYPE, BATCH, outN, outT);
    await new Promise((r) => setImmediate(r));
  }
  const trips0 = store.metrics().roundTrips;
  const calls0 = await commandCalls();
  let assignments = 0;
  const start = performance.now();
  const end = start + SECONDS * 1000;
  let now = start;
  while (now < end) {
    assignments += engine.assignInto(BUSINESS, TYPE, BATCH, outN, outT).count;
    await new Promise((r) => setImmediate(r));
    now = performance.now();
  }
  const elapsed = (now - start) / 1000;
  const trips = store.metrics().roundTrips - trips0;
  const calls = (await commandCalls()) - calls0 - 1; // less the INFO call itself
  await store.close();
  return { perSecond: assignments / elapsed, roundTripsPer1000: (1000 * trips) / assignments, commandsPer1000: (1000 * calls) / assignments, assignments };
}

async function benchPeer(): Promise<{ perSecond: number; roundTripsPer1000: number; commandsPer1000: number; assignments: number }> {
  const limiter = new RateLimiterRedis({ storeClient: client, points: 1e9, duration: 3600, keyPrefix: `${prefix}rlf` });
  const keys = Array.from({ length: NUMBERS }, (_, i) => `n${i}`);
  let rr = 0;
  const warmEnd = performance.now() + 300;
  while (performance.now() < warmEnd) await limiter.consume(keys[(rr = (rr + 1) % NUMBERS)]!, 1);
  const calls0 = await commandCalls();
  let assignments = 0;
  const start = performance.now();
  const end = start + Math.min(SECONDS, 2) * 1000;
  let now = start;
  while (now < end) {
    for (let k = 0; k < 100; k++) {
      await limiter.consume(keys[(rr = (rr + 1) % NUMBERS)]!, 1);
      assignments++;
    }
    now = performance.now();
  }
  const elapsed = (now - start) / 1000;
  const calls = (await commandCalls()) - calls0 - 1;
  // Each consume is awaited before the next: one round trip per assignment by construction.
  return { perSecond: assignments / elapsed, roundTripsPer1000: 1000, commandsPer1000: (1000 * calls) / assignments, assignments };
}

const ours = await benchSendpool();
const peer = await benchPeer();
const fmt = (x: number): string => (x >= 1e6 ? `${(x / 1e6).toFixed(2)} M/s` : `${(x / 1e3).toFixed(1)} k/s`);
console.log(`| system | assignments/s per instance | Redis round trips per 1,000 | Redis commands per 1,000 |`);
console.log(`|---|---|---|---|`);
console.log(`| sendpool RedisStore (leases) | ${fmt(ours.perSecond)} | ${ours.roundTripsPer1000.toFixed(4)} | ${ours.commandsPer1000.toFixed(4)} |`);
console.log(`| rate-limiter-flexible RateLimiterRedis | ${fmt(peer.perSecond)} | ${peer.roundTripsPer1000.toFixed(1)} | ${peer.commandsPer1000.toFixed(1)} |`);
console.log(`ratio: ${(ours.perSecond / peer.perSecond).toFixed(0)}x assignments/s, ${(peer.commandsPer1000 / Math.max(ours.commandsPer1000, 1e-9)).toFixed(0)}x fewer commands per assignment`);
console.log(JSON.stringify({ numbers: NUMBERS, batch: BATCH, seconds: SECONDS, sendpool: ours, rateLimiterRedis: peer }));
let cursor = '0';
do {
  const [next, found] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
  cursor = next;
  if (found.length > 0) await client.del(...found);
} while (cursor !== '0');
client.disconnect();
