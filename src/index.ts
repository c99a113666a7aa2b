/**
 * `sendpool`, the package's main entry: the engine, the fleet description, the ports (`Clock`,
 * `Store`), the dispatch loop, the capacity forecast, the channel error table and the typed errors.
 * The other entries are listed in package.json `exports`: `sendpool/contract` (the HTTP contract),
 * `sendpool/events` (webhook payloads, statistics, signing), `sendpool/server`, `sendpool/redis`
 * and `sendpool/whatsapp`. What no entry exports is internal.
 */

// Engine
export { createEngine, type EngineOptions } from './engine.js';
export {
  Engine,
  type AssignReason,
  type Assignment,
  type AssignResult,
  type BatchResult,
  type BusinessCapacity,
  type BusinessOutput,
  type CoreEngineOptions,
  type EngineChanges,
  type NumberChange,
  type NumberDefaults,
  type NumberLimitsChange,
  type NumberView,
  type NumericArray,
  type PortfolioView,
  type StatusChange,
  type StatusChangeOptions,
  type TemplateState,
  type TemplateTypeInfo,
  type TemplateTypeOutput,
} from './core/engine.js';

// Fleet description
export type {
  BusinessDescription,
  FleetDescription,
  NumberDescription,
  NumberStatus,
  PortfolioDescription,
  TemplateDescription,
  TemplateStatus,
  TemplateTypeDescription,
  TemplateVariable,
  WhatsAppBodyParameter,
  WhatsAppButton,
  WhatsAppHeader,
  WhatsAppMediaHeader,
  WhatsAppNumberIds,
  WhatsAppTemplateComponents,
  WhatsAppTemplateIds,
  WhatsAppTextHeader,
} from './core/fleet.js';
export { MAX_MESSAGES_PER_SECOND, MAX_MESSAGING_LIMIT_24H, MAX_THROUGHPUT_PER_HOUR } from './core/fleet.js';
export { validateFleet, type Fleet, type FleetBusiness, type FleetNumber, type FleetPortfolio, type FleetTemplate, type FleetTemplateType, type FleetValidation } from './core/fleet-validate.js';
export type { FleetWhatsAppComponents } from './core/fleet-whatsapp-components.js';

// Ports
export { ManualClock, type Clock } from './core/clock.js';
export { SystemClock, systemClock } from './runtime/system-clock.js';
export type { NumberLimits, NumberWindows, Store, StoreSnapshot, WindowUsage } from './core/limits/store.js';
export { MemoryStore, type MemoryStoreNumberState, type MemoryStoreOptions, type MemoryStoreSnapshot } from './core/limits/memory-store.js';
export { RecipientWindow, type RecipientWindowChanges, type RecipientWindowSnapshot } from './core/limits/recipient-window.js';
export type { PortfolioChange, PortfolioSnapshot, PortfolioSource } from './core/portfolio-types.js';
export { SNAPSHOT_FORMAT, SNAPSHOT_VERSION, type EngineSnapshot, type NumberStatusSnapshot, type PoolSnapshot, type TemplateStatusSnapshot } from './core/snapshot.js';

// Capacity forecast
export { forecast, type FleetChange, type Forecast, type ForecastHour, type ForecastInput, type ForecastLimit, type LimitPhase, type NumberForecast } from './core/forecast.js';

// The dispatch loop
export type { Submission, SubmissionContact } from './core/submission.js';
export type {
  Blocker,
  ContactOutcome,
  ContactRejection,
  DispatchAnomaly,
  DispatchCounts,
  OutgoingMessage,
  PollOptions,
  QueueStatus,
  RejectionReason,
  ReportResult,
  SendOutcome,
  SubmissionStatus,
  SubmitTicket,
  TerminalState,
} from './core/dispatch/types.js';
export type { DispatchSnapshot, FlowSnapshot, QueueSnapshot, SubmissionChange, SubmissionSnapshot } from './core/dispatch/dispatch-snapshot.js';
// What `createMessageBatch`, `createOutcomeBatch` and `takeChanges` hand the host: types to name, built by the engine.
export type { MessageBatch } from './core/dispatch/message-batch.js';
export type { OutcomeBatch } from './core/dispatch/outcome-batch.js';
export type { DispatchChanges } from './core/dispatch/dispatcher.js';
export { applyChanges, emptyRows, mergePortfolio, mergeSubmission, snapshotFromRows, type EngineRows, type PortfolioRow, type SubmissionRow } from './core/rows.js';

// Channel errors
export {
  CHANNEL_ERRORS,
  UNKNOWN_ACTION,
  MAX_BACKOFF_MS,
  MAX_TRANSPORT_ATTEMPTS,
  PAIR_INTERVAL_MS,
  actionForCode,
  blockingCause,
  type BlockingCause,
  channelError,
  failureReason,
  TRANSPORT_FAILURES,
  type TransportFailure,
  type TransportFailureInfo,
  type ChannelErrorInfo,
  type FailureAction,
} from './core/channel-errors.js';
export { renderTemplate, scanPlaceholders, type PlaceholderScan } from './core/template-text.js';

// Errors and problems
export {
  ArgumentError,
  FleetValidationError,
  NotFoundError,
  SnapshotError,
  SubmissionError,
  isArgumentError,
  isFleetValidationError,
  isNotFoundError,
  isSnapshotError,
  isSubmissionError,
  type NotFoundKind,
} from './core/errors.js';
export { describeValue, type Problem } from './core/problems.js';
