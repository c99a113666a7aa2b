/**
 * The notifier (notifier.ts) with its hooks: where it stages events (the backend's), what an
 * opt-out and a settled campaign change in the books, and the two parts made after it that it
 * calls: the delivery worker it wakes, the dispatch side it hands the provider's late failures to.
 * What a store kept of it (statistics, tracked messages, configurations) is loaded by the store's
 * components (backends/sqlite/components/) once the parts are made.
 */
import type { Outbox } from '../events/outbox.js';
import type { ServerBooks } from './books.js';
import { Notifier, type NotifierDeps } from './notifier.js';
import type { BuildKit } from './server-env.js';

/** What the provider's later failure of a sent message does (late-failures.ts). */
export type LateFailureHook = NonNullable<NotifierDeps['onLateFailure']>;

export interface NotifierParts {
  /** The books an event changes: the activity of the reports, the blocklist (opt-outs), the campaigns' phones. */
  readonly books: Pick<ServerBooks, 'activity' | 'blocklist' | 'campaignPhones'>;
  readonly outbox: Outbox;
  /** Events were enqueued: the delivery worker's kick. */
  readonly onEnqueued: () => void;
  /** The provider reported a sent message FAILED later: the dispatch side's late failures. */
  readonly onLateFailure: LateFailureHook;
}

export function createNotifier(kit: BuildKit, parts: NotifierParts): Notifier {
  const { env, options, backend, log, metrics } = kit;
  const { activity, blocklist, campaignPhones } = parts.books;
  return new Notifier(
    {
      activity,
      clock: env.clock,
      random: env.random,
      outbox: parts.outbox,
      onEnqueued: parts.onEnqueued,
      batchIntervalMs: env.batchIntervalMs,
      failureWindowMs: env.failureWindowMs,
      maxTracked: env.maxTracked,
      secrets: options.webhookSecrets ?? {},
      onEvent: (family, count) => metrics()?.webhookEvents.inc({ family }, count),
      onRunError: (runId, index, error) => log.error({ err: error, runId, index }, 'an ENQUEUED notification could not be built; skipped'),
      ...backend.notifier,
      // A failure the provider reports later goes through the error table (late-failures.ts).
      onLateFailure: parts.onLateFailure,
      onOptOut: (companyId, phone, at) => {
        if (blocklist.add(companyId, phone, at, 'reply')) backend.blocklistChanged();
      },
      // A campaign's phones are kept for as long as its statistics keep its contacts.
      onCampaignSettled: (companyId, campaignId) => campaignPhones.drop(companyId, campaignId),
    },
    options.restore?.notifier,
  );
}
