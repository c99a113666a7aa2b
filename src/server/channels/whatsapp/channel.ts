/**
 * The WhatsApp Cloud API channel: the `Channel` port over Meta's Graph API.
 *
 * Sending: each message is one `POST /{version}/{phone-number-id}/messages` of a template message
 * (request.ts), over keep-alive connections shared by every number (an undici Pool: its request
 * API is several times cheaper per call than `fetch`, which is what lets one instance push tens of
 * thousands of messages a second). The sends of one number waiting for the platform at once are
 * bounded by its in-flight window, which follows the number's rate times the platform's answer
 * time (gate.ts), up to `maxInFlightPerNumber`. The answer becomes the engine's outcome through the
 * one error table (answer.ts, `CHANNEL_ERRORS`, `TRANSPORT_FAILURES`); a throttling answer carries
 * the number's rest: its `Retry-After`, or the table's rest escalated per number (throttles.ts).
 * The engine paces each number; the channel tells the server the platform's default rate for the
 * numbers the fleet gives none (`numberDefaults`).
 *
 * Receiving: the channel serves Meta's webhooks on `webhookPath` (`inbound`): the subscription
 * handshake, and notifications refused unless their `X-Hub-Signature-256` is the app secret's
 * HMAC of the raw body. Events Meta delivers twice are acted on once. Statuses become later
 * statuses of the message, a user's reply becomes REPLIED and opens an attendance, template,
 * number and account events steer the engine through the sink (`templateStatus`, `numberLimits`,
 * `numberStatus`), and what steers nothing is reported to operators (`numberQuality`,
 * `accountNotice`, `businessLimit`). On a durable
 * server a notification is answered 200 only once what it did is written (`sink.written`), else
 * 503, so Meta delivers again what a crash would lose.
 *
 * What a reply needs of the message it answers (sent-record.ts) is kept in the `ChannelMemory` the
 * server lends (written to its database when it has one), so a reply to a message sent before a
 * restart still finds it; attached without one, the channel keeps it in memory of its own.
 */
import { Pool } from 'undici';
import type { OutgoingMessage, SendOutcome } from '../../../core/dispatch/types.js';
import type { Channel, ChannelMemory, ChannelSink, InboundRequest, InboundResponse, LaterStatus, OutgoingSms, SmsSendResult } from '../../ports/channel.js';
import { BoundedMap } from '../../lib/bounded-map.js';
import { ChannelMemoryStore } from '../memory.js';
import { classifyAnswer, classifyError, parseRetryAfter, restedOutcome } from './answer.js';
import { Attendances } from './attendances.js';
import { Gate, InFlightWindow } from './gate.js';
import { WhatsAppChannelError, resolveWhatsAppOptions, type ResolvedWhatsAppOptions, type WhatsAppChannelOptions } from './options.js';
import { secretProblem } from '../../lib/option-checks.js';
import { accountChange, businessLimitOf, flagOf, numberLimitsOf, templateChange } from './platform-changes.js';
import { templateMessageBody, templatePart, type TemplateForPart, type TemplatePart } from './request.js';
import { decodeSent, encodeSent, OPTED_OUT, PHONE_KEY, REPLIED, REPLIED_KEY, WAMID_KEY, type SentRecord } from './sent-record.js';
import { sameSecret, verifySignature } from './signature.js';
import { Throttles } from './throttles.js';
import { readWebhook, type StatusValue, type WebhookEvent } from './webhook-events.js';

/** Counters of the channel, for hosts, metrics and tests. */
export interface WhatsAppChannelStats {
  /** Sends waiting for the platform's answer. */
  readonly inFlight: number;
  /** Sends waiting for a slot of their number. */
  readonly waiting: number;
  /** The largest in-flight window of a number now (docs/channels.md, "Pacing"). */
  readonly maxWindow: number;
  /** Numbers resting after a throttle (130429 or a bare 429) and not yet sending fine again. */
  readonly throttledNumbers: number;
  readonly sent: number;
  readonly failed: number;
  /** Entries of the memory of platform ids (two or three a sent message: its wamid, its recipient). */
  readonly tracked: number;
  readonly openAttendances: number;
  /** Webhook notifications received with a valid signature. */
  readonly webhooks: number;
  /** Webhook notifications refused (missing or wrong signature). */
  readonly forged: number;
  /** Webhook events dropped because they were seen before. */
  readonly duplicates: number;
  /** Statuses `held_for_quality_assessment` received (a paced template's message held by the platform). */
  readonly held: number;
}

/** The WhatsApp channel, with its counters. */
export interface WhatsAppChannel extends Channel {
  stats(): WhatsAppChannelStats;
  /**
   * Replaces the access token: every send from now on carries it (sends already at the platform
   * keep the old one). For an expired or revoked token (190): the numbers it blocked send again at
   * their next try. Throws `WhatsAppChannelError` for a token that cannot be one (as the option).
   */
  setAccessToken(token: string): void;
}

const RETRY_AFTER = 'retry-after';

/** The handler of one exchange (undici's dispatch handler): a class, so a send allocates one object, not five closures. */
class Exchange {
  statusCode = 0;
  /** The `Retry-After` header of a refusal, when it has one. */
  retryAfter: string | undefined;
  #first: Buffer | undefined;
  #more: Buffer[] | undefined;

  readonly #resolve: (exchange: Exchange) => void;
  readonly #reject: (error: Error) => void;

  constructor(resolve: (exchange: Exchange) => void, reject: (error: Error) => void) {
    this.#resolve = resolve;
    this.#reject = reject;
  }

  onConnect(): void {}

  onComplete(): void {
    this.#resolve(this);
  }

  onError(error: Error): void {
    this.#reject(error);
  }

  onHeaders(statusCode: number, headers: Buffer[] | string[] | null): boolean {
    this.statusCode = statusCode;
    // Only a refusal may carry a Retry-After worth reading; an acceptance's headers are not looked at.
    if (statusCode >= 400 && headers) {
      for (let i = 0; i + 1 < headers.length; i += 2) {
        const name = headers[i]!;
        if (name.length === RETRY_AFTER.length && name.toString().toLowerCase() === RETRY_AFTER) this.retryAfter = headers[i + 1]!.toString();
      }
    }
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.#first === undefined) this.#first = chunk;
    else (this.#more ??= [this.#first]).push(chunk);
    return true;
  }

  text(): string {
    if (this.#more) return Buffer.concat(this.#more).toString('utf8');
    return this.#first === undefined ? '' : this.#first.toString('utf8');
  }
}

/** The smallest in-flight window of a number, and the window before anything was measured. */
const MIN_WINDOW = 4;
const INITIAL_WINDOW = 64;

const LATER: Readonly<Record<Exclude<StatusValue, 'held_for_quality_assessment'>, LaterStatus>> = {
  // The API's acceptance is SENT; the platform's `sent` (the message left its servers) is SERVER.
  sent: 'SERVER',
  delivered: 'DEVICE',
  read: 'READ',
  failed: 'FAILED',
};

/**
 * Builds the channel. Throws `WhatsAppChannelError` (every problem at once) when the options or
 * the fleet's WhatsApp ids cannot work. Needs the optional package `undici`.
 */
export function createWhatsAppChannel(options: WhatsAppChannelOptions): WhatsAppChannel {
  const o: ResolvedWhatsAppOptions = resolveWhatsAppOptions(options);
  const pool = new Pool(o.origin, {
    connections: o.connections,
    keepAliveTimeout: 30_000,
    headersTimeout: o.requestTimeoutMs,
    bodyTimeout: o.requestTimeoutMs,
    connect: { timeout: o.connectTimeoutMs },
  });
  // One object for every send; replacing the token replaces its authorization.
  const headers = { authorization: `Bearer ${o.accessToken}`, 'content-type': 'application/json' };
  /** Per number: the gate its sends wait at, and the window that sizes it. */
  const gates = new Map<string, { readonly gate: Gate; readonly window: InFlightWindow }>();
  const throttles = new Throttles();
  /**
   * Sent messages by their platform id (`wm:`), and the last message to each user by the phone it
   * was sent to (`wp:`: what a reply without context answers, when it comes to the number that sent
   * it). The server's memory once attached; until then (or when a host attaches none) one of the
   * channel's own, two keys a message.
   */
  let memory: ChannelMemory = new ChannelMemoryStore(2 * o.maxTrackedMessages);
  const seen = new BoundedMap<string, true>(o.maxWebhookKeys);
  const counts = { inFlight: 0, sent: 0, failed: 0, webhooks: 0, forged: 0, duplicates: 0, held: 0 };
  let sink: ChannelSink | undefined;
  let closed = false;

  const attendances = o.attendanceIdleMs === false ? undefined : new Attendances({ idleMs: o.attendanceIdleMs, maxOpen: o.maxOpenAttendances, now: o.now, report: (r) => sink?.attendanceClosed(r) });
  const sweep = attendances ? setInterval(() => attendances.sweep(), Math.max(10, Math.min(60_000, Math.floor((o.attendanceIdleMs as number) / 2)))) : undefined;
  sweep?.unref();

  /**
   * One POST, answered with its status and body text. Through the pool's `dispatch` with a bare
   * handler rather than `request`: no stream per answer, which is most of a send's cost.
   */
  const post = (path: string, body: string) =>
    new Promise<Exchange>((resolve, reject) => {
      pool.dispatch({ path, method: 'POST', headers, body }, new Exchange(resolve, reject));
    });

  const gateOf = (phoneNumberId: string) => {
    let gate = gates.get(phoneNumberId);
    if (!gate) {
      const window = new InFlightWindow({ min: MIN_WINDOW, max: o.maxInFlightPerNumber, initial: INITIAL_WINDOW });
      gates.set(phoneNumberId, (gate = { gate: new Gate(window.size), window }));
    }
    return gate;
  };
  // Built once: each number's path and each template's part of the body.
  const paths = new Map<string, string>();
  const pathOf = (phoneNumberId: string) => {
    let path = paths.get(phoneNumberId);
    if (path === undefined) paths.set(phoneNumberId, (path = `${o.pathPrefix}${phoneNumberId}/messages`));
    return path;
  };
  const parts = new Map<number, TemplatePart>();
  const partOf = (templateId: number, template: TemplateForPart) => {
    let part = parts.get(templateId);
    if (part === undefined) parts.set(templateId, (part = templatePart(template)));
    return part;
  };

  async function send(m: OutgoingMessage): Promise<SendOutcome> {
    const number = o.ids.number(m.phone);
    const template = o.ids.template(m.templateId);
    if (!number || !template) {
      // The fleet the engine runs was changed without the channel: nothing can be sent with it.
      return { status: 'failed', reason: `no WhatsApp ids for number ${m.phone} or template ${m.templateId}`, action: { kind: 'give-up' } };
    }
    const { gate, window } = gateOf(number.phoneNumberId);
    resize(gate, window.arrived(o.now()));
    if (!gate.tryAcquire()) await gate.wait();
    counts.inFlight++;
    const startedAt = o.now();
    try {
      let answer;
      let res;
      try {
        res = await post(pathOf(number.phoneNumberId), templateMessageBody(m, partOf(m.templateId, template)));
        answer = classifyAnswer(res.statusCode, res.text());
      } catch (e) {
        counts.failed++;
        return classifyError(e);
      } finally {
        const now = o.now();
        resize(gate, window.answered(now - startedAt, now));
      }
      if (answer.throttle) {
        counts.failed++;
        const retryAfterMs = parseRetryAfter(res.retryAfter, o.now());
        const restMs = answer.throttle.perNumber ? throttles.throttled(number.phoneNumberId, startedAt, o.now(), answer.throttle.restMs, retryAfterMs) : retryAfterMs;
        return restMs === undefined ? answer.outcome : restedOutcome(answer.outcome, restMs);
      }
      if (answer.outcome.status === 'sent') {
        throttles.succeeded(number.phoneNumberId, startedAt);
        counts.sent++;
        const record = encodeSent(m, o.now());
        if (answer.wamid !== undefined) memory.set(WAMID_KEY + answer.wamid, record);
        memory.set(PHONE_KEY + m.contact.phone, record);
        // The platform may know the user under another form of the phone (its wa_id).
        if (answer.waId !== undefined && answer.waId !== m.contact.phone) memory.set(PHONE_KEY + answer.waId, record);
      } else counts.failed++;
      return answer.outcome;
    } finally {
      counts.inFlight--;
      gate.release();
    }
  }

  function resize(gate: Gate, size: number): void {
    if (size !== gate.limit) gate.setLimit(size);
  }

  function handshake(query: InboundRequest['query']): InboundResponse {
    const challenge = query['hub.challenge'];
    if (query['hub.mode'] === 'subscribe' && challenge !== undefined && sameSecret(query['hub.verify_token'], o.verifyToken)) {
      return { status: 200, body: challenge };
    }
    o.onWarning('webhook handshake refused', { mode: query['hub.mode'] ?? null });
    return { status: 403, body: 'verification failed' };
  }

  async function notification(request: InboundRequest): Promise<InboundResponse> {
    if (!verifySignature(request.rawBody, request.headers['x-hub-signature-256'], o.appSecret)) {
      counts.forged++;
      o.onWarning('webhook refused: missing or wrong X-Hub-Signature-256', { bytes: request.rawBody.length });
      return { status: 401, body: 'invalid signature' };
    }
    // Not attached yet (or closing): Meta delivers again later.
    if (!sink || closed) return { status: 503, body: 'not ready' };
    let body: unknown;
    try {
      body = JSON.parse(request.rawBody.toString('utf8'));
    } catch {
      return { status: 400, body: 'body is not JSON' };
    }
    counts.webhooks++;
    const { events, skipped } = readWebhook(body);
    if (skipped > 0) o.onWarning('webhook parts not understood were skipped', { skipped });
    const acted: string[] = [];
    try {
      await recall(events, sink);
    } catch {
      // What the fleet remembers cannot be read now (Redis away): the provider delivers again.
      return { status: 503, body: 'not available' };
    }
    for (const e of events) {
      if (seen.has(e.key)) {
        counts.duplicates++;
        continue;
      }
      apply(e, sink);
      seen.set(e.key, true);
      acted.push(e.key);
    }
    // The durable server: 200 once what the events did is on disk. Not written (the server failed
    // closed): a temporary error, and the events are not counted seen, so a redelivery acts again.
    if (acted.length > 0 && sink.written !== undefined && !(await sink.written())) {
      for (const key of acted) seen.delete(key);
      return { status: 503, body: 'not written' };
    }
    return { status: 200, body: 'EVENT_RECEIVED' };
  }

  /**
   * Before acting: what the fleet remembers of the messages these events name (on the server on
   * Redis another instance may have sent them): their wamids and last messages to a phone, then
   * whether they were replied to and what the server tracks of them.
   */
  async function recall(events: readonly WebhookEvent[], to: ChannelSink): Promise<void> {
    if (memory.recall === undefined && to.recall === undefined) return;
    const keys: string[] = [];
    for (const e of events) {
      if (e.kind === 'status' && e.opaque === undefined) keys.push(WAMID_KEY + e.wamid);
      else if (e.kind === 'message') {
        if (e.from !== undefined) keys.push(PHONE_KEY + e.from);
        if (e.contextId !== undefined) keys.push(WAMID_KEY + e.contextId);
      }
    }
    if (keys.length > 0) await memory.recall?.(keys);
    const messageIds = new Set<string>();
    for (const e of events) {
      if (e.kind === 'status') {
        const id = e.opaque ?? recordOf(memory.get(WAMID_KEY + e.wamid))?.messageId;
        if (id !== undefined) messageIds.add(id);
      } else if (e.kind === 'message') {
        for (const key of [e.from === undefined ? undefined : PHONE_KEY + e.from, e.contextId === undefined ? undefined : WAMID_KEY + e.contextId]) {
          const record = key === undefined ? undefined : recordOf(memory.get(key));
          if (record !== undefined) messageIds.add(record.messageId);
        }
      }
    }
    if (messageIds.size === 0) return;
    await memory.recall?.([...messageIds].map((id) => REPLIED_KEY + id));
    await to.recall?.({ messageIds: [...messageIds] });
  }

  function apply(e: WebhookEvent, to: ChannelSink): void {
    switch (e.kind) {
      case 'status': {
        // Held for the template's early feedback: still at the platform, neither left nor failed;
        // its `sent` (released) or `failed` (dropped, 132015) comes later. No status changes.
        if (e.status === 'held_for_quality_assessment') {
          counts.held++;
          return;
        }
        const messageId = e.opaque ?? recordOf(memory.get(WAMID_KEY + e.wamid))?.messageId;
        if (messageId === undefined) return; // a message of another sender on the same account
        to.messageStatus({
          messageId,
          status: LATER[e.status],
          ...(e.at !== undefined ? { at: e.at } : {}),
          bsuid: e.bsuid,
          username: e.username,
          ...(e.status === 'failed' ? { failureCode: e.errorCode ?? 131000 } : {}),
        });
        return;
      }
      case 'message':
        return reply(e, to);
      case 'template': {
        const change = templateChange(e, o.now());
        if (!change) return;
        const templateIds = o.ids.templatesOf({ wabaId: e.wabaId, id: e.templateId, name: e.name, language: e.language });
        if (templateIds.length === 0)
          return o.onWarning('template event for a template the fleet does not have', { event: e.event, templateId: e.templateId ?? null, name: e.name ?? null, language: e.language ?? null });
        const reason = [e.event, e.title, e.reason].filter((x) => x !== undefined).join(' ');
        for (const templateId of templateIds) to.templateStatus?.({ templateId, status: change.status, ...(change.until !== undefined ? { until: change.until } : {}), reason });
        return;
      }
      case 'quality':
        return quality(e, to);
      case 'account':
        return account(e, to);
    }
  }

  /**
   * A number's tier or throughput (its limits), its portfolio's messaging limit (the portfolio's,
   * not the number's), a flag for low quality, or a word on it that changes nothing.
   */
  function quality(e: Extract<WebhookEvent, { kind: 'quality' }>, to: ChannelSink): void {
    const phone = o.ids.phoneOfDisplay(e.displayPhoneNumber);
    if (phone === undefined) return o.onWarning('number event for a number the fleet does not have', { event: e.event, displayPhoneNumber: e.displayPhoneNumber });
    const business = businessLimitOf(e);
    if (business) {
      const accountId = e.wabaId ?? o.ids.number(phone)?.wabaId;
      const phones = accountId === undefined ? [phone] : o.ids.phonesOfWaba(accountId);
      to.businessLimit?.({ accountId: accountId ?? '', phones, limit: business.limit, tier: business.tier, reason: [e.event, business.tier].join(' ') });
    }
    const limits = numberLimitsOf(e, o.ids.number(phone)?.messagesPerSecond);
    const flagged = flagOf(e);
    const reason = [e.event, business ? undefined : e.tier, e.rating].filter((x) => x !== undefined).join(' ');
    if (limits) to.numberLimits?.({ phone, limits, reason });
    if (flagged !== undefined || (!limits && !business)) to.numberQuality?.({ phone, reason, ...(flagged !== undefined ? { flagged } : {}) });
  }

  /** An account restricted, disabled or deleted pauses every number of it in the fleet; lifted, resumes them. */
  function account(e: Extract<WebhookEvent, { kind: 'account' }>, to: ChannelSink): void {
    const change = accountChange(e, o.now());
    if (!change) return;
    const phones = e.wabaId === undefined ? [] : o.ids.phonesOfWaba(e.wabaId);
    if (phones.length === 0) return o.onWarning('account event for an account the fleet has no number of', { event: e.event, wabaId: e.wabaId ?? null });
    if (change.kind === 'notice') return to.accountNotice?.({ accountId: e.wabaId!, phones, reason: change.reason });
    for (const phone of phones) {
      if (change.kind === 'pause') to.numberStatus?.({ phone, status: 'paused', ...(change.until !== undefined ? { until: change.until } : {}), reason: change.reason });
      else to.numberStatus?.({ phone, status: 'active', reason: change.reason });
    }
  }

  function reply(e: Extract<WebhookEvent, { kind: 'message' }>, to: ChannelSink): void {
    const phone =
      (e.phoneNumberId !== undefined ? o.ids.phoneOfPhoneNumberId(e.phoneNumberId) : undefined) ?? (e.displayPhoneNumber !== undefined ? o.ids.phoneOfDisplay(e.displayPhoneNumber) : undefined);
    if (phone === undefined || e.from === undefined) return;
    const conversation = `${phone}>${e.from}`;
    const last = recordOf(memory.get(PHONE_KEY + e.from));
    const answered = (e.contextId !== undefined ? recordOf(memory.get(WAMID_KEY + e.contextId)) : undefined) ?? (last?.from === phone ? last : undefined);
    // What was reported of the message: nothing, REPLIED, or REPLIED with an opt-out.
    const reported = answered === undefined ? undefined : memory.get(REPLIED_KEY + answered.messageId);
    const replied = reported !== undefined;
    const optOut = isOptOut(e.text) || isOptOut(e.buttonPayload);
    const at = e.at ?? o.now();
    // An opt-out after a reply is reported too (it blocklists); the same one again is not.
    if (answered && (!replied || (optOut && reported !== OPTED_OUT))) {
      to.messageStatus({ messageId: answered.messageId, status: 'REPLIED', at, bsuid: e.bsuid, username: e.username, blocklistResponse: optOut, replyText: e.text });
      memory.set(REPLIED_KEY + answered.messageId, optOut ? OPTED_OUT : REPLIED);
    }
    // An opt-out ends the conversation: it opens no attendance.
    if (optOut || !attendances) return;
    attendances.message(conversation, { sender: 'client', type: e.type, text: e.text, at }, answered && !replied ? opening(answered) : undefined);
  }

  function recordOf(text: string | undefined): SentRecord | undefined {
    return text === undefined ? undefined : decodeSent(text);
  }

  /** The message an attendance starts with; its text is left to the server, which keeps what it sent. */
  function opening(r: SentRecord): { messageId: string; text: string; sentAt: number } {
    return { messageId: r.messageId, text: '', sentAt: r.sentAt };
  }

  function isOptOut(text: string | undefined): boolean {
    return text !== undefined && o.optOutKeywords.has(text.trim().toUpperCase());
  }

  return {
    send,
    numberDefaults: { messagesPerSecond: o.defaultMessagesPerSecond },
    async sendSms(sms: OutgoingSms): Promise<SmsSendResult> {
      // Template messages only: compose with an SMS gateway (composeChannels) for SMS.
      return { status: 'failed', reason: `the WhatsApp channel sends no SMS (${sms.smsId}); compose it with an SMS channel` };
    },
    attach(s, m) {
      sink = s;
      if (m) memory = m;
    },
    inbound: [
      {
        path: o.webhookPath,
        handle: (request) => (request.method === 'GET' ? handshake(request.query) : notification(request)),
      },
    ],
    async close() {
      if (closed) return;
      // Open attendances are reported closed now rather than lost with the process.
      attendances?.closeAll();
      closed = true;
      if (sweep) clearInterval(sweep);
      await pool.close();
    },
    setAccessToken(token: string) {
      const found = secretProblem('accessToken', token, 16);
      if (found) throw new WhatsAppChannelError([found]);
      headers.authorization = `Bearer ${token}`;
    },
    stats: () => ({
      inFlight: counts.inFlight,
      waiting: [...gates.values()].reduce((n, g) => n + g.gate.waiting, 0),
      maxWindow: [...gates.values()].reduce((n, g) => Math.max(n, g.gate.limit), 0),
      throttledNumbers: throttles.size,
      sent: counts.sent,
      failed: counts.failed,
      tracked: memory.size ?? 0,
      openAttendances: attendances?.size ?? 0,
      webhooks: counts.webhooks,
      forged: counts.forged,
      duplicates: counts.duplicates,
      held: counts.held,
    }),
  };
}
