/**
 * What a host hands the dispatch queue: the contacts of one send request for one
 * (business, template type). The service's POST /messenger/messages/ body maps onto this one to one
 * (see src/contract); hosts that do not use the HTTP contract build it directly.
 */

/** One recipient of a submission. */
export interface SubmissionContact {
  /** Digits including the country code, already normalised (the contract does that). */
  readonly phone: string;
  /** Values for the template placeholders `{{1}}`, `{{2}}`, … in order. @default [] */
  readonly variables?: readonly string[];
  /** CPF or CNPJ of the recipient; carried into notifications. */
  readonly document?: string;
  /** Contract reference of the recipient; carried into notifications. */
  readonly contract?: string;
  /** Free key/value pairs that come back in webhooks as `data`. */
  readonly data?: Readonly<Record<string, string>>;
}

/** A batch of contacts to send through one (business, template type). */
export interface Submission {
  readonly businessId: number;
  readonly typeId: number;
  /** Campaign the contacts belong to; campaigns sharing a pool are served fairly. */
  readonly campaignId?: number;
  readonly queueId?: number;
  readonly botId?: number;
  /** How many times a contact whose send failed is tried again. @default 0 */
  readonly maxRetries?: number;
  /**
   * Milliseconds between a failure and the contact's next try (the engine's clock unit; the HTTP
   * contract's `retry_interval` is in minutes and is converted). @default 0
   */
  readonly retryInterval?: number;
  /** Clock time after which contacts still waiting end as `expired` instead of going late. */
  readonly deadline?: number;
  /** Share of the pool against other campaigns (deficit round-robin). @default 1 */
  readonly weight?: number;
  /**
   * Retries each contact has already used, at most `maxRetries`: a contact submitted again after a
   * failure the provider reported later (a status webhook) continues its count, so its next send is
   * `is_retry` with the right `retry_index` and it has only what is left of its retries. @default 0
   */
  readonly retriesUsed?: number;
  /**
   * Clock time before which none of its contacts goes (each waits as a retry waits): a contact
   * submitted again that must wait (a recipient's pair rate limit, a retry interval). @default none
   */
  readonly notBefore?: number;
  /**
   * Its contacts go ahead of the contacts of its flow (its campaign) never handed out, instead of
   * after them: work taken over from a host that stopped, which was waiting before the work this
   * host holds. The flow keeps its turn among the others. @default false
   */
  readonly ahead?: boolean;
  readonly contacts: readonly SubmissionContact[];
}
