/**
 * The server's shutdown (`app.close()`), in order: refuse intake; finish sends in flight (their
 * results are reported to the engine, so none is in flight in the snapshot and none goes twice);
 * stop the channel; send the due campaign statistics; give deliveries in flight a moment; write
 * the last durable step; snapshot engine, outbox and the rest; then Fastify closes.
 *
 * Separate from buildServer, which makes the parts: the order they stop in is the point here, and
 * it reads best in one place.
 */
import type { FastifyInstance } from 'fastify';
import type { ServerContext } from './context.js';
import type { ServerBackend } from './backends/server-backend.js';
import type { DashboardState } from './dashboard/state.js';
import { writeSnapshotFile, type SnapshotFile } from './snapshot-file.js';
import type { DeliveryWorker } from './webhooks/delivery-worker.js';

export interface ShutdownParts {
  /** How long sends in flight may take to finish, in ms. */
  readonly drainMs: number;
  readonly delivery: DeliveryWorker;
  readonly dashboard: DashboardState | undefined;
  /** Stops listening to the engine's anomalies. */
  readonly offAnomaly: () => void;
  /** Resolves once the channel's answers and reports received so far are handled (turns.ts). */
  readonly settleReports: () => Promise<unknown>;
  /** The channel is closed: the provider's later events are ignored from now on. */
  readonly detach: () => void;
  /** Where the snapshot is written on close. @default none */
  readonly snapshotFile: string | undefined;
  readonly snapshot: () => SnapshotFile;
  /** Stops stepping before the last flush; on Redis gives the work held here back to the fleet after it. */
  readonly backend: Pick<ServerBackend, 'stop' | 'release'>;
}

export function installShutdown(app: FastifyInstance, ctx: ServerContext, parts: ShutdownParts): void {
  const { drainMs, delivery, dashboard, backend } = parts;
  app.addHook('preClose', async () => {
    ctx.closing = true;
  });
  app.addHook('onClose', async () => {
    parts.offAnomaly();
    dashboard?.stop();
    await ctx.dispatch.stop(drainMs);
    await ctx.sms.stop(drainMs);
    await ctx.channel.close?.();
    // What the provider reported before the channel closed is handled (and written) before the rest goes.
    await parts.settleReports();
    parts.detach();
    ctx.notifier.stop();
    ctx.notifier.flushCampaigns();
    await delivery.stop(Math.min(drainMs, 2000));
    // The results of the drained sends, written before the host closes the store.
    backend.stop();
    await ctx.backend.persistence.flush();
    // On Redis the work this instance holds goes back to the fleet.
    await backend.release();
    if (parts.snapshotFile !== undefined) {
      writeSnapshotFile(parts.snapshotFile, parts.snapshot());
      app.log.info({ file: parts.snapshotFile }, 'snapshot written');
    }
  });
}
