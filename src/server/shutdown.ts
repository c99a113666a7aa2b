/**
 * The server's shutdown (`app.close()`), in order: refuse intake; finish sends in flight (their
 * results are reported to the engine, so none is in flight in the snapshot and none goes twice);
 * stop the channel; send the due campaign statistics; give deliveries in flight a moment; write
 * the last durable step; snapshot engine, outbox and the rest; then Fastify closes.
 *
 * Separate from buildServer, which makes the parts: the order they stop in is the point here, and
 * it reads best in one place. A plugin of the root's (`fastify-plugin`), registered after the
 * features: Fastify runs `onClose` hooks last registered first, so this drain runs before a
 * feature lets go of what it holds (the metrics listener stays up while the server drains).
 */
import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import type { ServerContext } from './context.js';
import type { DispatchSide } from './dispatch-side.js';
import type { BuildKit } from './server-env.js';
import { writeSnapshotFile, type SnapshotFile } from './snapshot-file.js';
import type { DeliveryWorker } from './webhooks/delivery-worker.js';

export interface ShutdownOptions {
  /** The context whose intake closes (`closing`) and whose workers stop. */
  readonly ctx: ServerContext;
  /**
   * The backend (it stops stepping before the last flush, and on Redis gives the work held here
   * back to the fleet after it), the dashboard (its sampling stops), and the options' drain timeout
   * and snapshot file.
   */
  readonly kit: Pick<BuildKit, 'backend' | 'dashboard' | 'options'>;
  readonly delivery: DeliveryWorker;
  /**
   * The channel's answers and reports received so far are handled (its turns), then its later
   * events are ignored (its provider's `detach`).
   */
  readonly side: Pick<DispatchSide, 'turns' | 'provider'>;
  /** Stops listening to the engine's anomalies. */
  readonly offAnomaly: () => void;
  readonly snapshot: () => SnapshotFile;
}

const shutdownPlugin: FastifyPluginAsync<ShutdownOptions> = async (app, parts) => {
  const { ctx, delivery, side } = parts;
  const { backend, dashboard, options } = parts.kit;
  // How long sends in flight may take to finish, in ms.
  const drainMs = options.drainTimeoutMs ?? 10_000;
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
    await side.turns.settled();
    side.provider.detach();
    ctx.notifier.stop();
    ctx.notifier.flushCampaigns();
    await delivery.stop(Math.min(drainMs, 2000));
    // The results of the drained sends, written before the host closes the store.
    backend.stop();
    await backend.persistence.flush();
    // On Redis the work this instance holds goes back to the fleet.
    await backend.release();
    if (options.snapshotFile !== undefined) {
      writeSnapshotFile(options.snapshotFile, parts.snapshot());
      app.log.info({ file: options.snapshotFile }, 'snapshot written');
    }
  });
};

export const shutdown = fp(shutdownPlugin, { name: 'sendpool-shutdown', fastify: '5.x' });
