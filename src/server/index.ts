/**
 * `sendpool/server`: the reference HTTP server of the service (spec parts 4 to 6), to run as is
 * (`runServer`, `sendpool serve`, `npm start`) or to embed (`buildServer`).
 */
export { buildServer } from './build-server.js';
export type { SendpoolServer, SendpoolControl, ServerStats } from './server-control.js';
export type { BuildServerOptions, RedisServerOptions } from './options.js';
export type { DashboardOptions } from './dashboard/options.js';
// The commands the server on Redis sends (an ioredis `Redis` or `Cluster` has them all).
export type { QueueClient } from './backends/redis/queue.js';
export type { ContactIdClient } from './backends/redis/contact-ids.js';
export type { SharedWebhooksClient } from './backends/redis/shared-webhooks.js';
export type { SharedBlocklistClient } from './backends/redis/shared-blocklist.js';
export type { RedisResetEvent } from './backends/redis/reset.js';
export { DEFAULT_CONNECTIONS, type ConnectionOptions, type ResolvedConnections } from './connections.js';
export type { MetricsOptions, MetricsListen } from './metrics-access.js';
export { ServerOptionsError, isServerOptionsError } from './ports/errors.js';
export { MissingPeerError, isMissingPeerError, PEER_RANGES, type PeerName } from '../runtime/peers.js';
export { runServer, type RunServerOptions, type RunningServer } from './run-server.js';

// The Channel port and the simulated channel
export type {
  Channel,
  ChannelMemory,
  ChannelSink,
  LaterStatus,
  MessageStatusUpdate,
  AttendanceReport,
  AttendanceMessageReport,
  OutgoingSms,
  SmsSendResult,
  SmsStatus,
  TemplateStatusUpdate,
  NumberLimitsUpdate,
  NumberStatusUpdate,
  NumberQualityUpdate,
  AccountNotice,
  BusinessLimitUpdate,
  InboundRequest,
  InboundResponse,
  InboundRoute,
} from './ports/channel.js';
export { createSimulatedChannel, type SimulatedChannel, type SimulatedChannelOptions, type SimulatedSend, type DelayRange, type WeightedCode } from './channels/simulated.js';
export { composeChannels } from './channels/compose.js';
export type { ComposedChannels } from './channels/compose.js';
export { createSmppChannel, type SmppChannel, type SmppChannelStats } from './channels/smpp-channel.js';
export type { SmppChannelOptions, SmppEvent, BackoffRange } from './channels/smpp-options.js';
export type { SmscOptions, SmppBindMode } from './channels/smpp-smscs.js';
export type { SmscStats } from './channels/smpp-pool.js';
export { RECEIPT_STATES, type ReceiptOutcome } from './channels/smpp-receipt.js';

// Keys and tenants
export { API_KEYS_ENV, MIN_KEY_LENGTH, ApiKeysError, checkApiKeys, isApiKeysError, loadApiKeys, type ApiKeyEntry, type CompanyApiKey, type OperatorApiKey } from './tenants.js';

// Reports, snapshots, worker options
export { BUILTIN_REPORTS, type ReportRecord } from './report-service.js';
export type { ReportContext, ReportFile, ReportGenerator } from './report-types.js';
export type { ReportPeriod } from './report-period.js';
export type { ActivityLogView, AttendanceLogEntry, MessageLogEntry } from './activity-log.js';
export {
  SERVER_SNAPSHOT_FORMAT,
  SERVER_SNAPSHOT_VERSION,
  SnapshotFileError,
  isSnapshotFileError,
  readSnapshotFile,
  writeSnapshotFile,
  type ServerStateSnapshot,
  type SnapshotFile,
} from './snapshot-file.js';
export type { ServerContact } from './contacts.js';
export type { BlockEntry, BlockSource, BlocklistRow } from './blocklist.js';
export type { CampaignPhonesRow } from './campaign-phones.js';
export type { SentPhonesRow } from './sent-phones.js';
export type { DeadLetter, DeadLetterOptions } from './dead-letters.js';
export type { DispatchOptions } from './dispatch-worker.js';
export type { SmsOptions } from './sms-worker.js';
export type { DeliveryOptions } from './webhooks/delivery-worker.js';
export type { NotifierSnapshot, SendAgain, TrackedMessage } from './notifier.js';
export type { EnqueuedRun, RunContact } from './ports/persistence.js';

// Durable state (the embedded database)
export { openSqliteStorage } from './backends/sqlite/open-storage.js';
export type {
  ServerStorage,
  SqliteStorageOptions,
  StorageStep,
  StoredState,
  StoredBlockEntry,
  StoredCampaignPhones,
  StoredSentPhones,
  StoredChannelMemory,
  StoredIdempotency,
  StoredRowChanges,
  StoredStatistics,
} from '../storage/sqlite-storage.js';
export { StoreDamagedError, type LostContacts } from '../storage/store-check.js';
export { StateFileError, isStateFileError, type StateFileProblem } from '../runtime/state-file-error.js';
export { StoreWriteError, type JournalReport, type RecoveredLoss, type StoreRecovery } from '../storage/store-open.js';
export type { LostSubmission } from '../storage/intake-journal.js';
export type { LostRows } from '../storage/store-salvage.js';
