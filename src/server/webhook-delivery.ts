/**
 * The delivery worker (webhooks/delivery-worker.ts) with what its outcomes do: a delivered event's
 * record goes (or its run's, once the run ends), a dead-lettered one is kept for the operator
 * (the backend's dead letters) and told to the host (`onDeadLetter`), and both are counted (the
 * server's stats, /metrics, the dashboard).
 */
import { Outbox } from '../events/outbox.js';
import { deadLetterOf } from './dead-letters.js';
import type { Notifier } from './notifier.js';
import type { WrittenEvent } from './ports/persistence.js';
import type { BuildKit, ServerEnv } from './server-env.js';
import type { BuildServerOptions } from './options.js';
import { DeliveryWorker } from './webhooks/delivery-worker.js';

/** The outbox of webhook events, restored from a snapshot file when the host gave one. */
export function openOutbox(env: ServerEnv, options: BuildServerOptions): Outbox {
  const outboxOptions = { random: env.random, ...options.outbox };
  return options.restore ? Outbox.restore(options.restore.outbox, outboxOptions) : new Outbox(outboxOptions);
}

export interface DeliveryParts {
  readonly outbox: Outbox;
  readonly notifier: Notifier;
}

/** Webhook events delivered and dead-lettered so far (the server's stats). */
export interface DeliveryCounters {
  readonly delivered: number;
  readonly deadLettered: number;
}

export interface WebhookDelivery {
  readonly worker: DeliveryWorker;
  readonly counters: DeliveryCounters;
  /** Webhook events and runs written with their step (or read back, or claimed from Redis): delivery starts. */
  readonly deliver: (records: readonly WrittenEvent[]) => void;
}

export function createDelivery(kit: BuildKit, parts: DeliveryParts): WebhookDelivery {
  const { env, options, backend, dashboard, log, metrics } = kit;
  const { notifier } = parts;
  const counters = { delivered: 0, deadLettered: 0 };
  const worker = new DeliveryWorker(
    {
      outbox: parts.outbox,
      clock: env.clock,
      secretOf: (companyId) => notifier.secretOf(companyId),
      allowPrivateTargets: options.allowPrivateWebhookTargets ?? false,
      userAgent: 'sendpool-webhooks/1',
      onAttempt: (family, result) => metrics()?.webhookAttempts.inc({ family, result }),
      // A request's ENQUEUED notifications are built as the receiver has room (enqueued-runs.ts).
      feed: (now) => notifier.feedRuns(now),
      onOutcomes: (outcomes) => {
        // A run's notification has no record of its own: its run's goes when the run ends (onRunDone).
        const ended = outcomes.filter((o) => !notifier.runEventEnded(o.event.id, o.kind === 'dead-lettered'));
        if (ended.length > 0) backend.persistence.delivered(ended.map((o) => o.event.id));
        dashboard?.delivered(outcomes);
        for (const o of outcomes) {
          if (o.kind === 'delivered') counters.delivered++;
          else {
            counters.deadLettered++;
            log.warn({ family: o.event.family, eventId: o.event.id, attempts: o.attempts, lastError: o.lastError }, 'webhook dead-lettered');
            // In the step that ends its delivery (persistence.delivered above, or its run's record).
            backend.deadLetters.deadLettered(deadLetterOf(o));
            options.onDeadLetter?.(o);
          }
          metrics()?.webhookOutcomes.inc({ family: o.event.family, outcome: o.kind });
        }
      },
    },
    options.delivery,
  );
  const deliver = (records: readonly WrittenEvent[]) => {
    notifier.written(records);
    worker.kick();
  };
  return { worker, counters, deliver };
}
