/**
 * The dashboard's JSON answers, built from the engine, the notifier, the outbox and the
 * dashboard's own state, for one key's scope (a company's businesses, or every business for an
 * operator key). Every list is paged, so a fleet of 10,000 numbers answers a page of them, not a
 * megabyte; counts over the whole scope come with each page.
 */
import type { NumberView, TemplateState } from '../../core/engine-types.js';
import type { NumberWindows } from '../../core/limits/store.js';
import type { CampaignStatisticsPayload } from '../../events/schemas/campaign.js';
import type { OutboxTargetView } from '../../events/outbox.js';
import { originOf } from '../../events/outbox.js';
import type { ServerContext } from '../context.js';
import { businessKey, poolKey } from './campaign-pools.js';
import type { Page } from './query.js';
import type { DashboardState } from './state.js';

/** Whose view: a company's key, or an operator key (every company). */
export interface Scope {
  readonly companyId: number;
  readonly operator: boolean;
}

const scopeView = (who: Scope) => ({ operator: who.operator, company_id: who.operator ? null : who.companyId });

// ------------------------------------------------------------------------------------- pools

export function poolsView(ctx: ServerContext, state: DashboardState, who: Scope, page: Page, since: number) {
  const now = ctx.clock.now();
  const rows = [];
  const businesses: string[] = [];
  const totals = { output: 0, throughput_per_hour: 0, queued: 0, waiting_retry: 0 };
  // Output as GET /messenger/businesses/ answers it: the same call, at the same moment for every pool.
  for (const b of ctx.engine.businesses()) {
    if (!ctx.tenants.sees(who, b.id)) continue;
    // Totals count each number once: a number serving two template types is in both pools.
    const capacity = ctx.engine.capacity(b.id);
    businesses.push(businessKey(b.id));
    totals.output += capacity.output;
    totals.throughput_per_hour += capacity.throughputPerHour;
    for (const t of b.template_types) {
      const q = ctx.engine.queueStatus(b.id, t.id);
      const throughput = ctx.engine.throughput(b.id, t.id);
      totals.queued += q.queued;
      totals.waiting_retry += q.waitingRetry;
      rows.push({
        business_id: b.id,
        business_name: b.name,
        company_id: ctx.tenants.companyOf(b.id) ?? null,
        template_type_id: t.id,
        template_type_name: t.name,
        output: t.output,
        throughput_per_hour: throughput,
        queued: q.queued,
        waiting_retry: q.waitingRetry,
        blocked: q.blocked ?? null,
        retry_at: q.retryAt ?? null,
      });
    }
  }
  const key = (r: { business_id: number; template_type_id: number }) => poolKey(r.business_id, r.template_type_id);
  const shown = rows.slice(page.offset, page.offset + page.limit);
  // One list of sample times for the total and every pool of the page; each pool's values follow it.
  // The total's line is the businesses' own (each number once), not the sum of the pools'.
  const samples = state.history.read(businesses, shown.map(key), since);
  const pools = shown.map((r) => ({ ...r, history: samples.pools.get(key(r))! }));
  return {
    now,
    scope: scopeView(who),
    sample_interval_ms: state.sampleIntervalMs,
    total: rows.length,
    offset: page.offset,
    limit: page.limit,
    totals,
    history: { t: samples.t, output: samples.total },
    pools,
  };
}

// ------------------------------------------------------------------------------------- numbers

export interface NumberFilter {
  readonly q?: string | undefined;
  readonly status?: 'active' | 'paused' | undefined;
  readonly businessId?: number | undefined;
}

const windowView = (w: NumberWindows | undefined) => (w === undefined ? null : { ...(w.second ? { second: w.second } : {}), hour: w.hour, day: w.day });

export function numbersView(ctx: ServerContext, state: DashboardState, who: Scope, page: Page, filter: NumberFilter) {
  const now = ctx.clock.now();
  const counts = { active: 0, paused: 0 };
  const matching: NumberView[] = [];
  for (const n of ctx.engine.numbers()) {
    if (!ctx.tenants.sees(who, n.businessId)) continue;
    if (n.status === 'active') counts.active++;
    else counts.paused++;
    if (filter.status !== undefined && n.status !== filter.status) continue;
    if (filter.businessId !== undefined && n.businessId !== filter.businessId) continue;
    if (filter.q !== undefined && !n.phone.includes(filter.q)) continue;
    matching.push(n);
  }
  const numbers = matching.slice(page.offset, page.offset + page.limit).map((n) => {
    const change = state.notes.number(n.phone);
    const provider = state.notes.provider(n.phone);
    const blocked = ctx.incidents.get(n.phone);
    const flag = state.notes.flag(n.phone);
    return {
      phone: n.phone,
      business_id: n.businessId,
      company_id: ctx.tenants.companyOf(n.businessId) ?? null,
      status: n.status,
      paused_until: n.pausedUntil ?? null,
      throughput_per_hour: n.throughputPerHour,
      messaging_limit_24h: n.messagingLimit24h,
      messages_per_second: n.messagesPerSecond ?? null,
      available: n.available,
      windows: windowView(ctx.engine.numberWindows(n.phone)),
      last_change: change ? { source: change.source, at: change.at } : null,
      provider: provider
        ? {
            reason: provider.reason,
            at: provider.at,
            ...(provider.messagingLimit24h !== undefined ? { messaging_limit_24h: provider.messagingLimit24h } : {}),
            ...(provider.throughputPerHour !== undefined ? { throughput_per_hour: provider.throughputPerHour } : {}),
            ...(provider.messagesPerSecond !== undefined ? { messages_per_second: provider.messagesPerSecond } : {}),
          }
        : null,
      // Every message of the number fails for one cause only an operator can end (number-incidents.ts).
      blocked: blocked ? { cause: blocked.cause, code: blocked.code ?? null, reason: blocked.reason, since: blocked.since, failures: blocked.failures } : null,
      flagged: flag ? { at: flag.at, reason: flag.reason } : null,
    };
  });
  return { now, scope: scopeView(who), total: matching.length, offset: page.offset, limit: page.limit, counts, numbers };
}

// ------------------------------------------------------------------------------------- accounts

/**
 * The provider's accounts it reported on (a WABA's violation or disabling scheduled, its business
 * portfolio's messaging limit), each with its numbers in the key's scope; an account with none
 * of them in scope is not shown.
 */
export function accountsView(ctx: ServerContext, state: DashboardState, who: Scope) {
  const now = ctx.clock.now();
  const business = new Map(ctx.engine.numbers().map((n) => [n.phone, n.businessId]));
  const accounts = [];
  for (const a of state.notes.accounts()) {
    const phones = a.phones.filter((p) => {
      const b = business.get(p);
      return b !== undefined && ctx.tenants.sees(who, b);
    });
    if (phones.length === 0) continue;
    // Applied when the fleet gives the account's numbers a portfolio (channel-steering.ts).
    const portfolios = [...new Set(phones.map((p) => ctx.engine.portfolioOf(p)).filter((id): id is string => id !== undefined))];
    accounts.push({
      account_id: a.accountId,
      phones,
      notice: a.notice ? { reason: a.notice.reason, at: a.notice.at } : null,
      business_limit: a.businessLimit
        ? { limit: a.businessLimit.limit, tier: a.businessLimit.tier, reason: a.businessLimit.reason, at: a.businessLimit.at, applied: portfolios.length > 0, portfolios }
        : null,
    });
  }
  return { now, scope: scopeView(who), accounts };
}

// ------------------------------------------------------------------------------------- templates

export interface TemplateFilter {
  readonly status?: 'active' | 'paused' | 'disabled' | undefined;
  readonly businessId?: number | undefined;
}

export function templatesView(ctx: ServerContext, state: DashboardState, who: Scope, page: Page, filter: TemplateFilter) {
  const now = ctx.clock.now();
  const counts = { active: 0, paused: 0, disabled: 0 };
  const matching: TemplateState[] = [];
  for (const t of ctx.engine.templates()) {
    if (!t.businessIds.some((b) => ctx.tenants.sees(who, b))) continue;
    counts[t.status]++;
    if (filter.status !== undefined && t.status !== filter.status) continue;
    if (filter.businessId !== undefined && !t.businessIds.includes(filter.businessId)) continue;
    matching.push(t);
  }
  const templates = matching.slice(page.offset, page.offset + page.limit).map((t) => {
    const change = state.notes.template(t.id);
    return {
      id: t.id,
      name: t.name,
      status: t.status,
      paused_until: t.pausedUntil ?? null,
      // A company sees only its own businesses among those that share the template.
      business_ids: t.businessIds.filter((b) => ctx.tenants.sees(who, b)),
      // Pausing it is open to a key whose companies hold every business of the template (as in /operator/templates/).
      actionable: t.businessIds.every((b) => ctx.tenants.sees(who, b)),
      last_change: change ? { source: change.source, at: change.at, reason: change.reason ?? null } : null,
    };
  });
  return { now, scope: scopeView(who), total: matching.length, offset: page.offset, limit: page.limit, counts, templates };
}

// ------------------------------------------------------------------------------------- campaigns

export function campaignsView(ctx: ServerContext, state: DashboardState, who: Scope, page: Page) {
  const now = ctx.clock.now();
  // Newest first: the campaigns running now are the ones an operator watches.
  const keys = ctx.notifier.campaignKeys(who.operator ? undefined : who.companyId).reverse();
  const status = (id: string) => {
    try {
      return ctx.engine.submissionStatus(id);
    } catch {
      return undefined; // finished and forgotten
    }
  };
  // Campaigns with contacts queued, per pool: they share it fairly (deficit round-robin).
  const queues = new Map<string, ReturnType<typeof state.campaigns.queue>>();
  const activeInPool = new Map<string, number>();
  for (const k of keys) {
    const q = state.campaigns.queue(k.companyId, k.campaignId, status);
    queues.set(`${k.companyId}:${k.campaignId}`, q);
    if (q.queued === 0) continue;
    for (const pool of state.campaigns.get(k.companyId, k.campaignId)?.pools ?? []) activeInPool.set(pool, (activeInPool.get(pool) ?? 0) + 1);
  }
  const campaigns = keys.slice(page.offset, page.offset + page.limit).flatMap((k) => {
    const statistics = ctx.notifier.campaignStatistics(k.companyId, k.campaignId);
    if (statistics === undefined) return [];
    const q = queues.get(`${k.companyId}:${k.campaignId}`)!;
    const pools = [...(state.campaigns.get(k.companyId, k.campaignId)?.pools ?? [])].map((p) => p.split(':').map(Number) as [number, number]);
    return [
      {
        company_id: k.companyId,
        campaign_id: k.campaignId,
        statistics,
        queued: q.queued,
        waiting_retry: q.waitingRetry,
        in_flight: q.inFlight,
        pools: pools.map(([business_id, template_type_id]) => ({ business_id, template_type_id })),
        eta: campaignEta(ctx, statistics, q, pools, activeInPool),
      },
    ];
  });
  return { now, scope: scopeView(who), kept: ctx.backend.campaignsHere, total: keys.length, offset: page.offset, limit: page.limit, campaigns };
}

/** A campaign's ETA: when, if it can tell, and on what it stands. */
export type CampaignEta = { readonly at: number; readonly basis: 'queued' | 'remaining' } | { readonly at: null; readonly basis: 'done' | 'sending' | 'retries' | 'held' | 'unknown' };

/**
 * When the campaign's queued contacts will have been handed out, from its pools' forecast
 * (`engine.estimateSendTime`, which starts from the numbers' windows as they stand): under fair
 * sharing between the k campaigns queued in a pool, the campaign's L contacts go within L x k
 * hand-outs of the pool, and never later than the pool's whole queue. Before its first hand-out
 * its `count_remaining` stands for L. Retries waiting go at their retry time and are not in it.
 * Without a time: done, sending (nothing queued, the last ones in flight or awaiting their
 * status), retries (only retries wait), held (only a resume or a limit change can make a pool send
 * again), unknown (no pool known yet).
 */
function campaignEta(
  ctx: ServerContext,
  statistics: CampaignStatisticsPayload,
  q: { readonly queued: number; readonly waitingRetry: number; readonly known: boolean },
  pools: readonly (readonly [number, number])[],
  activeInPool: ReadonlyMap<string, number>,
): CampaignEta {
  if (statistics.count_remaining === 0) return { at: null, basis: 'done' };
  if (q.known && q.queued === 0) return { at: null, basis: q.waitingRetry > 0 ? 'retries' : 'sending' };
  if (pools.length === 0) return { at: null, basis: 'unknown' };
  const left = q.known ? q.queued : statistics.count_remaining;
  let at = -Infinity;
  for (const [businessId, typeId] of pools) {
    try {
      const poolQueued = ctx.engine.queueStatus(businessId, typeId).queued;
      const share = Math.max(1, activeInPool.get(poolKey(businessId, typeId)) ?? 1);
      const estimate = ctx.engine.estimateSendTime(businessId, typeId, Math.min(Math.max(poolQueued, left), left * share));
      if (estimate === undefined) return { at: null, basis: 'held' };
      at = Math.max(at, estimate);
    } catch {
      // A pool the fleet no longer has.
    }
  }
  return Number.isFinite(at) ? { at, basis: q.known ? 'queued' : 'remaining' } : { at: null, basis: 'unknown' };
}

// ------------------------------------------------------------------------------------- webhooks

/**
 * The outbox's receivers, with the ENQUEUED notifications not built yet counted in their backlog;
 * read at most once a second however many pages ask (the read walks every unfinished event).
 */
export class TargetsCache {
  #at = -Infinity;
  #targets: OutboxTargetView[] = [];

  read(ctx: ServerContext): OutboxTargetView[] {
    const now = ctx.clock.now();
    if (now - this.#at >= 1000 || now < this.#at) {
      this.#targets = withUnbuilt(ctx.outbox.targets(now), ctx.notifier.unbuiltByUrl());
      this.#at = now;
    }
    return this.#targets;
  }
}

/** Receivers with the notifications of runs not built yet added to their backlog (and receivers only runs wait for). */
function withUnbuilt(targets: OutboxTargetView[], unbuilt: ReturnType<ServerContext['notifier']['unbuiltByUrl']>): OutboxTargetView[] {
  if (unbuilt.length === 0) return targets;
  const byOrigin = new Map(targets.map((t) => [t.origin, { ...t, pendingByCompany: new Map(t.pendingByCompany) }]));
  for (const u of unbuilt) {
    const origin = originOf(u.url);
    let t = byOrigin.get(origin);
    if (t === undefined) {
      t = { origin, pending: 0, pendingByCompany: new Map(), down: false, downReason: null, failures: 0, lastError: null, probeAt: null, due: 0, retrying: 0, inFlight: 0, held: 0 };
      byOrigin.set(origin, t);
    }
    t.pending += u.count;
    t.pendingByCompany.set(u.companyId, (t.pendingByCompany.get(u.companyId) ?? 0) + u.count);
  }
  return [...byOrigin.values()];
}

const FAMILY_OF_FIELD = {
  url_hsm_callback: 'hsm',
  url_campaign_webhook: 'campaign',
  url_attendance_callback: 'attendance',
  url_report_webhook: 'report',
} as const;

export function webhooksView(ctx: ServerContext, state: DashboardState, targetsCache: TargetsCache, who: Scope, page: Page) {
  const now = ctx.clock.now();
  const mine = (companyId: number) => who.operator || companyId === who.companyId;
  interface Row {
    origin: string;
    families: Set<string>;
    backlog: number;
    down: boolean;
    failures: number;
    retrying: number;
    last_error: string | null;
    next_probe_at: number | null;
    deliveries_per_second: number;
    delivered: number;
    dead_lettered: number;
    last_dead_letter: { at: number; error: string } | null;
  }
  const rows = new Map<string, Row>();
  const row = (origin: string): Row => {
    let r = rows.get(origin);
    if (r === undefined) {
      r = {
        origin,
        families: new Set(),
        backlog: 0,
        down: false,
        failures: 0,
        retrying: 0,
        last_error: null,
        next_probe_at: null,
        deliveries_per_second: 0,
        delivered: 0,
        dead_lettered: 0,
        last_dead_letter: null,
      };
      rows.set(origin, r);
    }
    return r;
  };
  // The receivers the key's companies configured (secrets stay on the server: only URLs' origins are read).
  for (const w of ctx.notifier.webhooks()) {
    if (!mine(w.companyId)) continue;
    for (const [field, family] of Object.entries(FAMILY_OF_FIELD)) {
      const url = w.config[field as keyof typeof FAMILY_OF_FIELD];
      if (typeof url === 'string' && url !== '') row(originOf(url)).families.add(family);
    }
  }
  const targets = targetsCache.read(ctx);
  let pendingTotal = 0;
  for (const t of targets) {
    const backlog = who.operator ? t.pending : (t.pendingByCompany.get(who.companyId) ?? 0);
    pendingTotal += backlog;
    if (backlog === 0 && !rows.has(t.origin) && !who.operator) continue;
    const r = row(t.origin);
    r.backlog = backlog;
    // Down is the origin's (no connection, or most recent events failing); failures are its recent
    // events whose latest attempt failed, shown also while it is up (one broken path).
    r.down = t.down;
    r.failures = t.failures;
    r.retrying = t.retrying;
    r.last_error = t.lastError;
    r.next_probe_at = t.probeAt;
  }
  for (const d of state.deliveries.rates(now)) {
    if (!mine(d.companyId)) continue;
    const r = row(d.origin);
    r.deliveries_per_second += d.perSecond;
    r.delivered += d.delivered;
    r.dead_lettered += d.deadLettered;
    if (d.lastDeadLetter && (r.last_dead_letter === null || d.lastDeadLetter.at > r.last_dead_letter.at)) r.last_dead_letter = d.lastDeadLetter;
  }
  // The busiest first: a backlog is what an operator acts on.
  const all = [...rows.values()].sort((a, b) => b.backlog - a.backlog || Number(b.down) - Number(a.down) || b.failures - a.failures || a.origin.localeCompare(b.origin));
  const shown = all.slice(page.offset, page.offset + page.limit).map((r) => ({ ...r, families: [...r.families].sort() }));
  return { now, scope: scopeView(who), total: all.length, offset: page.offset, limit: page.limit, pending_total: pendingTotal, targets: shown };
}
