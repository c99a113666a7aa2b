/**
 * What the engine's queries answer, read from the fleet's tables and the store: the businesses
 * answer (spec 2.2), numbers and templates as they stand, a type's output, its numbers' rates, what
 * holds a pool back, and when it could have sent a count more.
 */
import type { AssignReason, BusinessOutput, NumberView, TemplateState, TemplateTypeInfo } from './engine-types.js';
import { templateStatusOf } from './engine-snapshot.js';
import { NotFoundError } from './errors.js';
import type { FleetTables } from './fleet-tables.js';
import type { Store } from './limits/store.js';
import type { Pool } from './pool.js';
import type { Portfolio } from './portfolio.js';
import { type NumberRates, sendDurationMs } from './send-estimate.js';
import { type TemplateFields, fleetTemplateFields, templateTypeFields } from './template-fields.js';

/** The spec's GET /messenger/businesses/ response: every business with `output` per template type. */
export function businessesView(t: FleetTables, store: Store, now: number): BusinessOutput[] {
  return t.businesses.map((b) => ({
    id: b.id,
    name: b.name,
    template_types: b.pools.map((p) => ({ id: p.typeId, name: p.typeName, output: poolOutput(t, store, p, now), ...typeFields(t, p) })),
  }));
}

/** `data`, `example`, `variables` of a type: its active templates, or all when none is active. */
function typeFields(t: FleetTables, pool: Pool): ReturnType<typeof templateTypeFields> {
  const active: TemplateFields[] = [];
  const all: TemplateFields[] = [];
  for (const i of pool.templates) {
    const fields = (t.templateFields[i] ??= fleetTemplateFields(t.templates[i]!));
    all.push(fields);
    if (t.templateStatus[i] === 'active') active.push(fields);
  }
  return templateTypeFields(active.length > 0 ? active : all);
}

/**
 * Messages that may be sent now for the pool: the sum of what its eligible numbers may send; the
 * numbers of a portfolio together no more than the portfolio's room for new recipients.
 */
export function poolOutput(t: FleetTables, store: Store, pool: Pool, now: number): number {
  if (pool.grouped) return groupedOutput(t, store, pool, now);
  let sum = 0;
  for (let m = 0; m < pool.members.length; m++) {
    if (pool.eligible[m] === 1) sum += store.available(t.handle[pool.members[m]!]!, now);
  }
  return sum;
}

/**
 * {@link poolOutput} of a pool whose numbers share portfolios: per portfolio, the lesser of its
 * numbers' sum and its room. Messages to recipients already in a portfolio's 24 h cost it nothing,
 * so more may go than this says; never fewer.
 */
function groupedOutput(t: FleetTables, store: Store, pool: Pool, now: number): number {
  let sum = 0;
  const byPortfolio = new Map<Portfolio, number>();
  for (let m = 0; m < pool.members.length; m++) {
    if (pool.eligible[m] !== 1) continue;
    const slot = pool.members[m]!;
    const available = store.available(t.handle[slot]!, now);
    const portfolio = t.numberPortfolio[slot];
    if (portfolio === undefined) sum += available;
    else byPortfolio.set(portfolio, (byPortfolio.get(portfolio) ?? 0) + available);
  }
  for (const [portfolio, available] of byPortfolio) sum += Math.min(available, portfolio.room(now));
  return sum;
}

/** The template type as the contract needs it, or undefined when the business has no such type. */
export function templateTypeView(t: FleetTables, businessId: number, typeId: number): TemplateTypeInfo | undefined {
  const pool = t.pool(businessId, typeId);
  if (!pool) return undefined;
  const templateIds = Array.from(pool.templates, (i) => t.templateIds[i]!);
  const first = pool.templates[0];
  const placeholders = first === undefined ? 0 : t.templates[first]!.placeholders;
  return { id: pool.typeId, name: pool.typeName, businessId, placeholders, templateIds };
}

/** Every number with its status, limits and what it may send now. */
export function numbersView(t: FleetTables, store: Store, now: number): NumberView[] {
  const out: NumberView[] = new Array<NumberView>(t.phones.length);
  for (let slot = 0; slot < t.phones.length; slot++) {
    // Built field by field: spreads of optional parts made every view a dictionary-mode object,
    // ten times slower to build (30 ms for 10,000 numbers).
    const view: { -readonly [K in keyof NumberView]: NumberView[K] } = {
      phone: t.phones[slot]!,
      businessId: t.businesses[t.numberBusiness[slot]!]!.id,
      status: t.numberActive[slot] === 1 ? 'active' : 'paused',
      throughputPerHour: t.perHour[slot]!,
      messagingLimit24h: t.per24h[slot]!,
      available: store.available(t.handle[slot]!, now),
    };
    const until = t.numberUntil.get(slot);
    if (until !== undefined) view.pausedUntil = until;
    const perSecond = t.perSecond[slot]!;
    if (perSecond > 0) view.messagesPerSecond = perSecond;
    out[slot] = view;
  }
  return out;
}

/** Every template with its status. */
export function templatesView(t: FleetTables): TemplateState[] {
  return t.templates.map((template, i) => ({
    ...templateStatusOf(t, i),
    name: template.name,
    businessIds: template.businessIds,
    placeholders: template.placeholders,
  }));
}

/**
 * The windows of the numbers that will carry the pool: its eligible members; when it has none
 * (every number or template stopped), those that are active or come back by themselves.
 */
export function ratesOf(t: FleetTables, pool: Pool): NumberRates[] {
  const rates: NumberRates[] = [];
  const stopped = pool.eligibleCount === 0;
  for (let m = 0; m < pool.members.length; m++) {
    const slot = pool.members[m]!;
    const carries = stopped ? t.numberActive[slot] === 1 || t.numberUntil.has(slot) : pool.eligible[m] === 1;
    if (carries) rates.push({ perHour: t.perHour[slot]!, per24h: t.per24h[slot]!, perSecond: t.perSecond[slot]! });
  }
  return rates;
}

/** Why a pool hands out nothing more now, and when it may again if the engine can tell. */
export function shortfallOf(t: FleetTables, pool: Pool): { reason: AssignReason; retryAt?: number } {
  if (pool.activeTemplates === 0) {
    let at = Infinity;
    for (const i of pool.templates) {
      const until = t.templateUntil[i]!;
      if (t.templateStatus[i] === 'paused' && until < at) at = until;
    }
    return Number.isFinite(at) ? { reason: 'no-template', retryAt: at } : { reason: 'no-template' };
  }
  if (pool.eligibleCount === 0) {
    let at = Infinity;
    for (const slot of pool.members) {
      const until = t.numberUntil.get(slot);
      if (t.numberActive[slot] === 0 && until !== undefined && until < at) at = until;
    }
    return Number.isFinite(at) ? { reason: 'no-number', retryAt: at } : { reason: 'no-number' };
  }
  const at = pool.nextReadyAt();
  return at === undefined || !Number.isFinite(at) ? { reason: 'no-capacity' } : { reason: 'no-capacity', retryAt: at };
}

/**
 * `engine.estimateSendTime` for `count` (1 or more) messages of the pool at `now`, whose fill would
 * be held as `held` says (undefined: not held): what may go now goes at once, the rest at the
 * numbers' rates (send-estimate.ts), from now, or from when the first number may send again.
 */
export function sendTimeOf(t: FleetTables, store: Store, pool: Pool, held: { retryAt?: number } | undefined, count: number, now: number): number | undefined {
  let start = now;
  let left = count;
  if (held === undefined) {
    left -= poolOutput(t, store, pool, now);
    if (left <= 0) return now;
  } else if (held.retryAt === undefined) return undefined;
  else {
    // At `retryAt` the first number may send at least one.
    start = held.retryAt;
    left -= 1;
    if (left === 0) return start;
  }
  const ms = sendDurationMs(left, ratesOf(t, pool));
  return Number.isFinite(ms) ? start + ms : undefined;
}

/** The pool of a business's template type. @throws {NotFoundError} for an unknown business or type */
export function poolOf(t: FleetTables, businessId: number, typeId: number): Pool {
  const b = t.businessIndex.get(businessId);
  if (b === undefined) throw new NotFoundError('business', businessId);
  const pool = t.businesses[b]!.poolByType.get(typeId);
  if (pool === undefined) throw new NotFoundError('template type', typeId, `in business ${businessId}`);
  return pool;
}

/** A business's capacity with each number counted once (`engine.capacity`). */
export interface BusinessCapacity {
  /** Messages its numbers may send now under all their windows (portfolio rooms not applied). */
  readonly output: number;
  /** The sum of its eligible numbers' `throughputPerHour`. */
  readonly throughputPerHour: number;
}

/**
 * A business's capacity with each number counted once: the numbers eligible in at least one of its
 * pools, their hourly rates and what they may send now. The pools' own figures count a number once
 * per template type it serves, so their sum overstates a business whose numbers serve several
 * types. Portfolio rooms are not applied to `output` here (a pool's output applies them).
 * @throws {NotFoundError} for an unknown business
 */
export function businessCapacity(t: FleetTables, store: Store, businessId: number, now: number): BusinessCapacity {
  const index = t.businessIndex.get(businessId);
  if (index === undefined) throw new NotFoundError('business', businessId);
  const b = t.businesses[index]!;
  const counted = new Set<number>();
  let output = 0;
  let throughputPerHour = 0;
  for (const pool of b.pools) {
    for (let m = 0; m < pool.members.length; m++) {
      const slot = pool.members[m]!;
      if (pool.eligible[m] !== 1 || counted.has(slot)) continue;
      counted.add(slot);
      output += store.available(t.handle[slot]!, now);
      throughputPerHour += t.perHour[slot]!;
    }
  }
  return { output, throughputPerHour };
}
