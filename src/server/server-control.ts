/**
 * What a host (and tests) can do with a running server besides HTTP (`server.sendpool`): its
 * engine and channel, its counts, whether it is idle, a snapshot of its state, a company's signing
 * secret, and the nudges a manual clock needs (campaign statistics now, a look at the engine now).
 *
 * Separate from buildServer, which makes the parts: this is what of them the host sees.
 */
import type { FastifyInstance } from 'fastify';
import type { Engine } from '../core/engine.js';
import type { DispatchCounts } from '../core/dispatch/types.js';
import type { ActivityLog } from './activity-log.js';
import type { Channel } from './ports/channel.js';
import type { ServerBackend } from './ports/server-backend.js';
import { webhooksPending, type ServerContext } from './context.js';
import type { DispatchNotifications } from './dispatch-notifications.js';
import { SERVER_SNAPSHOT_FORMAT, SERVER_SNAPSHOT_VERSION, type SnapshotFile } from './snapshot-file.js';

/** Counts of the server's work, for hosts, health checks and tests. */
export interface ServerStats {
  readonly dispatch: DispatchCounts;
  /** Webhook events not delivered yet (pending or in flight). */
  readonly webhooksPending: number;
  readonly webhooksDelivered: number;
  readonly webhooksDeadLettered: number;
  readonly smsQueued: number;
  /** SMS handed to the gateway, its answer not back yet. */
  readonly smsInFlight: number;
}

/** What the host (and tests) can do with a running server besides HTTP. */
export interface SendpoolControl {
  readonly engine: Engine;
  readonly channel: Channel;
  /** Engine and server state as the snapshot file holds it. */
  snapshot(): SnapshotFile;
  /** The webhook signing secret of a company. */
  webhookSecret(companyId: number): string;
  stats(): ServerStats;
  /** True when nothing waits: no contact queued or in flight, no SMS queued or in flight, no webhook pending. */
  idle(): boolean;
  /** Sends the due campaign statistics batches now (they are otherwise sent on their period). */
  flushCampaignStatistics(): void;
  /** Looks at the engine now for due work (a host that moved a manual clock; timers wait in real time). */
  wake(): void;
  /** `http://host:port` of the separate metrics listener (`metrics.listen`) once ready; null otherwise. */
  metricsAddress(): string | null;
}

/** The Fastify instance with the server's controls. */
export type SendpoolServer = FastifyInstance & { readonly sendpool: SendpoolControl };

/** Engine and server state as the snapshot file holds it (`snapshotFile`, `sendpool.snapshot()`). */
export function serverSnapshot(ctx: ServerContext, activity: ActivityLog, notifications: Pick<DispatchNotifications, 'endsNotified'>): SnapshotFile {
  const deadLetters = ctx.deadLetters.rows();
  const endsNotified = notifications.endsNotified();
  return {
    format: SERVER_SNAPSHOT_FORMAT,
    version: SERVER_SNAPSHOT_VERSION,
    takenAt: Date.now(),
    engine: ctx.engine.snapshot(),
    server: {
      version: 1,
      nextContactId: ctx.backend.contactIds.next ?? 1,
      notifier: ctx.notifier.snapshot(),
      outbox: ctx.outbox.snapshot(),
      reports: ctx.reports.snapshot(),
      sms: ctx.sms.pending(),
      blocklist: ctx.blocklist.rows(),
      campaignPhones: ctx.campaignPhones.rows(),
      sentPhones: ctx.sentPhones.rows(),
      activity: activity.rows(),
      ...(deadLetters === undefined ? {} : { deadLetters }),
      ...(endsNotified.length > 0 ? { endsNotified } : {}),
    },
  };
}

export interface ControlParts {
  readonly snapshot: () => SnapshotFile;
  /** Webhook events delivered and dead-lettered so far. */
  readonly counters: { readonly delivered: number; readonly deadLettered: number };
  /** Whether nothing held here waits in its shared state (on Redis, its shared queue). */
  readonly backend: Pick<ServerBackend, 'idle'>;
  readonly metricsAddress: () => string | null;
}

export function serverControl(ctx: ServerContext, parts: ControlParts): SendpoolControl {
  const { engine, notifier, outbox, sms, dispatch, channel } = ctx;
  return {
    engine,
    channel,
    snapshot: parts.snapshot,
    webhookSecret: (companyId) => notifier.secretOf(companyId),
    stats: () => ({
      dispatch: engine.stats(),
      // A request's ENQUEUED notifications not built yet are pending too.
      webhooksPending: webhooksPending(ctx),
      webhooksDelivered: parts.counters.delivered,
      webhooksDeadLettered: parts.counters.deadLettered,
      smsQueued: sms.queued,
      smsInFlight: sms.inFlight,
    }),
    idle: () => {
      const s = engine.stats();
      const shared = parts.backend.idle();
      return shared && s.queued + s.waitingRetry + s.inFlight === 0 && dispatch.inFlight === 0 && sms.queued === 0 && sms.inFlight === 0 && outbox.size === 0 && notifier.unbuilt === 0;
    },
    flushCampaignStatistics: () => notifier.flushCampaigns(),
    wake: () => dispatch.kick(),
    metricsAddress: parts.metricsAddress,
  };
}
