/**
 * The `Channel` port: what the server needs from the host's provider (the chat channel's API and
 * the SMS gateway). The host implements it; the default is the simulated channel
 * (`channels/simulated.ts`). Sending is a promise of what the provider answered at once; everything
 * that happens later (delivery, read, reply, an attendance, an SMS delivery report or reply) is
 * reported to the {@link ChannelSink} the server attaches, under the ids the server handed out.
 */
import type { NumberDefaults, NumberLimitsChange } from '../../core/engine.js';
import type { OutgoingMessage, SendOutcome } from '../../core/dispatch/types.js';
import type { SmsSend } from '../../contract/mapping.js';

/** Statuses a provider reports after a message was accepted (spec 3, HSM message status). */
export type LaterStatus = 'SERVER' | 'DEVICE' | 'READ' | 'REPLIED' | 'EXPIRED' | 'FAILED';

/** A status change the provider reported for a message the server sent. */
export interface MessageStatusUpdate {
  /** The `messageId` of the {@link OutgoingMessage} handed to {@link Channel.send}. */
  readonly messageId: string;
  readonly status: LaterStatus;
  /** Clock time of the change; defaults to the server's clock when it arrives. */
  readonly at?: number;
  /** Business-scoped user id of the recipient (SERVER and later). */
  readonly bsuid?: string | null;
  /** Profile username of the recipient. */
  readonly username?: string | null;
  /** For FAILED: the channel's error code (spec 7.1 reason is built from it). */
  readonly failureCode?: number;
  /** For REPLIED: the reply is an opt-out. */
  readonly blocklistResponse?: boolean;
  /** For REPLIED: the reply's text (kept for an attendance). */
  readonly replyText?: string;
}

/** One message of a closed attendance, as the provider's attendance system tells it. */
export interface AttendanceMessageReport {
  readonly sender: 'campaign' | 'client' | 'bot' | { readonly attendantId: number };
  readonly type: 'text' | 'audio' | 'image' | 'video' | 'file';
  /** For the campaign's message, empty: the server fills in the text it sent. */
  readonly text: string;
  readonly file?: string | null;
  readonly at: number;
}

/** An attendance that closed; opened by a reply to a message the server sent. */
export interface AttendanceReport {
  /** The message whose reply opened the attendance. */
  readonly messageId: string;
  readonly attendanceId: number;
  readonly ticketId: number;
  readonly ticketUuid: string;
  readonly closedAt: number;
  readonly occurrence?: { readonly id: number; readonly name: string } | null;
  readonly user?: { readonly id: number; readonly name: string } | null;
  readonly messages: readonly AttendanceMessageReport[];
  readonly survey?: {
    readonly id: number;
    readonly name: string;
    readonly status: 'completed' | 'declined' | 'failed' | 'expired' | 'cancelled';
    readonly startedAt: number;
    readonly endedAt?: number;
    readonly answers: readonly { readonly question: string; readonly questionType: 'scale' | 'text'; readonly answer: string; readonly answeredAt: number }[];
  } | null;
}

/** An SMS handed to the channel: the contract's `SmsSend` with the server's id. */
export interface OutgoingSms extends SmsSend {
  /** `<request_id>:<index>`: unique, and the `sms_id` of the DLR and MO callbacks. */
  readonly smsId: string;
  readonly requestId: string;
  readonly companyId: number;
  /**
   * Clock time the server accepted it (its 202): a gateway that retries counts the SMS's validity
   * from it, across restarts. @default absent (an SMS kept before this was): from when the channel is handed it
   */
  readonly acceptedAt?: number;
}

/** What the SMS gateway answered at once. */
export type SmsSendResult = { readonly status: 'sent' } | { readonly status: 'failed'; readonly reason: string };

/** Delivery status of an SMS (the DLR's `status`). */
export type SmsStatus = 'SENT' | 'DELIVERED' | 'FAILED' | 'EXPIRED';

/** The platform changed a template's status (paused for quality, disabled, approved again). */
export interface TemplateStatusUpdate {
  readonly templateId: number;
  readonly status: 'active' | 'paused' | 'disabled';
  /** With 'paused': clock time the pause ends by itself, when the provider says. */
  readonly until?: number;
  /** The provider's words, for the log. */
  readonly reason?: string;
}

/** The platform changed a number's limits (a messaging-limit tier, a throughput level). */
export interface NumberLimitsUpdate {
  readonly phone: string;
  readonly limits: NumberLimitsChange;
  /** The provider's words, for the log. */
  readonly reason?: string;
}

/**
 * The platform paused or resumed a number (its account restricted, disabled or deleted, and that
 * lifted). A resume brings back only a number the provider paused: one an operator or a failed
 * send paused since stays as it is.
 */
export interface NumberStatusUpdate {
  readonly phone: string;
  readonly status: 'active' | 'paused';
  /** With 'paused': clock time the pause ends by itself, when the provider says. */
  readonly until?: number;
  /** The provider's words, for the log and the dashboard. */
  readonly reason?: string;
}

/** The provider's word on a number that changes none of its limits (a quality rating, a flag). */
export interface NumberQualityUpdate {
  readonly phone: string;
  readonly reason: string;
  /**
   * true: the number was flagged for low quality; false: the flag was lifted.
   * @default absent: the event says nothing of a flag
   */
  readonly flagged?: boolean;
}

/** The provider's word on an account (a WABA) that steers nothing: a violation, a disabling scheduled. */
export interface AccountNotice {
  /** The provider's id of the account. */
  readonly accountId: string;
  /** The account's numbers in the fleet. */
  readonly phones: readonly string[];
  readonly reason: string;
}

/**
 * The messaging limit of a business portfolio, shared by all its numbers (unique users in a moving
 * 24 h), as the provider reported it with one of its accounts. Not a limit of any one number.
 */
export interface BusinessLimitUpdate {
  /** The provider's id of the account (WABA) the report came with. */
  readonly accountId: string;
  /** The account's numbers in the fleet. */
  readonly phones: readonly string[];
  readonly limit: number;
  /** The provider's name of the limit (TIER_2K…). */
  readonly tier: string;
  /** The provider's words, for the log. */
  readonly reason?: string;
}

/** Where a channel reports what happens after a send. The server implements it. */
export interface ChannelSink {
  /**
   * Resolves once everything reported so far (and every change to the {@link ChannelMemory}) is
   * written: true, or false when it could not be (the durable server failed closed). A channel
   * acknowledges a provider's webhook or receipt only after it, and with a temporary error on false,
   * so the provider delivers again what a crash would have lost.
   * @default absent: the server keeps nothing across a restart (acknowledge at once)
   */
  written?(): Promise<boolean>;
  /**
   * Makes the server hold what it remembers of these messages and SMS before the channel reports
   * on them: on the server on Redis another instance may have sent them (or died since).
   * @default absent: the server holds all it knows
   */
  recall?(ids: { readonly messageIds?: readonly string[]; readonly smsIds?: readonly string[] }): Promise<void>;
  messageStatus(update: MessageStatusUpdate): void;
  attendanceClosed(report: AttendanceReport): void;
  smsStatus(update: { readonly smsId: string; readonly status: SmsStatus; readonly reason?: string | null; readonly at?: number }): void;
  smsReply(reply: { readonly smsId: string; readonly text: string; readonly at?: number }): void;
  /** Steers the engine: a template leaves or rejoins the pools (failover without a failed send). */
  templateStatus?(update: TemplateStatusUpdate): void;
  /** Steers the engine: a number's limits change, and with them the output of its pools. */
  numberLimits?(update: NumberLimitsUpdate): void;
  /** Steers the engine: a number leaves its pools (until a time, when the provider says) or comes back. */
  numberStatus?(update: NumberStatusUpdate): void;
  /**
   * The provider's word on a number that changes none of its limits (a quality rating, a flag):
   * logged and shown to operators (the dashboard), nothing steered.
   */
  numberQuality?(update: NumberQualityUpdate): void;
  /** The provider's word on an account that steers nothing: logged and shown to operators. */
  accountNotice?(update: AccountNotice): void;
  /**
   * A business portfolio's messaging limit: logged and shown to operators. The engine has no
   * limit shared by several numbers, so it steers nothing yet (docs/channels.md).
   */
  businessLimit?(update: BusinessLimitUpdate): void;
}

/**
 * A small key-value memory the server lends a channel for the provider's ids it must find again:
 * a platform message id to our message id, an SMSC message id to an SMS id, a user's phone to
 * the last message sent to it. Bounded, the oldest entries forgotten first (at least the most
 * recent half of its bound are kept). The durable server writes each change with its next step
 * and gives the entries back after a restart, so a reply or a delivery receipt for a message sent
 * before it still finds its message. Keep keys and values short (ids, not texts): on the durable
 * server every `set` is a row written. Keys of different channels sharing one memory need
 * prefixes of their own.
 */
export interface ChannelMemory {
  get(key: string): string | undefined;
  set(key: string, value: string): void;
  delete(key: string): void;
  /** Entries held, when the memory can tell (for a channel's counters). */
  readonly size?: number;
  /**
   * Makes `get` answer these keys if any instance of the fleet knows them (the server on Redis asks
   * Redis for those it does not hold). Call it before handling a provider's event.
   * @default absent: `get` answers all the memory knows
   */
  recall?(keys: readonly string[]): Promise<void>;
  /**
   * Like {@link recall}, but for keys this instance holds too: `get` then answers what the fleet
   * keeps now (another instance may have changed or deleted them since). Call it before a decision
   * that another instance may have taken already (the SMPP channel, before it expires an SMS).
   * @default absent: what `get` answers is all the memory knows
   */
  reread?(keys: readonly string[]): Promise<void>;
  /**
   * Every entry whose key starts with `prefix`: the ones held, and on the server on Redis the ones
   * the fleet keeps (read from Redis, not held after). It reads the whole memory: call it once, at
   * start (the SMPP channel finds the SMS whose receipt it was waiting for before a restart).
   * @default absent: the channel cannot find what it set before a restart
   */
  entries?(prefix: string): Promise<ReadonlyMap<string, string>>;
}

/** A request the provider made to the server (its webhooks), as a channel's route receives it. */
export interface InboundRequest {
  readonly method: 'GET' | 'POST';
  /** Query parameters (the last value of a repeated one). */
  readonly query: Readonly<Record<string, string | undefined>>;
  /** Header names in lowercase. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The body exactly as received (signatures are computed over it). Empty for GET. */
  readonly rawBody: Buffer;
}

/** What a channel's route answers the provider. */
export interface InboundResponse {
  readonly status: number;
  readonly body?: string;
  /** @default 'text/plain; charset=utf-8' */
  readonly contentType?: string;
}

/**
 * An HTTP endpoint of a channel: the server serves it without an API key (the provider cannot send
 * one; the channel checks the provider's own proof, e.g. a signature) and hands it the raw body.
 */
export interface InboundRoute {
  /** Path on the server, e.g. `/whatsapp/webhook`. */
  readonly path: string;
  handle(request: InboundRequest): InboundResponse | Promise<InboundResponse>;
}

/** The host's provider. */
export interface Channel {
  /**
   * Hands one template message to the provider. Resolve with what it answered at once:
   * `{ status: 'sent' }` when accepted, `{ status: 'failed', code }` with the provider's error
   * code (132015 "template paused" makes the engine fail the message over to another template).
   * A rejection of the promise counts as an unknown failure (a contact retry).
   */
  send(message: OutgoingMessage): Promise<SendOutcome>;
  /** Hands one SMS to the gateway. */
  sendSms(sms: OutgoingSms): Promise<SmsSendResult>;
  /**
   * Called once by the server before the first send, with where to report later events and the
   * memory to keep the provider's ids in (a channel that needs none ignores it; a host attaching
   * without one leaves the channel to its own, in-process memory).
   */
  attach(sink: ChannelSink, memory?: ChannelMemory): void;
  /** Stops timers and connections; later events are dropped. */
  close?(): Promise<void> | void;
  /** Endpoints the provider calls (its webhooks); the server serves them. @default none */
  readonly inbound?: readonly InboundRoute[];
  /**
   * The provider's limits for a number the fleet gives none of (the WhatsApp Cloud API: 80
   * messages a second): the server hands them to the engine at start (`engine.setNumberDefaults`),
   * so such a number is paced at the provider's rate, and so are numbers of a fleet loaded later.
   * @default none: a number without a per-second rate has no per-second window
   */
  readonly numberDefaults?: NumberDefaults;
}
