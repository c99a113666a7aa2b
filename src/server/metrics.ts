/**
 * Prometheus metrics (prom-client), in a registry of their own per server, so two servers in one
 * process (tests, a host with several) never share or clash. Gauges of the engine are read at
 * scrape time. Labels are sending numbers, business and type ids, families and outcomes: never a
 * contact's data, never a key.
 */
import { requirePeer } from '../runtime/peers.js';
import type * as PromClient from 'prom-client';
import type { Counter, Histogram, Registry } from 'prom-client';
import type { Engine } from '../core/engine.js';
import type { RedisMetricsSource, StoreRecoveryFigures } from './ports/server-backend.js';

/**
 * prom-client (an optional peer) is loaded when a server turns metrics on, so a host that runs
 * with `metrics: false` need not install it. Loaded with `require`, not `import()`: `buildServer`
 * is synchronous, and prom-client is CommonJS.
 */
function loadPromClient(): typeof PromClient {
  return requirePeer<typeof PromClient>('prom-client', "The server's metrics", 'or metrics: false');
}

/** Namespace of every metric of the server, prom-client's process and Node.js metrics included. */
export const METRIC_PREFIX = 'sendpool_';

export interface ServerMetrics {
  readonly registry: Registry;
  /** A message handed out by `phone` (counted here, added to `sendpool_assignments_total` at scrape). */
  readonly assigned: (phone: string) => void;
  /** A send result of `phone` (counted here, added to `sendpool_sends_total` at scrape). */
  readonly sent: (phone: string, outcome: string) => void;
  readonly contactsAccepted: Counter<'kind'>;
  readonly webhookEvents: Counter<'family'>;
  readonly webhookAttempts: Counter<'family' | 'result'>;
  readonly webhookOutcomes: Counter<'family' | 'outcome'>;
  /** Failures the provider reported later, by what they did to the contact (late-failures.ts). */
  readonly lateFailures: Counter<'outcome'>;
  readonly requestDuration: Histogram<'method' | 'route' | 'status'>;
}

const SYNC_STATES = ['idle', 'connecting', 'ready', 'lost', 'stopped'];

export function createMetrics(
  engine: Engine,
  extra: {
    outboxSize: () => number;
    smsQueued: () => number;
    blocked?: () => readonly { readonly phone: string; readonly cause: string }[];
    /** Dead letters kept per family (on Redis the fleet's, read at each scrape). */
    deadLetters?: () => Promise<ReadonlyMap<string, number>>;
    redis?: RedisMetricsSource;
    /** What a start with `recover` reported (the durable store). */
    recovery?: StoreRecoveryFigures;
  },
  defaults: boolean,
): ServerMetrics {
  const { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } = loadPromClient();
  const registry = new Registry();
  // prom-client's names already start with their family (`process_cpu_seconds_total`,
  // `nodejs_eventloop_lag_seconds`): the prefix is the namespace only, so nothing stutters.
  if (defaults) collectDefaultMetrics({ register: registry, prefix: METRIC_PREFIX });
  const registers = [registry];
  // Per message, a count in a map; prom-client's labelled counters take the sums at scrape time
  // (a labelled `inc` hashes its labels: a visible share of a send's CPU at tens of thousands a second).
  const assigned = new Map<string, number>();
  const sent = new Map<string, Map<string, number>>();
  const metrics: ServerMetrics = {
    registry,
    assigned: (phone) => void assigned.set(phone, (assigned.get(phone) ?? 0) + 1),
    sent: (phone, outcome) => {
      let byOutcome = sent.get(phone);
      if (!byOutcome) sent.set(phone, (byOutcome = new Map<string, number>()));
      byOutcome.set(outcome, (byOutcome.get(outcome) ?? 0) + 1);
    },
    contactsAccepted: new Counter({ name: 'sendpool_contacts_total', help: 'Contacts and SMS received, by kind: accepted, rejected, sms.', labelNames: ['kind'], registers }),
    webhookEvents: new Counter({ name: 'sendpool_webhook_events_total', help: 'Webhook events put in the outbox, by family.', labelNames: ['family'], registers }),
    webhookAttempts: new Counter({ name: 'sendpool_webhook_attempts_total', help: 'Webhook delivery attempts, by family and result (success, failure).', labelNames: ['family', 'result'], registers }),
    webhookOutcomes: new Counter({
      name: 'sendpool_webhook_deliveries_total',
      help: 'Final webhook delivery outcomes, by family: delivered, dead-lettered.',
      labelNames: ['family', 'outcome'],
      registers,
    }),
    lateFailures: new Counter({
      name: 'sendpool_late_failures_total',
      help: 'Failures the provider reported later (status webhooks), by outcome: resent, ended, past-window, after-delivery.',
      labelNames: ['outcome'],
      registers,
    }),
    requestDuration: new Histogram({
      name: 'sendpool_http_request_duration_seconds',
      help: 'HTTP request latency, by method, route and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    }),
  };
  new Counter({
    name: 'sendpool_assignments_total',
    help: 'Messages handed out by the engine, per sending number.',
    labelNames: ['number'],
    registers,
    collect() {
      for (const [number, n] of assigned) this.inc({ number }, n);
      assigned.clear();
    },
  });
  new Counter({
    name: 'sendpool_sends_total',
    help: 'Send results per sending number: sent, failed, retry-scheduled, failover, requeued, expired.',
    labelNames: ['number', 'outcome'],
    registers,
    collect() {
      for (const [number, byOutcome] of sent) for (const [outcome, n] of byOutcome) this.inc({ number, outcome }, n);
      sent.clear();
    },
  });
  new Gauge({
    name: 'sendpool_output',
    help: 'Messages that may be sent now, per business and template type (spec 2.2 output).',
    labelNames: ['business', 'template_type'],
    registers,
    collect() {
      this.reset();
      for (const b of engine.businesses()) for (const t of b.template_types) this.set({ business: String(b.id), template_type: String(t.id) }, t.output);
    },
  });
  new Gauge({
    name: 'sendpool_queue_depth',
    help: 'Contacts in the dispatch queue by state (queued, waiting_retry, in_flight), SMS queued, webhook events pending.',
    labelNames: ['queue'],
    registers,
    collect() {
      const s = engine.stats();
      this.set({ queue: 'queued' }, s.queued);
      this.set({ queue: 'waiting_retry' }, s.waitingRetry);
      this.set({ queue: 'in_flight' }, s.inFlight);
      this.set({ queue: 'sms' }, extra.smsQueued());
      this.set({ queue: 'webhooks' }, extra.outboxSize());
    },
  });
  const blocked = extra.blocked;
  if (blocked)
    new Gauge({
      name: 'sendpool_numbers_blocked',
      help: 'Numbers blocked for every message, by cause (credentials: the provider refuses the token or a permission; unreachable: the provider cannot be reached): 1 while blocked.',
      labelNames: ['number', 'cause'],
      registers,
      collect() {
        this.reset();
        for (const b of blocked()) this.set({ number: b.phone, cause: b.cause }, 1);
      },
    });
  const deadLetters = extra.deadLetters;
  if (deadLetters)
    new Gauge({
      name: 'sendpool_webhook_dead_letters',
      help: 'Dead-lettered webhook events kept for an operator to see and replay, by family (GET /messenger/webhooks/dead-letters/).',
      labelNames: ['family'],
      registers,
      async collect() {
        let counts: ReadonlyMap<string, number>;
        try {
          counts = await deadLetters();
        } catch {
          return; // Redis away: the figures of the last scrape stay
        }
        this.reset();
        for (const [family, n] of counts) this.set({ family }, n);
      },
    });
  const redis = extra.redis;
  if (redis) redisGauges(Gauge, Counter, registers, redis);
  const recovery = extra.recovery;
  if (recovery) {
    // Set once at start: what this process's start with --recover found lost (0s: nothing).
    const lost = new Gauge({
      name: 'sendpool_store_recovery_lost',
      help: 'What the start with --recover found lost in the durable store, by kind: commits, contacts (answered 202; ids in the log and the report file), rows (of a damaged file, when countable), damaged_stretches, failed_notified (contacts the intake journal named, reported FAILED).',
      labelNames: ['kind'],
      registers,
    });
    lost.set({ kind: 'commits' }, recovery.lostCommits);
    lost.set({ kind: 'contacts' }, recovery.lostContacts?.count ?? 0);
    lost.set(
      { kind: 'rows' },
      recovery.lostRows.reduce((n, l) => n + (l.rows ?? 0), 0),
    );
    lost.set({ kind: 'damaged_stretches' }, recovery.lostRows.filter((l) => l.rows === null).length);
    lost.set({ kind: 'failed_notified' }, recovery.journal?.failed ?? 0);
  }
  return metrics;
}

/** `sendpool_redis_ready` and `sendpool_redis_sync_state`, from the status sync's state (undefined before it exists). */
function syncGauges(Gauge: typeof PromClient.Gauge, registers: Registry[], syncState: () => string | undefined): void {
  new Gauge({
    name: 'sendpool_redis_ready',
    help: "1 once the numbers' status sync with Redis is ready (connected and subscribed), 0 before (an instance waiting for Redis at start) and while it is lost.",
    registers,
    collect() {
      this.set(syncState() === 'ready' ? 1 : 0);
    },
  });
  new Gauge({
    name: 'sendpool_redis_sync_state',
    help: "The numbers' status sync with Redis: 1 for its current state (idle, connecting, ready, lost, stopped), 0 for the others.",
    labelNames: ['state'],
    registers,
    collect() {
      const now = syncState() ?? 'idle';
      for (const s of SYNC_STATES) this.set({ state: s }, s === now ? 1 : 0);
    },
  });
}

/**
 * The metrics of an instance on Redis before its server exists (it waits for Redis at start):
 * `sendpool_redis_ready` and `sendpool_redis_sync_state` only (the process metrics start with the
 * server's registry). Served by the early metrics listener (metrics-access.ts, `openEarlyMetrics`).
 */
export function startingMetrics(syncState: () => string | undefined): Registry {
  const { Gauge, Registry } = loadPromClient();
  const registry = new Registry();
  syncGauges(Gauge, [registry], syncState);
  return registry;
}

/** The server on Redis: the status sync's state, failing steps, the fleet's backlog, what this instance holds. */
function redisGauges(Gauge: typeof PromClient.Gauge, Counter: typeof PromClient.Counter, registers: Registry[], redis: RedisMetricsSource): void {
  const syncState = redis.syncState;
  if (syncState) syncGauges(Gauge, registers, syncState);
  new Gauge({
    name: 'sendpool_redis_step_failures',
    help: 'Writes to Redis that failed in a row (0 while Redis answers; intake and sending wait while it is not).',
    registers,
    collect() {
      this.set(redis.stepFailures());
    },
  });
  new Gauge({
    name: 'sendpool_redis_backlog',
    help: "Contacts accepted by every instance and not done, as this instance last read it (the intake bound's measure).",
    registers,
    collect() {
      this.set(redis.backlog());
    },
  });
  const resets = redis.resets;
  if (resets) {
    let counted = 0;
    new Counter({
      name: 'sendpool_redis_resets_total',
      help: 'Times this instance found that Redis had come back without the queue (its epoch marker gone or another): each is handled (held chunks and accepted contacts written again, webhook configurations written back).',
      registers,
      collect() {
        const now = resets();
        if (now > counted) this.inc(now - counted);
        counted = now;
      },
    });
  }
  new Gauge({
    name: 'sendpool_redis_held_contacts',
    help: 'Contacts this instance holds from the shared queue (claimed, not final).',
    registers,
    collect() {
      this.set(redis.heldContacts());
    },
  });
}
