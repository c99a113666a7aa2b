/**
 * The parts buildServer hands a backend once made (`ServerBackend.attach`, ports/server-backend.ts),
 * as the server's own classes: the backends of one process (local.ts, memory/, sqlite/) collect
 * their durable steps from them. A backend that needs less asks for the port's `ServerParts`
 * (ports/server-parts.ts), which these are.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Engine } from '../../core/engine.js';
import type { ActivityLog } from '../activity-log.js';
import type { Blocklist } from '../blocklist.js';
import type { CampaignPhones } from '../campaign-phones.js';
import type { ChannelMemoryStore } from '../channels/memory.js';
import type { DeadLetterBook } from '../dead-letters.js';
import type { DispatchWorker } from '../dispatch-worker.js';
import type { Notifier } from '../notifier.js';
import type { WrittenEvent } from '../ports/persistence.js';
import type { ServerParts } from '../ports/server-parts.js';
import type { ReportService } from '../report-service.js';
import type { SentPhones } from '../sent-phones.js';
import type { SmsWorker } from '../sms-worker.js';

/** The parts buildServer made over the backend's hooks, handed to it once made. */
export interface BackendParts extends ServerParts {
  readonly engine: Engine;
  readonly notifier: Notifier;
  readonly dispatch: DispatchWorker;
  readonly sms: SmsWorker;
  readonly channelMemory: ChannelMemoryStore;
  readonly blocklist: Blocklist;
  readonly campaignPhones: CampaignPhones;
  readonly sentPhones: SentPhones;
  readonly activity: ActivityLog;
  readonly reports: ReportService;
  readonly deadLetterBook: DeadLetterBook;
  /** Puts written webhook events in the outbox (runs to the notifier) and kicks the delivery worker. */
  readonly deliver: (records: readonly WrittenEvent[]) => void;
  /** Webhook signing secrets the host set, by company id. */
  readonly secrets: Readonly<Record<number, string>>;
  readonly log: FastifyBaseLogger;
  /** Durable writes fail: intake and sending stop for good, and the 503s say `because`. */
  readonly failClosed: (because: string) => void;
}
