/**
 * Capacity forecast: when would N messages of one (business, template type) be sent, computed from
 * the numbers' limits alone, without running the engine.
 *
 * Pure: no clock, no I/O. Time is milliseconds from the start of the send (0).
 *
 * Model (the same windows the engine enforces, see `limits/memory-store.ts`):
 * - the pool always has messages waiting until the N-th goes, so every eligible number sends as
 *   fast as its windows allow, and the pool's cumulative count is the sum of the numbers' counts;
 * - per hour: a token bucket of `throughputPerHour`, full at the start, refilling continuously
 *   (GCRA). From a state whose theoretical arrival time is `tau` (or the segment start, if the
 *   bucket is full), a greedy sender has sent `C + floor((t - tau) * C / P)` messages by time t;
 * - per second (optional): the same with `messagesPerSecond` over 1,000 ms; with both windows the
 *   greedy count is the smaller of the two curves (one binds, the other drains or stays full);
 * - rolling 24 h: sends counted in 60-minute buckets; a send made in bucket k counts until the
 *   current bucket is k + 25, i.e. it weighs on the limit for 24 h to 25 h (conservative).
 *
 * The computation walks segments that never cross an hour boundary or a fleet change. Within a
 * segment the 24 h allowance is constant, so a number's count is `min(allowance, min over windows
 * of the bucket curves)`, evaluated in closed form; the completion instant inside the last segment
 * is found by bisection over whole milliseconds. Cost: O(hours x numbers), independent of N.
 */
import type { Fleet, FleetBusiness, FleetNumber, FleetTemplate } from './fleet-validate.js';

const HOUR = 3_600_000;
const SECOND = 1_000;
/** A send weighs on the 24 h limit while the current hour bucket is at most 24 buckets later. */
const DAY_BUCKETS = 25;
const EPS = 1e-9;

/** A timed change of the fleet during the forecast (the simulation applies the same ones). */
export type FleetChange =
  | { readonly at: number; readonly kind: 'number-status'; readonly phone: string; readonly status: 'active' | 'paused' }
  | { readonly at: number; readonly kind: 'template-status'; readonly templateId: number; readonly status: 'active' | 'paused' | 'disabled' }
  | {
      readonly at: number;
      readonly kind: 'number-limits';
      readonly phone: string;
      readonly throughputPerHour?: number;
      readonly messagingLimit24h?: number;
      /** null removes the per-second window. */
      readonly messagesPerSecond?: number | null;
    };

/** What a forecast is asked. */
export interface ForecastInput {
  /** A validated fleet (`validateFleet(...).fleet`). */
  readonly fleet: Fleet;
  readonly businessId: number;
  readonly typeId: number;
  /** Messages to send, 0 or more. */
  readonly messages: number;
  /** Timed changes, any order; times in ms from the start. */
  readonly changes?: readonly FleetChange[];
  /** Give up when not done by this time (ms). @default 366 days */
  readonly horizonMs?: number;
}

/** Which limit holds a number back during a phase. */
export type ForecastLimit = 'messagesPerSecond' | 'throughputPerHour' | 'messagingLimit24h' | 'paused' | 'no-template';

/** A stretch of time during which one limit holds a number back. */
export interface LimitPhase {
  readonly limit: ForecastLimit;
  readonly fromMs: number;
  /** End of the phase (exclusive); the completion time for the last one. */
  readonly toMs: number;
}

/** One number of the pool in a forecast. */
export interface NumberForecast {
  readonly phone: string;
  /** Messages it sends by completion (or by the horizon). */
  readonly sent: number;
  /** First time its 24 h messaging limit is used up, or null. */
  readonly ranOutAtMs: number | null;
  /** What holds it back, phase by phase, from 0 to completion. */
  readonly phases: readonly LimitPhase[];
}

/** One hour of the schedule: what the pool sends in [fromMs, fromMs + 1 h). */
export interface ForecastHour {
  readonly hour: number;
  readonly fromMs: number;
  readonly sent: number;
  /** Messages sent by the end of the hour. */
  readonly total: number;
  /** Numbers held back by their 24 h limit at some point of the hour. */
  readonly limitedBy24h: number;
}

/** Answer of {@link forecast}. */
export interface Forecast {
  readonly messages: number;
  /** True when all messages go before the horizon. */
  readonly completed: boolean;
  /** Time of the last message (ms), or null when not completed. */
  readonly completionMs: number | null;
  /** Messages sent by completion, or by the horizon. */
  readonly sent: number;
  /** Pool throughput at the start: sum of the eligible numbers' hourly rates. */
  readonly throughputPerHour: number;
  /** Messages the pool may send at once at the start (its output with full buckets). */
  readonly outputAtStart: number;
  readonly hours: readonly ForecastHour[];
  readonly numbers: readonly NumberForecast[];
  /** When not completed: why it stops (`horizon`, `no-number`, `no-template`). */
  readonly stoppedBy?: 'horizon' | 'no-number' | 'no-template';
}

interface Window {
  cap: number;
  period: number;
  /** Theoretical arrival time, real-valued ms. */
  tat: number;
}

interface NumberState {
  readonly phone: string;
  readonly account: string | undefined;
  active: boolean;
  hour: Window;
  second: Window | undefined;
  limit24h: number;
  /** Sends per hour bucket index. */
  readonly buckets: Map<number, number>;
  sent: number;
  ranOutAt: number | null;
  readonly phases: LimitPhase[];
  // Per-segment values.
  eligible: boolean;
  allowance: number;
  tauH: number;
  tauS: number;
}

/** Greedy sends of one window by time x, from its segment-start arrival time `tau`. */
function windowCount(w: Window, tau: number, x: number): number {
  return w.cap + Math.floor(((x - tau) * w.cap) / w.period + EPS);
}

/** Sends of `n` in the current segment by time x (x >= segment start). */
function countBy(n: NumberState, x: number): number {
  if (!n.eligible || n.allowance <= 0) return 0;
  let c = windowCount(n.hour, n.tauH, x);
  if (n.second) {
    const s = windowCount(n.second, n.tauS, x);
    if (s < c) c = s;
  }
  if (c > n.allowance) c = n.allowance;
  return c > 0 ? c : 0;
}

/** Earliest whole ms, not before `start`, at which `n` has sent j (>= 1) messages in the segment. */
function timeOfSend(n: NumberState, j: number, start: number): number {
  let t = Math.ceil(n.tauH + ((j - n.hour.cap) * n.hour.period) / n.hour.cap - EPS);
  if (n.second) t = Math.max(t, Math.ceil(n.tauS + ((j - n.second.cap) * n.second.period) / n.second.cap - EPS));
  return t > start ? t : start;
}

function daySum(n: NumberState, bucket: number): number {
  let sum = 0;
  for (let k = bucket - DAY_BUCKETS + 1; k <= bucket; k++) sum += n.buckets.get(k) ?? 0;
  return sum;
}

function canSend(number: { account: string | undefined }, template: FleetTemplate): boolean {
  return number.account === undefined || template.account === undefined || template.account === number.account;
}

function pushPhase(n: NumberState, limit: ForecastLimit, from: number, to: number): void {
  if (to <= from) return;
  const last = n.phases[n.phases.length - 1];
  if (last && last.limit === limit && last.toMs === from) {
    n.phases[n.phases.length - 1] = { limit, fromMs: last.fromMs, toMs: to };
  } else n.phases.push({ limit, fromMs: from, toMs: to });
}

function rescale(w: Window, newCap: number, now: number): void {
  if (w.tat > now) w.tat = now + ((w.tat - now) * w.cap) / newCap;
  w.cap = newCap;
}

/** What the pool has sent so far, and the hours closed. */
interface Tally {
  total: number;
  /** Sent in the hour being walked, and the numbers its 24 h limit held back in it. */
  hourSent: number;
  hourLimited: Set<string>;
  readonly hours: ForecastHour[];
}

/**
 * Forecasts the sending of `messages` messages for (businessId, typeId) from time 0.
 * Unknown business or type: a forecast that never completes, stopped by `no-number`.
 */
export function forecast(input: ForecastInput): Forecast {
  const { fleet, messages } = input;
  const horizon = input.horizonMs ?? 366 * 24 * HOUR;
  const pool = poolOf(fleet, input.businessId, input.typeId);
  const typeTemplates = pool.templates;
  const templateStatus = new Map<number, string>(fleet.templates.map((t) => [t.id, t.status]));
  const changes = timedChanges(input.changes ?? [], pool.numbers, typeTemplates);
  const numbers = pool.numbers.map(numberState);
  const byPhone = new Map(numbers.map((n) => [n.phone, n]));
  const anyTemplate = (): boolean => typeTemplates.some((t) => templateStatus.get(t.id) === 'active');
  const hasTemplate = (n: NumberState): boolean => typeTemplates.some((t) => templateStatus.get(t.id) === 'active' && canSend(n, t));
  const atStart = startCapacity(numbers, hasTemplate);

  const tally: Tally = { total: 0, hourSent: 0, hourLimited: new Set(), hours: [] };
  let completion: number | null = messages <= 0 ? 0 : null;
  let stoppedBy: Forecast['stoppedBy'];
  let next = 0; // next change to apply
  let t0 = 0;
  while (completion === null) {
    while (next < changes.length && changes[next]!.at <= t0) applyChange(changes[next++]!, templateStatus, byPhone, t0);
    const bucket = Math.floor(t0 / HOUR);
    const nextChange = next < changes.length ? changes[next]!.at : Infinity;
    // Segments end at hour boundaries, changes and the horizon: nothing counts as sent after it.
    const end = Math.min((bucket + 1) * HOUR, nextChange, horizon);
    const anyEligible = startSegment(numbers, hasTemplate, t0, bucket);
    stoppedBy = stopAt(anyEligible, nextChange, t0, horizon, anyTemplate);
    if (stoppedBy !== undefined) break;
    // Sends at whole ms in [t0, end - 1].
    const need = messages - tally.total;
    completion = completionIn(numbers, t0, end - 1, need);
    const stop = completion ?? end - 1;
    const counts = completion === null ? numbers.map((n) => countBy(n, stop)) : lastCounts(numbers, t0, stop, need);
    recordSegment(numbers, counts, t0, stop + 1, bucket, tally);
    if (completion !== null || end === (bucket + 1) * HOUR) closeHour(tally, bucket);
    t0 = end;
  }
  if (completion === null && (tally.hourSent > 0 || tally.hourLimited.size > 0)) closeHour(tally, Math.floor(t0 / HOUR));

  return {
    messages,
    completed: completion !== null,
    completionMs: completion,
    sent: tally.total,
    throughputPerHour: atStart.throughputPerHour,
    outputAtStart: atStart.output,
    hours: tally.hours,
    numbers: numbers.map((n) => ({ phone: n.phone, sent: n.sent, ranOutAtMs: n.ranOutAt, phases: n.phases })),
    ...(stoppedBy ? { stoppedBy } : {}),
  };
}

/** The numbers of (businessId, typeId) and its templates; none for an unknown business or type. */
function poolOf(fleet: Fleet, businessId: number, typeId: number): { numbers: readonly FleetNumber[]; templates: FleetTemplate[] } {
  const business: FleetBusiness | undefined = fleet.businesses.find((b) => b.id === businessId);
  if (business === undefined) return { numbers: [], templates: [] };
  const templateById = new Map(fleet.templates.map((t) => [t.id, t]));
  const typeIds = business.templateTypes.find((t) => t.id === typeId)?.templateIds ?? [];
  return { numbers: business.numbers, templates: typeIds.map((id) => templateById.get(id)).filter((t): t is FleetTemplate => t !== undefined) };
}

/** The pool's hourly throughput and the messages it may send at once, at the start (full buckets). */
function startCapacity(numbers: readonly NumberState[], hasTemplate: (n: NumberState) => boolean): { throughputPerHour: number; output: number } {
  let throughputPerHour = 0;
  let output = 0;
  for (const n of numbers) {
    if (n.active && hasTemplate(n)) {
      throughputPerHour += n.hour.cap;
      output += Math.min(n.hour.cap, n.second?.cap ?? Infinity, n.limit24h);
    }
  }
  return { throughputPerHour, output };
}

/** The changes given, and the ends of the timed pauses the fleet sets (they end by themselves), in time order. */
function timedChanges(given: readonly FleetChange[], numbers: readonly FleetNumber[], templates: readonly FleetTemplate[]): FleetChange[] {
  const changes: FleetChange[] = [...given];
  for (const n of numbers) {
    if (n.status === 'paused' && n.pausedUntil !== undefined) changes.push({ at: n.pausedUntil, kind: 'number-status', phone: n.phone, status: 'active' });
  }
  for (const t of templates) {
    if (t.status === 'paused' && t.pausedUntil !== undefined) changes.push({ at: t.pausedUntil, kind: 'template-status', templateId: t.id, status: 'active' });
  }
  return changes.sort((a, b) => a.at - b.at);
}

function numberState(n: FleetNumber): NumberState {
  return {
    phone: n.phone,
    account: n.account,
    active: n.status === 'active',
    hour: { cap: n.throughputPerHour, period: HOUR, tat: 0 },
    second: n.messagesPerSecond === undefined ? undefined : { cap: n.messagesPerSecond, period: SECOND, tat: 0 },
    limit24h: n.messagingLimit24h,
    buckets: new Map(),
    sent: 0,
    ranOutAt: null,
    phases: [],
    eligible: false,
    allowance: 0,
    tauH: 0,
    tauS: 0,
  };
}

/** Why the walk stops at `t0`: nothing will ever send (no change to come), or the horizon is reached; undefined: it goes on. */
function stopAt(anyEligible: boolean, nextChange: number, t0: number, horizon: number, anyTemplate: () => boolean): Forecast['stoppedBy'] {
  if (!anyEligible && nextChange === Infinity) return anyTemplate() ? 'no-number' : 'no-template';
  return t0 >= horizon ? 'horizon' : undefined;
}

/** A change falling due at `now`. */
function applyChange(c: FleetChange, templateStatus: Map<number, string>, byPhone: ReadonlyMap<string, NumberState>, now: number): void {
  if (c.kind === 'template-status') {
    templateStatus.set(c.templateId, c.status);
    return;
  }
  const n = byPhone.get(c.phone);
  if (!n) return;
  if (c.kind === 'number-status') {
    n.active = c.status === 'active';
    return;
  }
  if (c.throughputPerHour !== undefined && c.throughputPerHour !== n.hour.cap) rescale(n.hour, c.throughputPerHour, now);
  if (c.messagesPerSecond === null) n.second = undefined;
  else if (c.messagesPerSecond !== undefined) {
    if (n.second) rescale(n.second, c.messagesPerSecond, now);
    else n.second = { cap: c.messagesPerSecond, period: SECOND, tat: 0 };
  }
  if (c.messagingLimit24h !== undefined) n.limit24h = c.messagingLimit24h;
}

/** Each number's values for a segment from `t0` in hour `bucket`; answers whether any may send. */
function startSegment(numbers: readonly NumberState[], hasTemplate: (n: NumberState) => boolean, t0: number, bucket: number): boolean {
  let anyEligible = false;
  for (const n of numbers) {
    n.eligible = n.active && hasTemplate(n);
    if (!n.eligible) continue;
    anyEligible = true;
    n.allowance = n.limit24h - daySum(n, bucket);
    n.tauH = Math.max(n.hour.tat, t0);
    n.tauS = n.second ? Math.max(n.second.tat, t0) : 0;
  }
  return anyEligible;
}

/** The first ms in [t0, last] at which the pool has sent `need` in the segment (bisection), or null when it does not. */
function completionIn(numbers: readonly NumberState[], t0: number, last: number, need: number): number | null {
  const sentBy = (x: number): number => {
    let s = 0;
    for (const n of numbers) s += countBy(n, x);
    return s;
  };
  if (sentBy(last) < need) return null;
  let lo = t0;
  let hi = last;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (sentBy(mid) >= need) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/**
 * Counts per number at completion (`stop`, the last `need` of the send): the last instant is shared
 * round-robin, so what it holds is spread evenly over the numbers that could send in it.
 */
function lastCounts(numbers: readonly NumberState[], t0: number, stop: number, need: number): number[] {
  const counts = stop > t0 ? numbers.map((n) => countBy(n, stop - 1)) : numbers.map(() => 0);
  const room = numbers.map((n, i) => countBy(n, stop) - counts[i]!);
  let rest = need - counts.reduce((a, b) => a + b, 0);
  while (rest > 0) {
    const open = room.filter((r) => r > 0).length;
    const share = Math.max(1, Math.floor(rest / open));
    for (let i = 0; i < counts.length && rest > 0; i++) {
      const give = Math.min(share, room[i]!, rest);
      if (give <= 0) continue;
      counts[i]! += give;
      room[i]! -= give;
      rest -= give;
    }
  }
  return counts;
}

/** The segment [t0, phaseEnd) walked: each number's phases, and its `counts` charged to its windows and to the tally. */
function recordSegment(numbers: readonly NumberState[], counts: readonly number[], t0: number, phaseEnd: number, bucket: number, tally: Tally): void {
  numbers.forEach((n, i) => {
    if (!n.eligible) {
      pushPhase(n, n.active ? 'no-template' : 'paused', t0, phaseEnd);
      return;
    }
    const m = counts[i]!;
    const limitFrom = ratePhases(n, m, t0, phaseEnd);
    if (limitFrom !== undefined) {
      if (n.ranOutAt === null) n.ranOutAt = limitFrom;
      tally.hourLimited.add(n.phone);
    }
    if (m > 0) {
      charge(n, m, t0, bucket);
      tally.total += m;
      tally.hourSent += m;
    }
    // Buckets older than a day no longer count.
    n.buckets.delete(bucket - DAY_BUCKETS);
  });
}

/**
 * Which limit holds an eligible number that sends `m` in the segment back, and from when: a rate
 * window until its 24 h allowance is used up (at the time of its last allowed send), then the 24 h
 * limit. Answers when the 24 h limit took hold, undefined when it did not.
 */
function ratePhases(n: NumberState, m: number, t0: number, phaseEnd: number): number | undefined {
  const hitsAllowance = n.allowance <= 0 || m >= n.allowance;
  const limitFrom = n.allowance <= 0 ? t0 : hitsAllowance ? timeOfSend(n, n.allowance, t0) : phaseEnd;
  if (n.second && limitFrom > t0) windowPhases(n, n.second, t0, limitFrom);
  else pushPhase(n, 'throughputPerHour', t0, limitFrom);
  if (!hitsAllowance) return undefined;
  pushPhase(n, 'messagingLimit24h', limitFrom, phaseEnd);
  return limitFrom;
}

/** With both rate windows, the smaller curve binds; the two cross at most once in a segment. */
function windowPhases(n: NumberState, second: Window, t0: number, until: number): void {
  const secondFirst = windowCount(second, n.tauS, t0) <= windowCount(n.hour, n.tauH, t0);
  const rs = second.cap / second.period;
  const rh = n.hour.cap / n.hour.period;
  const cross = rs === rh ? Infinity : (n.hour.cap - second.cap + n.tauS * rs - n.tauH * rh) / (rs - rh);
  const crossAt = Number.isFinite(cross) && cross > t0 ? Math.min(Math.ceil(cross), until) : t0;
  pushPhase(n, secondFirst ? 'messagesPerSecond' : 'throughputPerHour', t0, crossAt);
  pushPhase(n, secondFirst ? 'throughputPerHour' : 'messagesPerSecond', crossAt, until);
}

/** `m` sends of the number in the segment from `t0` (hour `bucket`): its windows' arrival times move on, its 24 h bucket counts them. */
function charge(n: NumberState, m: number, t0: number, bucket: number): void {
  const lastSend = timeOfSend(n, m, t0);
  n.hour.tat = Math.max(n.tauH + (m * n.hour.period) / n.hour.cap, lastSend + n.hour.period / n.hour.cap);
  if (n.second) n.second.tat = Math.max(n.tauS + (m * n.second.period) / n.second.cap, lastSend + n.second.period / n.second.cap);
  n.buckets.set(bucket, (n.buckets.get(bucket) ?? 0) + m);
  n.sent += m;
}

function closeHour(tally: Tally, k: number): void {
  tally.hours.push({ hour: k, fromMs: k * HOUR, sent: tally.hourSent, total: tally.total, limitedBy24h: tally.hourLimited.size });
  tally.hourSent = 0;
  tally.hourLimited = new Set();
}
