/**
 * The notifier: turns what happens to messages, attendances, reports and SMS into webhook events of
 * spec part 6 and puts them in the delivery outbox, to the URL that the company configured with
 * POST /messenger/config/ when the event happens. It also keeps each company's campaign
 * statistics and sends their batches on their period.
 *
 * No URL configured for a family: the event is not built (nothing to deliver), but statistics are
 * still kept, so a batch sent after the URL is set carries the whole counts.
 */
import type { Clock } from '../core/clock.js';
import type { OutgoingMessage } from '../core/dispatch/types.js';
import { EMPTY_WEBHOOK_CONFIG, type WebhookConfig } from '../contract/config-schema.js';
import { buildAttendanceNotification, type AttendanceMessageInput, type SurveyInput } from '../events/attendance.js';
import type { Admission } from '../events/campaign-counts.js';
import { CampaignStatistics, type CampaignStatisticsChanges, type CampaignStatisticsSnapshot } from '../events/campaign-stats.js';
import type { ContactStatusChange } from '../events/campaign-stats-types.js';
import type { CampaignBatchPayload, CampaignStatisticsPayload } from '../events/schemas/campaign.js';
import { formatUtcMinus3 } from '../events/datetime.js';
import { buildHsmNotification, type HsmStatusInput } from '../events/hsm.js';
import type { Outbox, OutboxEvent, WebhookFamily } from '../events/outbox.js';
import type { RandomSource } from '../events/random.js';
import type { ReportEvent } from '../events/reports.js';
import type { HsmStatus } from '../events/schemas/hsm.js';
import { generateWebhookSecret } from '../events/signing.js';
import { uuidV4 } from '../events/uuid.js';
import type { ActivitySink } from './activity-log.js';
import { BoundedMap } from './bounded-map.js';
import type { AttendanceReport, MessageStatusUpdate, OutgoingSms, SmsStatus } from './channel.js';
import { serverContact, type ServerContact } from './contacts.js';

/** A message the channel accepted, kept to build its later notifications. */
export interface TrackedMessage {
  readonly contact: ServerContact;
  readonly campaignId: number;
  readonly from: string;
  readonly text: string;
  readonly retryIndex: number | null;
  readonly sentAt: number;
}

/**
 * Campaign statistics kept outside the notifier: on the server on Redis, shared by every instance
 * (redis/shared-statistics.ts). The notifier then keeps none of its own.
 */
export interface StatisticsPort {
  /** A range of `count` accepted contacts, named uniquely (a range reported twice counts once). */
  admitRange(companyId: number, campaignId: number, name: string, count: number): void;
  admit(companyId: number, campaignId: number, contactId: number, admission: Admission): void;
  record(companyId: number, change: ContactStatusChange): void;
  /** The batch period, for the companies with a campaign webhook: `send` stages a batch. */
  flush(targets: readonly { readonly companyId: number; readonly url: string }[], send: (target: { readonly companyId: number; readonly url: string }, batch: CampaignBatchPayload) => void): void;
}

/** Per-company state: configuration, signing secret, statistics. */
interface Company {
  config: WebhookConfig;
  secret: string;
  stats: CampaignStatistics;
}

export interface NotifierSnapshot {
  readonly companies: readonly { readonly companyId: number; readonly config: WebhookConfig; readonly secret: string; readonly stats: CampaignStatisticsSnapshot }[];
  readonly tracked: readonly (readonly [string, TrackedMessage])[];
  readonly sms: readonly (readonly [string, OutgoingSms])[];
}

interface Deps {
  readonly clock: Clock;
  readonly random: RandomSource;
  readonly outbox: Outbox;
  /** Called after events were enqueued (the delivery worker's kick). */
  readonly onEnqueued: () => void;
  readonly batchIntervalMs: number;
  readonly maxTracked: number;
  readonly secrets: Readonly<Record<number, string>>;
  readonly onEvent?: (family: string) => void;
  /**
   * Durable server: events go here instead of the outbox, and into the outbox only once they are
   * written with the step that made them. @default none: straight to the outbox
   */
  readonly stage?: (event: OutboxEvent) => void;
  /**
   * Durable server: remember what changed in statistics and tracked messages for
   * {@link Notifier.takeChanges}. @default false
   */
  readonly trackChanges?: boolean;
  /** A recipient answered with an opt-out (a REPLIED status with `blocklistResponse`). @default none */
  readonly onOptOut?: (companyId: number, phone: string, at: number) => void;
  /** A campaign's statistics settled: what is kept per campaign for as long may go. @default none */
  readonly onCampaignSettled?: (companyId: number, campaignId: number) => void;
  /** Told every HSM status and closed attendance (the period reports' data). @default none */
  readonly activity?: ActivitySink;
  /** Campaign statistics kept elsewhere (the server on Redis). @default each company's own, here */
  readonly statistics?: StatisticsPort;
  /**
   * With `trackChanges`: messages and SMS forgotten here are deleted from the copy kept elsewhere
   * too. The server on Redis bounds its copy itself (shared-memory.ts). @default true
   */
  readonly forgetRows?: boolean;
  /**
   * Reads tracked messages and SMS kept elsewhere by key (`m:` + message id, `s:` + SMS id), the
   * rows `takeChanges` gave (the server on Redis). @default none: only what is held here
   */
  readonly recall?: (keys: readonly string[]) => Promise<ReadonlyMap<string, unknown>>;
}

/** What the durable server writes of the notifier in a step. */
export interface NotifierChanges {
  readonly statistics: { readonly companyId: number; readonly changes: CampaignStatisticsChanges }[];
  /** Tracked messages (`m:` + message id) and SMS (`s:` + SMS id) to keep. */
  readonly trackedPut: (readonly [string, unknown])[];
  readonly trackedDelete: string[];
}

/** What the durable server kept of the notifier. */
export interface StoredNotifier {
  readonly statistics: ReadonlyMap<number, Parameters<typeof CampaignStatistics.fromRows>[0]>;
  readonly tracked: readonly (readonly [string, unknown])[];
}

/** A company's webhook configuration and signing secret, as the durable server keeps them. */
export interface CompanyWebhooks {
  readonly companyId: number;
  readonly config: WebhookConfig;
  readonly secret: string;
}

const NO_EXTRA: { failureCode?: number; blocklistResponse?: boolean } = Object.freeze({});

/** Most rows of forgotten messages deleted in one step beyond twice the rows written in it. */
const FORGET_BASE = 20_000;

export class Notifier {
  readonly #deps: Deps;
  readonly #companies = new Map<number, Company>();
  /**
   * Messages accepted by the channel, by message id: at least the last `maxTracked / 2`, at most
   * `maxTracked` (two generations, bounded-map.ts: evicting one key a send from a full Map cost
   * tens of microseconds a send).
   */
  readonly #tracked: BoundedMap<string, TrackedMessage>;
  readonly #sms: BoundedMap<string, OutgoingSms>;
  /** With trackChanges: tracked rows changed since the last step (null: gone). */
  readonly #trackedChanges = new Map<string, TrackedMessage | OutgoingSms | null>();
  /**
   * With trackChanges: generations dropped from memory whose rows are still to delete, a bounded
   * number a step (a whole generation in one step would hold the event loop).
   */
  #forgotten: { readonly prefix: string; readonly ids: Iterator<string> }[] = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(deps: Deps, snapshot?: NotifierSnapshot) {
    this.#deps = deps;
    const onDrop = (prefix: string) => (dropped: ReadonlyMap<string, unknown>) => {
      if (deps.trackChanges === true && deps.forgetRows !== false) this.#forgotten.push({ prefix, ids: dropped.keys() });
    };
    this.#tracked = new BoundedMap<string, TrackedMessage>(deps.maxTracked, onDrop('m:'));
    this.#sms = new BoundedMap<string, OutgoingSms>(deps.maxTracked, onDrop('s:'));
    for (const c of snapshot?.companies ?? []) {
      this.#companies.set(c.companyId, {
        config: c.config,
        secret: deps.secrets[c.companyId] ?? c.secret,
        stats: CampaignStatistics.restore(c.stats, this.#statsOptions(c.companyId)),
      });
    }
    for (const [id, t] of snapshot?.tracked ?? []) this.#tracked.set(id, t);
    for (const [id, s] of snapshot?.sms ?? []) this.#sms.set(id, s);
  }

  #statsOptions(companyId: number) {
    const onSettled = this.#deps.onCampaignSettled;
    return {
      batchIntervalMs: this.#deps.batchIntervalMs,
      trackChanges: this.#deps.trackChanges === true,
      ...(onSettled ? { onSettle: (campaignId: number) => onSettled(companyId, campaignId) } : {}),
    };
  }

  #changed(key: string, row: TrackedMessage | OutgoingSms | null): void {
    if (this.#deps.trackChanges === true) this.#trackedChanges.set(key, row);
  }

  /**
   * What changed since the last call (everything with `full`): each company's statistics rows and
   * the tracked messages and SMS to keep or drop.
   */
  takeChanges(full = false): NotifierChanges {
    const statistics = [...this.#companies].map(([companyId, c]) => ({ companyId, changes: c.stats.takeChanges({ full }) }));
    const trackedPut: (readonly [string, unknown])[] = [];
    const trackedDelete: string[] = [];
    if (full) {
      for (const [id, t] of this.#tracked.entries()) trackedPut.push([`m:${id}`, t]);
      for (const [id, t] of this.#sms.entries()) trackedPut.push([`s:${id}`, t]);
      this.#forgotten = [];
    } else {
      for (const [key, row] of this.#trackedChanges) {
        if (row === null) trackedDelete.push(key);
        else trackedPut.push([key, row]);
      }
      this.#forget(trackedDelete, FORGET_BASE + 2 * trackedPut.length);
    }
    this.#trackedChanges.clear();
    return { statistics: statistics.filter((s) => full || s.changes.campaigns.length > 0 || s.changes.settled.length > 0), trackedPut, trackedDelete };
  }

  /** Adds to `deletes` the rows of up to `budget` forgotten messages no longer held. */
  #forget(deletes: string[], budget: number): void {
    while (budget > 0 && this.#forgotten.length > 0) {
      const { prefix, ids } = this.#forgotten[0]!;
      const map: { has(id: string): boolean } = prefix === 'm:' ? this.#tracked : this.#sms;
      for (; budget > 0; budget--) {
        const next = ids.next();
        if (next.done === true) {
          this.#forgotten.shift();
          break;
        }
        // Set again since (a message resent under its id after a restart): its row stays.
        if (!map.has(next.value)) deletes.push(prefix + next.value);
      }
    }
  }

  /** Tracked messages or SMS changed since the last `takeChanges`. */
  get changesPending(): boolean {
    return this.#trackedChanges.size > 0;
  }

  /**
   * Holds what the fleet remembers of these messages and SMS that this instance does not (another
   * instance sent them), before their later statuses are reported.
   */
  async recall(ids: { readonly messageIds?: readonly string[]; readonly smsIds?: readonly string[] }): Promise<void> {
    const read = this.#deps.recall;
    if (read === undefined) return;
    const keys = [...(ids.messageIds ?? []).filter((id) => !this.#tracked.has(id)).map((id) => `m:${id}`), ...(ids.smsIds ?? []).filter((id) => !this.#sms.has(id)).map((id) => `s:${id}`)];
    if (keys.length === 0) return;
    for (const [key, row] of await read(keys)) {
      // Set again here since the read was sent: what this instance holds is newer.
      if (key.startsWith('m:') && !this.#tracked.has(key.slice(2))) this.#tracked.set(key.slice(2), row as TrackedMessage);
      else if (key.startsWith('s:') && !this.#sms.has(key.slice(2))) this.#sms.set(key.slice(2), row as OutgoingSms);
    }
  }

  /** Loads what the durable server kept: statistics and tracked messages and SMS (call before any traffic). */
  loadStored(stored: StoredNotifier): void {
    for (const [companyId, rows] of stored.statistics) this.#company(companyId).stats = CampaignStatistics.fromRows(rows, this.#statsOptions(companyId));
    for (const [key, row] of stored.tracked) {
      if (key.startsWith('m:')) this.#tracked.set(key.slice(2), row as TrackedMessage);
      else if (key.startsWith('s:')) this.#sms.set(key.slice(2), row as OutgoingSms);
    }
  }

  /** Every company's configuration and secret (written by the durable server). */
  webhooks(): CompanyWebhooks[] {
    return [...this.#companies].map(([companyId, c]) => ({ companyId, config: c.config, secret: c.secret }));
  }

  /** Loads configurations and secrets kept by the durable server (statistics start empty). */
  loadWebhooks(list: readonly CompanyWebhooks[]): void {
    for (const w of list) {
      const c = this.#company(w.companyId);
      c.config = w.config;
      c.secret = w.secret;
    }
  }

  #company(companyId: number): Company {
    let c = this.#companies.get(companyId);
    if (!c) {
      c = {
        config: { ...EMPTY_WEBHOOK_CONFIG },
        secret: this.#deps.secrets[companyId] ?? generateWebhookSecret(this.#deps.random),
        stats: new CampaignStatistics(this.#statsOptions(companyId)),
      };
      this.#companies.set(companyId, c);
    }
    return c;
  }

  config(companyId: number): WebhookConfig {
    return this.#company(companyId).config;
  }

  setConfig(companyId: number, config: WebhookConfig): void {
    this.#company(companyId).config = config;
  }

  secretOf(companyId: number): string {
    return this.#company(companyId).secret;
  }

  #enqueue(companyId: number, family: WebhookFamily, url: string | null | undefined, id: string, payload: unknown, order?: string): void {
    if (!url) return;
    // The family is metadata (metrics, dead-letter reports): the four configured webhooks, and the
    // SMS callbacks, which go to each item's own URLs. `order`: a contact's notifications arrive in
    // the order they were made (docs/server.md, "Webhooks").
    const event: OutboxEvent = { id, family, url, body: JSON.stringify(payload), companyId, ...(order === undefined ? {} : { order }) };
    if (this.#deps.stage) this.#deps.stage(event);
    else this.#deps.outbox.enqueue(event, this.#deps.clock.now());
    this.#deps.onEvent?.(family);
    this.#deps.onEnqueued();
  }

  // ------------------------------------------------------------------ campaigns and HSM

  /**
   * A send request was accepted: declare its campaign and admit its contacts, numbered `first` …
   * `first + count - 1`, as accepted (as id ranges: nothing per contact), except the rejected ones,
   * counted under their admission, or not at all when it has none.
   */
  admit(companyId: number, campaignId: number, first: number, count: number, rejections: readonly (readonly [contactId: number, admission: Admission | undefined])[] = []): void {
    const shared = this.#deps.statistics;
    const { stats } = this.#company(companyId);
    if (!shared) stats.registerCampaign({ campaignId, name: `campaign ${campaignId}`, createdAt: this.#deps.clock.now() });
    // Ranges around the rejections that no count takes (they are not part of the campaign's total);
    // a range is named by its first contact id, unique on every instance.
    const accept = (from: number, n: number) => (shared ? shared.admitRange(companyId, campaignId, String(from), n) : stats.admitAccepted(campaignId, from, n));
    const skipped = rejections
      .filter(([, a]) => a === undefined)
      .map(([id]) => id)
      .sort((a, b) => a - b);
    let from = first;
    for (const id of skipped) {
      if (id > from) accept(from, id - from);
      from = Math.max(from, id + 1);
    }
    if (first + count > from) accept(from, first + count - from);
    for (const [id, admission] of rejections) {
      if (admission === undefined) continue;
      if (shared) shared.admit(companyId, campaignId, id, admission);
      else stats.admit(campaignId, String(id), admission);
    }
  }

  /** A contact the engine refused after intake (an invalid phone), counted under its admission. */
  reject(companyId: number, campaignId: number, contactId: number, admission: Admission): void {
    if (this.#deps.statistics) return this.#deps.statistics.admit(companyId, campaignId, contactId, admission);
    const { stats } = this.#company(companyId);
    stats.registerCampaign({ campaignId, name: `campaign ${campaignId}`, createdAt: this.#deps.clock.now() });
    stats.admit(campaignId, String(contactId), admission);
  }

  /** Whether HSM notifications of a company have a target (to skip building them when not). */
  wantsHsm(companyId: number): boolean {
    return this.#company(companyId).config.url_hsm_callback !== null;
  }

  /** One HSM status change of a contact's send (spec 6.3), with its statistics. */
  hsm(contact: ServerContact, campaignId: number, retryIndex: number | null, sentAt: number, status: HsmStatusInput, extra: { failureCode?: number; blocklistResponse?: boolean } = NO_EXTRA): void {
    const company = this.#company(contact.companyId);
    const s: HsmStatus = status.status;
    const shared = this.#deps.statistics;
    // A contact's campaign is registered at intake (and kept by the durable server); one the
    // statistics do not know (a snapshot from an older version) is registered now: a status never
    // goes unsent for want of bookkeeping.
    if (!shared && !company.stats.has(campaignId)) company.stats.registerCampaign({ campaignId, name: `campaign ${campaignId}`, createdAt: this.#deps.clock.now() });
    // Without extras (every SENT): one object, no spreads (this runs for every message).
    const change: ContactStatusChange =
      extra === NO_EXTRA
        ? { campaignId, contactId: String(contact.id), retryIndex, status: s }
        : {
            campaignId,
            contactId: String(contact.id),
            retryIndex,
            status: s,
            ...(extra.failureCode === undefined ? {} : { failureCode: extra.failureCode }),
            ...(extra.blocklistResponse === undefined ? {} : { blocklistResponse: extra.blocklistResponse }),
          };
    if (shared) shared.record(contact.companyId, change);
    else company.stats.recordStatus(change);
    this.#deps.activity?.status(contact, campaignId, retryIndex, sentAt, status);
    const url = company.config.url_hsm_callback;
    if (!url) return;
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
    this.#enqueue(contact.companyId, 'hsm', url, payload.event_id, payload, `hsm:${contact.id}`);
  }

  /**
   * A contact's attempt failed and its retry `retryIndex` waits: in the statistics the contact is
   * remaining again (its latest attempt is the retry, enqueued), not failed.
   */
  retryPending(contact: ServerContact, campaignId: number, retryIndex: number): void {
    const shared = this.#deps.statistics;
    if (shared) return shared.record(contact.companyId, { campaignId, contactId: String(contact.id), retryIndex, status: 'ENQUEUED' });
    const { stats } = this.#company(contact.companyId);
    if (!stats.has(campaignId)) stats.registerCampaign({ campaignId, name: `campaign ${campaignId}`, createdAt: this.#deps.clock.now() });
    stats.recordStatus({ campaignId, contactId: String(contact.id), retryIndex, status: 'ENQUEUED' });
  }

  /** The channel accepted a message: SENT, and remember it for its later statuses. */
  sent(m: OutgoingMessage, campaignId: number): void {
    const contact = serverContact(m.contact);
    const now = this.#deps.clock.now();
    const tracked: TrackedMessage = { contact, campaignId, from: m.phone, text: m.text, retryIndex: m.retryIndex, sentAt: now };
    this.#tracked.set(m.messageId, tracked);
    this.#changed(`m:${m.messageId}`, tracked);
    this.hsm(contact, campaignId, m.retryIndex, now, { status: 'SENT', from: m.phone, message: m.text });
  }

  /** A later status from the channel. Unknown message ids (evicted, or from before a restart without snapshot) are dropped. */
  laterStatus(u: MessageStatusUpdate): boolean {
    const t = this.#tracked.get(u.messageId);
    if (!t) return false;
    const ids = { bsuid: u.bsuid ?? null, username: u.username ?? null };
    let status: HsmStatusInput;
    switch (u.status) {
      case 'SERVER':
      case 'DEVICE':
      case 'READ':
        status = { status: u.status, from: t.from, message: t.text, ...ids };
        break;
      case 'REPLIED':
        status = { status: 'REPLIED', from: t.from, message: t.text, blocklistResponse: u.blocklistResponse ?? false, ...ids };
        if (u.blocklistResponse === true) this.#deps.onOptOut?.(t.contact.companyId, t.contact.phone, u.at ?? this.#deps.clock.now());
        break;
      case 'FAILED':
        status = { status: 'FAILED', from: t.from, message: t.text, failure: { code: u.failureCode ?? 131000 }, ...ids };
        break;
      case 'EXPIRED':
        status = { status: 'EXPIRED', from: t.from, message: t.text };
        break;
    }
    this.hsm(t.contact, t.campaignId, t.retryIndex, t.sentAt, status, {
      ...(u.failureCode === undefined ? {} : { failureCode: u.failureCode }),
      ...(u.blocklistResponse === undefined ? {} : { blocklistResponse: u.blocklistResponse }),
    });
    // FAILED and EXPIRED end a message; a REPLIED one may still open an attendance.
    if (u.status === 'FAILED' || u.status === 'EXPIRED') {
      this.#tracked.delete(u.messageId);
      this.#changed(`m:${u.messageId}`, null);
    }
    return true;
  }

  /** An attendance opened by a reply closed (spec 6.2). */
  attendance(r: AttendanceReport): boolean {
    const t = this.#tracked.get(r.messageId);
    if (!t) return false;
    this.#tracked.delete(r.messageId);
    this.#changed(`m:${r.messageId}`, null);
    this.#deps.activity?.attendance(r, t);
    const contact = t.contact;
    const company = this.#company(contact.companyId);
    const url = company.config.url_attendance_callback;
    if (!url) return true;
    const messages: AttendanceMessageInput[] = r.messages.map((m) => {
      const fromClient = m.sender === 'client';
      return {
        sender: typeof m.sender === 'object' ? { kind: 'attendant', userId: m.sender.attendantId } : { kind: m.sender },
        from: fromClient ? contact.phone : t.from,
        to: fromClient ? t.from : contact.phone,
        type: m.type,
        // A channel that does not keep what it sent leaves the campaign's message empty: it is the text sent.
        text: m.sender === 'campaign' && m.text === '' ? t.text : m.text,
        file: m.file ?? null,
        sentAt: m.at,
      };
    });
    const s = r.survey;
    const survey: SurveyInput | null = !s
      ? null
      : s.status === 'completed'
        ? { id: s.id, name: s.name, startedAt: s.startedAt, answers: s.answers, status: 'completed', completedAt: s.endedAt ?? r.closedAt }
        : s.status === 'expired'
          ? { id: s.id, name: s.name, startedAt: s.startedAt, answers: s.answers, status: 'expired', expiredAt: s.endedAt ?? r.closedAt }
          : { id: s.id, name: s.name, startedAt: s.startedAt, answers: s.answers, status: s.status };
    const payload = buildAttendanceNotification(
      {
        id: r.attendanceId,
        ticketId: r.ticketId,
        ticketUuid: r.ticketUuid,
        origin: { kind: 'active', campaignId: t.campaignId, requestId: contact.requestId, costCenterId: contact.costCenterId },
        number: contact.phone,
        data: contact.data ?? null,
        document: contact.document ?? null,
        occurrence: r.occurrence ?? null,
        user: r.user ?? null,
        closedAt: r.closedAt,
        messages,
        survey,
      },
      this.#deps.random,
    );
    this.#enqueue(contact.companyId, 'attendance', url, payload.event_id, payload);
    return true;
  }

  /** Campaign statistics batches of every company whose period has passed (spec 6.4). */
  flushCampaigns(): void {
    const shared = this.#deps.statistics;
    if (shared) {
      const targets = [...this.#companies].flatMap(([companyId, c]) => (c.config.url_campaign_webhook ? [{ companyId, url: c.config.url_campaign_webhook }] : []));
      shared.flush(targets, (t, batch) => this.#enqueue(t.companyId, 'campaign', t.url, batch.event_id, batch));
      return;
    }
    const now = this.#deps.clock.now();
    for (const [companyId, c] of this.#companies) {
      const wake = c.stats.nextWakeAt();
      if (wake === null || wake > now) continue;
      const url = c.config.url_campaign_webhook;
      // Without a target the batch is not taken (the counts stay dirty and go out once a URL is
      // set), but finished campaigns still settle, so memory does not grow.
      if (!url) {
        c.stats.settle(now);
        continue;
      }
      const batch = c.stats.takeBatch(now, this.#deps.random);
      if (batch) this.#enqueue(companyId, 'campaign', url, batch.event_id, batch);
    }
  }

  /** Counts of a campaign of a company, or undefined when unknown. */
  campaignCounts(companyId: number, campaignId: number) {
    try {
      return this.#company(companyId).stats.counts(campaignId);
    } catch {
      return undefined;
    }
  }

  /**
   * The campaigns whose statistics this server keeps, each company's in the order they were
   * declared (none on the server on Redis, where the statistics are shared); reads create nothing.
   */
  campaignKeys(companyId?: number): { readonly companyId: number; readonly campaignId: number }[] {
    if (this.#deps.statistics) return [];
    const out: { companyId: number; campaignId: number }[] = [];
    for (const [id, c] of this.#companies) {
      if (companyId !== undefined && id !== companyId) continue;
      for (const campaignId of c.stats.campaignIds()) out.push({ companyId: id, campaignId });
    }
    return out;
  }

  /** A campaign's 6.4 object now, or undefined when this server keeps no statistics of it. */
  campaignStatistics(companyId: number, campaignId: number): CampaignStatisticsPayload | undefined {
    const c = this.#companies.get(companyId);
    if (!c || this.#deps.statistics || !c.stats.has(campaignId)) return undefined;
    return c.stats.statistics(campaignId, this.#deps.clock.now());
  }

  /** Starts the statistics period timer. */
  start(periodMs: number): void {
    this.#timer = setInterval(() => this.flushCampaigns(), periodMs);
    this.#timer.unref?.();
  }

  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
  }

  // ------------------------------------------------------------------ reports

  report(event: ReportEvent): void {
    const url = this.#company(event.company_id).config.url_report_webhook;
    this.#enqueue(event.company_id, 'report', url, event.event_id, event);
  }

  // ------------------------------------------------------------------ SMS callbacks

  trackSms(sms: OutgoingSms): void {
    this.#sms.set(sms.smsId, sms);
    this.#changed(`s:${sms.smsId}`, sms);
  }

  /** DLR: `POST url_callback_dlr` with the SMS's status (format in docs/server.md). */
  smsStatus(smsId: string, status: SmsStatus, reason: string | null, at?: number): boolean {
    const sms = this.#sms.get(smsId);
    if (!sms) return false;
    if (status !== 'SENT' && status !== 'DELIVERED') {
      this.#sms.delete(smsId);
      this.#changed(`s:${smsId}`, null);
    }
    // No callback: nothing to build (its id costs a CSPRNG call, and this runs for every SMS).
    if (!sms.callbacks.dlr) return true;
    const id = uuidV4(this.#deps.random);
    this.#enqueue(sms.companyId, 'sms-dlr', sms.callbacks.dlr, id, {
      event_id: id,
      event: 'sms.status',
      ...smsFields(sms),
      status,
      reason,
      parts: sms.parts,
      datetime: formatUtcMinus3(at ?? this.#deps.clock.now()),
    });
    return true;
  }

  /** MO: `POST url_callback_mo` with the reply. */
  smsReply(smsId: string, text: string, at?: number): boolean {
    const sms = this.#sms.get(smsId);
    if (!sms) return false;
    if (!sms.callbacks.mo) return true;
    const id = uuidV4(this.#deps.random);
    this.#enqueue(sms.companyId, 'sms-mo', sms.callbacks.mo, id, {
      event_id: id,
      event: 'sms.reply',
      ...smsFields(sms),
      text,
      datetime: formatUtcMinus3(at ?? this.#deps.clock.now()),
    });
    return true;
  }

  snapshot(): NotifierSnapshot {
    return {
      companies: [...this.#companies].map(([companyId, c]) => ({ companyId, config: c.config, secret: c.secret, stats: c.stats.snapshot() })),
      tracked: [...this.#tracked.entries()],
      sms: [...this.#sms.entries()],
    };
  }
}

function smsFields(sms: OutgoingSms) {
  return {
    sms_id: sms.smsId,
    request_id: sms.requestId,
    index: sms.index,
    reference: sms.reference ?? null,
    campaign_id: sms.campaignId ?? null,
    phone: sms.phone,
  };
}
