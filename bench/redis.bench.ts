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
 * Peer: RateLimiterRedis, one key per number, round-robin, one `consume` per assignment: awaited
 * one at a time, and with BENCH_IN_FLIGHT (64) consumes in flight at once, as a server sending to
 * many numbers concurrently would issue them.
 *
 * Realistic limits: the same engine with 100 numbers at 80 messages/s (8,000/s in all), so the
 * limits bind and leases are sized from demand: assignments per second are then the fleet's rate,
 * and the figure that matters is the round trips per 1,000 sends.
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
const IN_FLIGHT = Number(process.env['BENCH_IN_FLIGHT'] ?? 64);
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

/** The bench fleet with every number at 80 messages/s (and the hour and day limits that allows). */
function realisticFleet(): ReturnType<typeof makeFleet> {
  const fleet = makeFleet({ numbers: NUMBERS, templates: 1 });
  return { ...fleet, businesses: fleet.businesses.map((b) => ({ ...b, numbers: b.numbers.map((n) => ({ ...n, messagesPerSecond: 80, throughputPerHour: 288_000, messagingLimit24h: 6_912_000 })) })) };
}

async function benchSendpool(realistic = false): Promise<{ perSecond: number; roundTripsPer1000: number; commandsPer1000: number; assignments: number }> {
  const store = new RedisStore({ client, prefix: realistic ? `${prefix}real:` : prefix });
  const engine = createEngine(realistic ? realisticFleet() : makeFleet({ numbers: NUMBERS, templates: 1 }), { store });
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

/** The peer with `IN_FLIGHT` consumes outstanding at once (each chain issues its next when one answers). */
async function benchPeerInFlight(): Promise<{ perSecond: number; roundTripsPer1000: number; commandsPer1000: number; assignments: number }> {
  const limiter = new RateLimiterRedis({ storeClient: client, points: 1e9, duration: 3600, keyPrefix: `${prefix}rlf-f` });
  const keys = Array.from({ length: NUMBERS }, (_, i) => `n${i}`);
  let rr = 0;
  const calls0 = await commandCalls();
  let assignments = 0;
  const start = performance.now();
  const end = start + Math.min(SECONDS, 2) * 1000;
  const chain = async (): Promise<void> => {
    while (performance.now() < end) {
      await limiter.consume(keys[(rr = (rr + 1) % NUMBERS)]!, 1);
      assignments++;
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, chain));
  const elapsed = (performance.now() - start) / 1000;
  const calls = (await commandCalls()) - calls0 - 1;
  // Pipelined by ioredis over one connection: still one command (and its reply) per assignment.
  return { perSecond: assignments / elapsed, roundTripsPer1000: 1000, commandsPer1000: (1000 * calls) / assignments, assignments };
}

const ours = await benchSendpool();
const peer = await benchPeer();
const peerInFlight = await benchPeerInFlight();
const realistic = await benchSendpool(true);
const fmt = (x: number): string => (x >= 1e6 ? `${(x / 1e6).toFixed(2)} M/s` : `${(x / 1e3).toFixed(1)} k/s`);
console.log(`| system | assignments/s per instance | Redis round trips per 1,000 | Redis commands per 1,000 |`);
console.log(`|---|---|---|---|`);
console.log(`| sendpool RedisStore (leases) | ${fmt(ours.perSecond)} | ${ours.roundTripsPer1000.toFixed(4)} | ${ours.commandsPer1000.toFixed(4)} |`);
console.log(`| rate-limiter-flexible RateLimiterRedis, one consume at a time | ${fmt(peer.perSecond)} | ${peer.roundTripsPer1000.toFixed(1)} | ${peer.commandsPer1000.toFixed(1)} |`);
console.log(
  `| rate-limiter-flexible RateLimiterRedis, ${IN_FLIGHT} consumes in flight | ${fmt(peerInFlight.perSecond)} | ${peerInFlight.roundTripsPer1000.toFixed(1)} | ${peerInFlight.commandsPer1000.toFixed(1)} |`,
);
console.log(`| sendpool RedisStore, 100 numbers at 80/s (limits bind) | ${fmt(realistic.perSecond)} | ${realistic.roundTripsPer1000.toFixed(2)} | ${realistic.commandsPer1000.toFixed(2)} |`);
console.log(
  `ratio: ${(ours.perSecond / peer.perSecond).toFixed(0)}x assignments/s (${(ours.perSecond / peerInFlight.perSecond).toFixed(0)}x against the peer in flight), ${(peer.commandsPer1000 / Math.max(ours.commandsPer1000, 1e-9)).toFixed(0)}x fewer commands per assignment`,
);
console.log(
  JSON.stringify({
    numbers: NUMBERS,
    batch: BATCH,
    seconds: SECONDS,
    inFlight: IN_FLIGHT,
    sendpool: ours,
    rateLimiterRedis: peer,
    rateLimiterRedisInFlight: peerInFlight,
    sendpoolRealistic: realistic,
  }),
);
let cursor = '0';
do {
  const [next, found] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
  cursor = next;
  if (found.length > 0) await client.del(...found);
} while (cursor !== '0');
client.disconnect();
