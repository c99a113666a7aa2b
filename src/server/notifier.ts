/**
 * The notifier: turns what happens to messages, attendances, reports and SMS into webhook events of
 * spec part 6 and puts them in the delivery outbox, to the URL that the company configured with
 * POST /messenger/config/ when the event happens. It also keeps each company's campaign
 * statistics and sends their batches on their period.
 *
 * No URL configured for a family: the event is not built (nothing to deliver), but statistics are
 * still kept, so a batch sent after the URL is set carries the whole counts.
 *
 * This file builds and stages the notifications. What it remembers of sent messages and SMS is
 * tracked-messages.ts; each company's configuration, secret and statistics, notifier-companies.ts;
 * the campaign statistics and their batches, campaign-statistics-book.ts; the attendance
 * notification's input, attendance-input.ts; the SMS callbacks' bodies, sms-callbacks.ts; what it
 * is given (its dependencies and the backend's hooks), notifier-deps.ts.
 */
import type { OutgoingMessage } from '../core/dispatch/types.js';
import type { WebhookConfig } from '../contract/config-schema.js';
import { buildAttendanceNotification } from '../events/attendance.js';
import type { Admission } from '../events/campaign-counts.js';
import type { CampaignStatistics } from '../events/campaign-stats.js';
import type { ContactStatusChange } from '../events/campaign-stats-types.js';
import type { CampaignStatisticsPayload } from '../events/schemas/campaign.js';
import { buildHsmNotification, hsmNotificationWithId, type HsmStatusInput } from '../events/hsm.js';
import type { OutboxEvent, WebhookFamily } from '../events/outbox.js';
import type { ReportEvent } from '../events/reports.js';
import type { HsmStatus } from '../events/schemas/hsm.js';
import { NO_PROGRESS, currentStatus, observe, repliedAsBlocklist, type MessageProgress } from '../events/status-merge.js';
import { uuidV4 } from '../events/uuid.js';
import { attendanceInput } from './attendance-input.js';
import { CampaignStatisticsBook } from './campaign-statistics-book.js';
import type { AttendanceReport, MessageStatusUpdate, OutgoingSms, SmsStatus } from './ports/channel.js';
import { serverContact, type ServerContact } from './contacts.js';
import { EnqueuedRuns, hsmOrder, isReplay, isRun, runEventId } from './enqueued-runs.js';
import type { EnqueuedRun, WrittenEvent } from './ports/persistence.js';
import { NotifierCompanies, type CompanyWebhooks } from './notifier-companies.js';
import type { NotifierChanges, NotifierDeps, NotifierSnapshot } from './notifier-deps.js';
import { smsReplyCallback, smsStatusCallback } from './sms-callbacks.js';
import { TrackedMessages, type SendAgain, type TrackedMessage } from './tracked-messages.js';

export type { CompanyWebhooks } from './notifier-companies.js';
export type { StatisticsPort } from './campaign-statistics-book.js';
export type { SendAgain, TrackedMessage } from './tracked-messages.js';
export type { NotifierChanges, NotifierDeps, NotifierSnapshot } from './notifier-deps.js';

/** Submissions whose shared `SendAgain` objects are kept at most (then they are built again). */
const AGAIN_KEPT = 4096;

/**
 * What a FAILED (its code; `retrying` when the server sends the contact again) or a REPLIED (the
 * opt-out) adds to a status change's statistics.
 */
type HsmExtra = { failureCode?: number; blocklistResponse?: boolean; retrying?: boolean };
const NO_EXTRA: HsmExtra = Object.freeze({});
const ENQUEUED: HsmStatusInput = Object.freeze({ status: 'ENQUEUED', from: null, message: null });
/** What a message the channel accepted has been reported, before any later status: SENT. */
const SENT_ONLY: MessageProgress = observe(NO_PROGRESS, { status: 'SENT' });

export class Notifier {
  readonly #deps: NotifierDeps;
  readonly #companies: NotifierCompanies;
  readonly #statistics: CampaignStatisticsBook;
  /** Messages and SMS the channel accepted, for their later notifications. */
  readonly #tracked: TrackedMessages;
  /** Shared `SendAgain` of each submission's messages, by template (see `#againOf`). */
  readonly #again = new Map<string, Map<number, SendAgain>>();
  /** Requests' ENQUEUED notifications, built as the receivers take them. */
  readonly #runs: EnqueuedRuns;
  /** Contacts the server decided to send again so far ({@link sendingAgain}): tells a late FAILED's `retrying`. */
  #resends = 0;

  constructor(deps: NotifierDeps, snapshot?: NotifierSnapshot) {
    this.#deps = deps;
    this.#runs = new EnqueuedRuns({
      outbox: deps.outbox,
      build: (run, index) => this.#buildRunEvent(run, index),
      ...(deps.onRunDone ? { onDone: deps.onRunDone } : {}),
      ...(deps.onRunChanged ? { onDead: deps.onRunChanged } : {}),
      ...(deps.onRunError ? { onBuildError: deps.onRunError } : {}),
    });
    for (const run of snapshot?.runs ?? []) this.#runs.add(run);
    this.#tracked = new TrackedMessages(deps, snapshot);
    this.#companies = new NotifierCompanies(deps, snapshot?.companies);
    this.#statistics = new CampaignStatisticsBook({
      companies: this.#companies,
      clock: deps.clock,
      random: deps.random,
      ...(deps.statistics ? { statistics: deps.statistics } : {}),
      send: (companyId, url, batch) => this.#enqueue(companyId, 'campaign', url, batch.event_id, batch),
    });
  }

  /**
   * What changed since the last call (everything with `full`): each company's statistics rows and
   * the tracked messages and SMS to keep or drop.
   */
  takeChanges(full = false): NotifierChanges {
    return { statistics: this.takeStatistics(full), ...this.takeTracked(full) };
  }

  /** Each company's statistics rows changed since the last call (every row with `full`). */
  takeStatistics(full: boolean): NotifierChanges['statistics'] {
    return this.#statistics.takeChanges(full);
  }

  /** The tracked messages and SMS to keep or drop since the last call (every one held with `full`). */
  takeTracked(full: boolean): Omit<NotifierChanges, 'statistics'> {
    return this.#tracked.takeChanges(full);
  }

  /** Tracked messages or SMS changed since the last `takeChanges`. */
  get changesPending(): boolean {
    return this.#tracked.changesPending;
  }

  /**
   * Holds what the fleet remembers of these messages and SMS that this instance does not (another
   * instance sent them), before their later statuses are reported.
   */
  recall(ids: { readonly messageIds?: readonly string[]; readonly smsIds?: readonly string[] }): Promise<void> {
    return this.#tracked.recall(ids);
  }

  /** Loads the statistics rows the durable server kept (before any traffic). */
  restoreStatistics(statistics: ReadonlyMap<number, Parameters<typeof CampaignStatistics.fromRows>[0]>): void {
    this.#companies.loadStatistics(statistics);
  }

  /** Loads the tracked messages and SMS the durable server kept (before any traffic). */
  restoreTracked(rows: readonly (readonly [string, unknown])[]): void {
    this.#tracked.load(rows);
  }

  /** Every company's configuration and secret (written by the durable server). */
  webhooks(): CompanyWebhooks[] {
    return this.#companies.webhooks();
  }

  /** Loads configurations and secrets kept by the durable server (statistics start empty). */
  loadWebhooks(list: readonly CompanyWebhooks[]): void {
    this.#companies.loadWebhooks(list);
  }

  config(companyId: number): WebhookConfig {
    return this.#companies.get(companyId).config;
  }

  setConfig(companyId: number, config: WebhookConfig): void {
    this.#companies.get(companyId).config = config;
  }

  secretOf(companyId: number): string {
    return this.#companies.get(companyId).secret;
  }

  #enqueue(companyId: number, family: WebhookFamily, url: string | null | undefined, id: string, payload: unknown, order?: string): void {
    if (!url) return;
    // The family is metadata (metrics, dead-letter reports): the four configured webhooks, and the
    // SMS callbacks, which go to each item's own URLs. `order`: a contact's notifications arrive in
    // the order they were made (docs/server.md, "Webhooks").
    this.#enqueueEvent({ id, family, url, body: JSON.stringify(payload), companyId, ...(order === undefined ? {} : { order }) });
  }

  #enqueueEvent(event: OutboxEvent): void {
    if (this.#deps.stage) this.#deps.stage(event);
    else this.#deps.outbox.enqueue(event, this.#deps.clock.now());
    this.#deps.onEvent?.(event.family, 1);
    this.#deps.onEnqueued();
  }

  // ------------------------------------------------------------------ campaigns and HSM

  /**
   * A send request was accepted: declare its campaign and admit its contacts, numbered `first` …
   * `first + count - 1`, as accepted, except the rejected ones, counted under their admission, or
   * not at all when it has none.
   */
  admit(companyId: number, campaignId: number, first: number, count: number, rejections: readonly (readonly [contactId: number, admission: Admission | undefined])[] = []): void {
    this.#statistics.admit(companyId, campaignId, first, count, rejections);
  }

  /** A contact the engine refused after intake (an invalid phone), counted under its admission. */
  reject(companyId: number, campaignId: number, contactId: number, admission: Admission): void {
    this.#statistics.reject(companyId, campaignId, contactId, admission);
  }

  /** Whether HSM notifications of a company have a target (to skip building them when not). */
  wantsHsm(companyId: number): boolean {
    return this.#companies.get(companyId).config.url_hsm_callback !== null;
  }

  /**
   * One HSM status change of a contact's send (spec 6.3), with its statistics. With `notify`
   * false, the statistics and the activity log only: a status that did not move the merged status
   * forward (a DEVICE after its READ) makes no notification.
   */
  hsm(contact: ServerContact, campaignId: number, retryIndex: number | null, sentAt: number, status: HsmStatusInput, extra: HsmExtra = NO_EXTRA, notify = true): void {
    const s: HsmStatus = status.status;
    // The time the status is recorded: a SENT's failure window runs from it.
    const at = this.#deps.clock.now();
    // Without extras (every SENT): one object, no spreads (this runs for every message).
    const change: ContactStatusChange =
      extra === NO_EXTRA
        ? { campaignId, contactId: String(contact.id), retryIndex, status: s, at }
        : {
            campaignId,
            contactId: String(contact.id),
            retryIndex,
            status: s,
            at,
            ...(extra.failureCode === undefined ? {} : { failureCode: extra.failureCode }),
            ...(extra.blocklistResponse === undefined ? {} : { blocklistResponse: extra.blocklistResponse }),
            ...(s === 'FAILED' ? { retrying: extra.retrying === true } : {}),
          };
    this.#statistics.record(contact.companyId, change);
    this.#deps.activity?.status(contact, campaignId, retryIndex, sentAt, status);
    if (!notify) return;
    const event = this.#buildHsm(contact, campaignId, retryIndex, sentAt, status);
    if (!event) return;
    // Its ENQUEUED first, if its request's run still holds it.
    this.#runs.release(contact.id, this.#deps.clock.now());
    this.#enqueueEvent(event);
  }

  /**
   * A request's accepted contacts (in increasing id): their ENQUEUED notifications, kept as one run
   * and built as the receiver takes them (enqueued-runs.ts), when the company has an HSM webhook.
   * Nothing goes to the statistics: the request's admission counts its contacts remaining already,
   * and a contact admitted by a range keeps no entry of its own until its first send is reported
   * (as without an HSM webhook, where no ENQUEUED is made at all); nor to the activity log, which
   * keeps messages sent.
   */
  enqueued(contacts: readonly ServerContact[], campaignId: number, at: number): void {
    const first = contacts[0];
    if (first === undefined) return;
    const url = this.#companies.get(first.companyId).config.url_hsm_callback;
    if (!url) return;
    const run: EnqueuedRun = { id: uuidV4(this.#deps.random), companyId: first.companyId, url, campaignId, requestId: first.requestId, costCenterId: first.costCenterId, at, contacts };
    if (this.#deps.stageRun) this.#deps.stageRun(run);
    else this.#runs.add(run);
    this.#deps.onEvent?.('hsm', contacts.length);
    this.#deps.onEnqueued();
  }

  /**
   * Events and runs written with their step, read back at start, or claimed from Redis: into the
   * outbox, runs kept here. Runs first, and each event's contact's ENQUEUED built before it, so
   * the outbox's order chain holds the event behind it. A replayed dead letter goes again under
   * its id even if the outbox remembers that id as finished (`Outbox.replay`).
   */
  written(records: readonly WrittenEvent[]): void {
    for (const r of records) if (isRun(r)) this.#runs.add(r.run);
    const now = this.#deps.clock.now();
    for (const r of records) {
      if (isRun(r)) continue;
      if (isReplay(r)) {
        this.#runs.releaseOrder(r.replay.order, now);
        this.#deps.outbox.replay(r.replay, now);
        continue;
      }
      this.#runs.releaseOrder(r.order, now);
      this.#deps.outbox.enqueue(r, now);
    }
    this.#deps.onEnqueued();
  }

  /** Builds runs' notifications into the outbox as far as the receivers have room (the delivery worker's pass). */
  feedRuns(now: number): void {
    this.#runs.feed(now);
  }

  /** An event ended in the outbox: true when it was a run's (whose record goes when the run ends, not the event's). */
  runEventEnded(eventId: string, deadLettered: boolean): boolean {
    return this.#runs.ended(eventId, deadLettered);
  }

  /** {@link unbuilt} per URL and company (a dashboard's receivers). */
  unbuiltByUrl(): ReturnType<EnqueuedRuns['unbuiltByUrl']> {
    return this.#runs.unbuiltByUrl();
  }

  /** ENQUEUED notifications accepted and not built yet (they count as pending webhooks). */
  get unbuilt(): number {
    return this.#runs.size;
  }

  #buildRunEvent(run: EnqueuedRun, index: number): OutboxEvent {
    const c = run.contacts[index]!;
    const payload = hsmNotificationWithId(
      {
        id: c.id,
        to: c.phone,
        campaignId: run.campaignId,
        requestId: run.requestId,
        costCenterId: run.costCenterId,
        data: c.data ?? null,
        document: c.document ?? null,
        contract: c.contract ?? null,
        sentAt: run.at,
        retryIndex: null,
        ...ENQUEUED,
      },
      runEventId(run.id, index),
    );
    return { id: payload.event_id, family: 'hsm', url: run.url, body: JSON.stringify(payload), companyId: run.companyId, order: hsmOrder(c.id) };
  }

  #buildHsm(contact: ServerContact, campaignId: number, retryIndex: number | null, sentAt: number, status: HsmStatusInput): OutboxEvent | undefined {
    const url = this.#companies.get(contact.companyId).config.url_hsm_callback;
    if (!url) return undefined;
    const payload = buildHsmNotification(
      {
        id: contact.id,
        to: contact.phone,
        campaignId,
        requestId: contact.requestId,
        costCenterId: contact.costCenterId,
        data: contact.data ?? null,
        document: contact.document ?? null,
        contract: contact.contract ?? null,
        sentAt,
        retryIndex,
        ...status,
      },
      this.#deps.random,
    );
    return { id: payload.event_id, family: 'hsm', url, body: JSON.stringify(payload), companyId: contact.companyId, order: hsmOrder(contact.id) };
  }

  /**
   * A contact's attempt failed and its retry `retryIndex` waits: in the statistics the contact is
   * remaining again (its latest attempt is the retry, enqueued), not failed.
   */
  retryPending(contact: ServerContact, campaignId: number, retryIndex: number): void {
    this.#resends++;
    this.#statistics.record(contact.companyId, { campaignId, contactId: String(contact.id), retryIndex, status: 'ENQUEUED', at: this.#deps.clock.now() });
  }

  /**
   * The server queued a contact to be sent again after a failure the provider reported later (a
   * failover, a rest, a backoff: late-failures.ts's `resubmit`): its FAILED, recorded right after
   * the decision, says `retrying`, so the contact stays remaining.
   */
  sendingAgain(): void {
    this.#resends++;
  }

  /**
   * What sending the message's contact again needs: one object per submission and template, shared
   * by its messages (this is every send's path: no allocation per message), one of its own for a
   * contact already sent again (its follow-ups counted).
   */
  #againOf(m: OutgoingMessage, contact: ServerContact): SendAgain {
    const followUps = (contact as { followUps?: number }).followUps ?? 0;
    const fresh = (): SendAgain => ({
      businessId: m.businessId,
      typeId: m.typeId,
      templateId: m.templateId,
      campaignId: m.campaignId ?? null,
      maxRetries: m.maxRetries,
      retryInterval: m.retryInterval,
      followUps,
    });
    if (followUps > 0) return fresh();
    let byTemplate = this.#again.get(m.submissionId);
    if (byTemplate === undefined) {
      // Bounded: a submission's entry is built again after a clear, never wrong.
      if (this.#again.size >= AGAIN_KEPT) this.#again.clear();
      this.#again.set(m.submissionId, (byTemplate = new Map<number, SendAgain>()));
    }
    let again = byTemplate.get(m.templateId);
    if (again === undefined || again.maxRetries !== m.maxRetries) byTemplate.set(m.templateId, (again = fresh()));
    return again;
  }

  /** The channel accepted a message: SENT, and remember it for its later statuses. */
  sent(m: OutgoingMessage, campaignId: number): void {
    const contact = serverContact(m.contact);
    const now = this.#deps.clock.now();
    const tracked: TrackedMessage = { contact, campaignId, from: m.phone, text: m.text, retryIndex: m.retryIndex, sentAt: now, again: this.#againOf(m, contact) };
    this.#tracked.keepMessage(m.messageId, tracked);
    this.hsm(contact, campaignId, m.retryIndex, now, { status: 'SENT', from: m.phone, message: m.text });
  }

  /**
   * A later status from the channel. Unknown message ids (evicted, or from before a restart without
   * snapshot) are dropped. Statuses merge (events/status-merge.ts): one that does not move the
   * merged status forward (a DEVICE after its READ, a duplicate) counts in the statistics but makes
   * no notification, so a contact's notifications never go back, in whatever order they come.
   */
  laterStatus(u: MessageStatusUpdate): boolean {
    const t = this.#tracked.message(u.messageId);
    if (!t) return false;
    const before = t.progress ?? SENT_ONLY;
    const after = observe(before, { status: u.status, blocklistResponse: u.blocklistResponse === true });
    // Forward: a higher status, or a REPLIED that now says opt-out.
    const advanced = currentStatus(after) !== currentStatus(before) || repliedAsBlocklist(after) !== repliedAsBlocklist(before);
    const ends = u.status === 'FAILED' || u.status === 'EXPIRED';
    if (after !== before && !ends) this.#tracked.keepMessage(u.messageId, { ...t, progress: after });
    const status = laterStatusInput(u, t);
    if (u.status === 'REPLIED' && u.blocklistResponse === true) this.#deps.onOptOut?.(t.contact.companyId, t.contact.phone, u.at ?? this.#deps.clock.now());
    const retrying = u.status === 'FAILED' && this.#sendsAgain(t, u.messageId, u.failureCode ?? 131000);
    const extra: HsmExtra = {
      ...(u.failureCode === undefined ? {} : { failureCode: u.failureCode }),
      ...(u.blocklistResponse === undefined ? {} : { blocklistResponse: u.blocklistResponse }),
      ...(retrying ? { retrying } : {}),
    };
    this.hsm(t.contact, t.campaignId, t.retryIndex, t.sentAt, status, extra, advanced);
    // FAILED and EXPIRED end a message; a REPLIED one may still open an attendance.
    if (ends) this.#tracked.forgetMessage(u.messageId);
    return true;
  }

  /**
   * A failure reported later goes through the one error table, as a send's answer does; whether
   * the contact goes again (not past the failure window, not once delivered) is late-failures.ts's.
   * Decided before the FAILED is recorded, so the statistics know whether it goes again (`retrying`).
   */
  #sendsAgain(t: TrackedMessage, messageId: string, code: number): boolean {
    if (!this.#deps.onLateFailure) return false;
    const resends = this.#resends;
    this.#deps.onLateFailure(t, messageId, code);
    return this.#resends !== resends;
  }

  /** An attendance opened by a reply closed (spec 6.2). */
  attendance(r: AttendanceReport): boolean {
    const t = this.#tracked.message(r.messageId);
    if (!t) return false;
    this.#tracked.forgetMessage(r.messageId);
    this.#deps.activity?.attendance(r, t);
    const contact = t.contact;
    const company = this.#companies.get(contact.companyId);
    const url = company.config.url_attendance_callback;
    if (!url) return true;
    const payload = buildAttendanceNotification(attendanceInput(r, t), this.#deps.random);
    this.#enqueue(contact.companyId, 'attendance', url, payload.event_id, payload);
    return true;
  }

  /** Campaign statistics batches of every company whose period has passed (spec 6.4). */
  flushCampaigns(): void {
    this.#statistics.flush();
  }

  /** Counts of a campaign of a company, or undefined when unknown. */
  campaignCounts(companyId: number, campaignId: number) {
    return this.#statistics.counts(companyId, campaignId);
  }

  /**
   * The campaigns whose statistics this server keeps, each company's in the order they were
   * declared (none on the server on Redis, where the statistics are shared); reads create nothing.
   */
  campaignKeys(companyId?: number): { readonly companyId: number; readonly campaignId: number }[] {
    return this.#statistics.campaignKeys(companyId);
  }

  /** A campaign's 6.4 object now, or undefined when this server keeps no statistics of it. */
  campaignStatistics(companyId: number, campaignId: number): CampaignStatisticsPayload | undefined {
    return this.#statistics.statistics(companyId, campaignId);
  }

  /** Starts the statistics period timer. */
  start(periodMs: number): void {
    this.#statistics.start(periodMs);
  }

  stop(): void {
    this.#statistics.stop();
  }

  // ------------------------------------------------------------------ reports

  report(event: ReportEvent): void {
    const url = this.#companies.get(event.company_id).config.url_report_webhook;
    this.#enqueue(event.company_id, 'report', url, event.event_id, event);
  }

  // ------------------------------------------------------------------ SMS callbacks

  trackSms(sms: OutgoingSms): void {
    this.#tracked.keepSms(sms);
  }

  /** DLR: `POST url_callback_dlr` with the SMS's status (format in docs/server.md). */
  smsStatus(smsId: string, status: SmsStatus, reason: string | null, at?: number): boolean {
    const sms = this.#tracked.sms(smsId);
    if (!sms) return false;
    if (status !== 'SENT' && status !== 'DELIVERED') this.#tracked.forgetSms(smsId);
    // No callback: nothing to build (its id costs a CSPRNG call, and this runs for every SMS).
    if (!sms.callbacks.dlr) return true;
    const id = uuidV4(this.#deps.random);
    this.#enqueue(sms.companyId, 'sms-dlr', sms.callbacks.dlr, id, smsStatusCallback(id, sms, status, reason, at ?? this.#deps.clock.now()));
    return true;
  }

  /** MO: `POST url_callback_mo` with the reply. */
  smsReply(smsId: string, text: string, at?: number): boolean {
    const sms = this.#tracked.sms(smsId);
    if (!sms) return false;
    if (!sms.callbacks.mo) return true;
    const id = uuidV4(this.#deps.random);
    this.#enqueue(sms.companyId, 'sms-mo', sms.callbacks.mo, id, smsReplyCallback(id, sms, text, at ?? this.#deps.clock.now()));
    return true;
  }

  snapshot(): NotifierSnapshot {
    const runs = this.#runs.runs();
    return { companies: this.#companies.snapshot(), ...this.#tracked.snapshot(), ...(runs.length > 0 ? { runs } : {}) };
  }
}

/**
 * The HSM status a later status of a tracked message notifies: its own, with what the message was
 * (its number, its text) and the recipient's ids.
 */
function laterStatusInput(u: MessageStatusUpdate, t: TrackedMessage): HsmStatusInput {
  const ids = { bsuid: u.bsuid ?? null, username: u.username ?? null };
  switch (u.status) {
    case 'SERVER':
    case 'DEVICE':
    case 'READ':
      return { status: u.status, from: t.from, message: t.text, ...ids };
    case 'REPLIED':
      return { status: 'REPLIED', from: t.from, message: t.text, blocklistResponse: u.blocklistResponse ?? false, ...ids };
    case 'FAILED':
      return { status: 'FAILED', from: t.from, message: t.text, failure: { code: u.failureCode ?? 131000 }, ...ids };
    case 'EXPIRED':
      return { status: 'EXPIRED', from: t.from, message: t.text };
  }
}
