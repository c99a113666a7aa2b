/**
 * The ServerContext the features are given, made once every part it holds is made (the backend
 * attached, the metrics made): nothing of it is filled in later. `closing` is the one field that
 * changes: the shutdown, or a backend whose durable writes fail, closes intake.
 */
import type { ServerBooks } from './books.js';
import type { ServerContext } from './context.js';
import type { BuildKit } from './server-env.js';

/** The parts the context holds besides the kit's (the backend, its dead letters, the metrics) and the options'. */
export interface ContextParts extends Pick<ServerContext, 'tenants' | 'notifier' | 'incidents' | 'outbox' | 'dispatch' | 'sms' | 'reports'> {
  readonly books: Pick<ServerBooks, 'blocklist' | 'campaignPhones' | 'sentPhones'>;
}

/** The context, once the backend is attached (its dead letters are made then) and the metrics made. */
export function createServerContext(kit: BuildKit, parts: ContextParts): ServerContext {
  const { env, options, backend } = kit;
  const { books } = parts;
  return {
    tenants: parts.tenants,
    notifier: parts.notifier,
    incidents: parts.incidents,
    outbox: parts.outbox,
    dispatch: parts.dispatch,
    sms: parts.sms,
    reports: parts.reports,
    blocklist: books.blocklist,
    campaignPhones: books.campaignPhones,
    sentPhones: books.sentPhones,
    backend,
    deadLetters: backend.deadLetters,
    metrics: kit.metrics(),
    engine: env.engine,
    channel: env.channel,
    clock: env.clock,
    random: env.random,
    reportTokenKey: env.reportTokenKey,
    limits: options.limits ?? {},
    urlPolicy: { allowPrivateHosts: options.allowPrivateWebhookTargets ?? false },
    maxQueuedContacts: options.maxQueuedContacts ?? 1_000_000,
    maxPendingWebhooks: options.maxPendingWebhooks ?? 1_000_000,
    refreshOutput: options.redis?.refreshOutput,
    closing: false,
  };
}
