/** What every feature needs: the server's parts, made once (server-context.ts) when buildServer has made them all. */
import type { Clock } from '../core/clock.js';
import type { Engine } from '../core/engine.js';
import type { ContractLimits } from '../contract/limits.js';
import type { UrlPolicy } from '../contract/url-policy.js';
import type { Outbox } from '../events/outbox.js';
import type { RandomSource } from '../events/random.js';
import type { SecretKey } from '../events/hmac.js';
import type { Blocklist } from './blocklist.js';
import type { CampaignPhones } from './campaign-phones.js';
import type { SentPhones } from './sent-phones.js';
import type { Backend } from './ports/backend.js';
import type { Channel } from './ports/channel.js';
import type { DeadLetterStore } from './dead-letter-store.js';
import type { DispatchWorker } from './dispatch-worker.js';
import type { ServerMetrics } from './metrics.js';
import type { Notifier } from './notifier.js';
import type { NumberIncidents } from './number-incidents.js';
import type { ReportService } from './report-service.js';
import type { SmsWorker } from './sms-worker.js';
import type { Tenants } from './tenants.js';

export interface ServerContext {
  readonly engine: Engine;
  readonly channel: Channel;
  readonly clock: Clock;
  readonly random: RandomSource;
  readonly tenants: Tenants;
  readonly notifier: Notifier;
  /** Numbers blocked for every message (credentials refused, provider unreachable), said loudly. */
  readonly incidents: NumberIncidents;
  /** Each company's blocked phones (refused at intake). */
  readonly blocklist: Blocklist;
  /** Phones each campaign took (a phone is sent once per campaign). */
  readonly campaignPhones: CampaignPhones;
  /** Phones each business took per template type within `alreadySentWindowMs` (refused as `already_sent`). */
  readonly sentPhones: SentPhones;
  readonly outbox: Outbox;
  /** Webhook events the outbox gave up on, kept for an operator to see and replay. */
  readonly deadLetters: DeadLetterStore;
  readonly dispatch: DispatchWorker;
  readonly sms: SmsWorker;
  readonly reports: ReportService;
  readonly metrics: ServerMetrics | undefined;
  readonly limits: ContractLimits;
  readonly urlPolicy: UrlPolicy;
  readonly maxQueuedContacts: number;
  readonly maxPendingWebhooks: number;
  readonly reportTokenKey: SecretKey;
  /** On Redis: resolves once the store's view of the numbers is fresh (before output is read). */
  readonly refreshOutput: (() => Promise<void>) | undefined;
  /** Where the server's state lives (memory, the embedded database, Redis): ports/backend.ts. */
  readonly backend: Backend;
  /** Set when the server is shutting down: intake answers 503. */
  closing: boolean;
  /** Why intake closed when it was not a shutdown (a durable write failed): the 503s say it. @default undefined */
  closedBecause?: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Company of the API key of the request (0 before authentication, and for an operator key). */
    companyId: number;
    /** The request carries an operator key: it sees every company's numbers, templates and queues. */
    operator: boolean;
  }
}

/** Webhook events not delivered yet: in the outbox, and requests' ENQUEUED notifications not built yet. */
export function webhooksPending(ctx: Pick<ServerContext, 'outbox' | 'notifier'>): number {
  return ctx.outbox.size + ctx.notifier.unbuilt;
}
