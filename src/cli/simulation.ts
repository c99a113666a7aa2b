/**
 * The simulation behind `simulate`: the real engine and dispatch loop on a manual clock.
 * submit -> poll -> report every message sent -> clock.set(nextWakeAt()), applying the timed
 * events when the clock reaches them. The channel always answers "sent".
 */
import { createEngine, ManualClock, type Engine } from '../index.js';
import type { TimedEvent } from './events-file.js';

const HOUR = 3_600_000;
/** Buckets of the simulation's own 24 h count (the engine's default store: 60-minute buckets). */
const DAY_BUCKETS = 25;
/** Most points kept per series; the sampling interval doubles when more would be needed. */
const MAX_SAMPLES = 1_000;

export interface SimulationInput {
  /** The fleet description as read from the file (the engine validates it again). */
  readonly fleet: unknown;
  readonly businessId: number;
  readonly typeId: number;
  readonly messages: number;
  /** In time order. */
  readonly events: readonly TimedEvent[];
  /** Give up when not done by this clock time. */
  readonly horizonMs: number;
  /** Most messages per poll. @default 100000 */
  readonly pollLimit?: number;
  onProgress?(sent: number, now: number): void;
}

export interface SimulatedNumber {
  readonly phone: string;
  readonly throughputPerHour: number;
  readonly messagingLimit24h: number;
  readonly messagesPerSecond: number | null;
  readonly sent: number;
  /** First clock time its 24 h messaging limit was used up, or null. */
  readonly ranOutAtMs: number | null;
}

export interface SimulatedTemplate {
  readonly id: number;
  readonly name: string;
  readonly sent: number;
  /** First clock time it left the pool (paused or disabled), or null. */
  readonly ranOutAtMs: number | null;
}

/** Cumulative messages per number at sample times. */
export interface Series {
  readonly times: number[];
  /** `perNumber[i][k]`: messages number i had sent by `times[k]`. */
  readonly perNumber: number[][];
}

export interface AppliedEvent {
  readonly atMs: number;
  readonly label: string;
  readonly kind: 'pause' | 'resume' | 'template' | 'limits';
  /** Pool throughput (messages/hour) just after the event. */
  readonly throughputPerHour: number;
}

export interface SimulationResult {
  readonly completed: boolean;
  readonly completionMs: number | null;
  /** Clock time at which the run stopped (completion, horizon, or a dead end). */
  readonly endMs: number;
  readonly sent: number;
  /** Why an incomplete run stopped: `horizon`, or the queue's blocker (`no-number`, `no-template`). */
  readonly stoppedBy?: string;
  readonly polls: number;
  readonly throughputAtStartPerHour: number;
  readonly numbers: SimulatedNumber[];
  readonly templates: SimulatedTemplate[];
  readonly events: AppliedEvent[];
  readonly series: Series;
}

function apply(engine: Engine, e: TimedEvent): void {
  const c = e.change;
  switch (c.kind) {
    case 'number-status':
      engine.setNumberStatus(c.phone, c.status);
      return;
    case 'template-status':
      engine.setTemplateStatus(c.templateId, c.status);
      return;
    case 'number-limits':
      engine.setNumberLimits(c.phone, {
        ...(c.throughputPerHour !== undefined ? { throughputPerHour: c.throughputPerHour } : {}),
        ...(c.messagingLimit24h !== undefined ? { messagingLimit24h: c.messagingLimit24h } : {}),
        ...(c.messagesPerSecond !== undefined ? { messagesPerSecond: c.messagesPerSecond } : {}),
      });
      return;
  }
}

function kindOf(e: TimedEvent): AppliedEvent['kind'] {
  const c = e.change;
  if (c.kind === 'number-status') return c.status === 'paused' ? 'pause' : 'resume';
  return c.kind === 'template-status' ? 'template' : 'limits';
}

export function simulate(input: SimulationInput): SimulationResult {
  const { businessId, typeId, messages, events } = input;
  const clock = new ManualClock(0);
  const engine = createEngine(input.fleet, { clock });
  const type = engine.templateType(businessId, typeId)!;
  const pollLimit = input.pollLimit ?? 100_000;

  // Numbers of the business (the pool's candidates), in fleet order.
  const views = engine.numbers().filter((n) => n.businessId === businessId);
  const index = new Map(views.map((n, i) => [n.phone, i]));
  const sentBy = new Float64Array(views.length);
  const limit24h = Float64Array.from(views, (n) => n.messagingLimit24h);
  const ranOut: (number | null)[] = views.map(() => null);
  // Our own count of the 24 h window, as the store counts it: hour buckets, 25 of them.
  const dayRing = new Float64Array(views.length * DAY_BUCKETS);
  const prevHead = new Float64Array(views.length).fill(-1);
  const daySum = new Float64Array(views.length);
  const counted = new Float64Array(views.length);

  const templateList = engine.templates().filter((t) => type.templateIds.includes(t.id));
  const templateIndex = new Map(templateList.map((t, i) => [t.id, i]));
  const sentWith = new Float64Array(templateList.length);
  const templateOut: (number | null)[] = templateList.map((t) => (t.status === 'active' ? null : 0));
  const noteTemplates = (now: number) => {
    for (const t of engine.templates()) {
      const i = templateIndex.get(t.id);
      if (i !== undefined && t.status !== 'active' && templateOut[i] === null) templateOut[i] = now;
    }
  };

  const throughputAtStart = engine.throughput(businessId, typeId);
  const contact = { phone: '5500000000000', variables: new Array<string>(type.placeholders).fill('x') };
  engine.submit({ businessId, typeId, contacts: new Array(messages).fill(contact) });

  // Samples: a point at 0, then one per interval (doubling when too many), and one at the end.
  let interval = 60_000;
  let nextSample = 0;
  const times: number[] = [];
  const perNumber: number[][] = views.map(() => []);
  const sample = (now: number) => {
    times.push(now);
    for (let i = 0; i < views.length; i++) perNumber[i]!.push(sentBy[i]!);
    if (times.length > MAX_SAMPLES) {
      // Keep every other point (always the first and the newest).
      const keep = (_: number, k: number, all: readonly number[]) => k % 2 === 0 || k === all.length - 1;
      const t2 = times.filter(keep);
      times.length = 0;
      times.push(...t2);
      for (const s of perNumber) {
        const s2 = s.filter(keep);
        s.length = 0;
        s.push(...s2);
      }
      interval *= 2;
    }
    nextSample = now + interval;
  };
  sample(0);

  const applied: AppliedEvent[] = [];
  let nextEvent = 0;
  let sent = 0;
  let polls = 0;
  let now = 0;
  let completion: number | null = null;
  let stoppedBy: string | undefined;
  let lastPhone = '';
  let lastIndex = -1;
  noteTemplates(0);

  for (;;) {
    while (nextEvent < events.length && events[nextEvent]!.change.at <= now) {
      const e = events[nextEvent++]!;
      apply(engine, e);
      const c = e.change;
      if (c.kind === 'number-limits' && c.messagingLimit24h !== undefined) {
        const i = index.get(c.phone);
        if (i !== undefined) limit24h[i] = c.messagingLimit24h;
      }
      applied.push({ atMs: now, label: e.label, kind: kindOf(e), throughputPerHour: engine.throughput(businessId, typeId) });
      noteTemplates(now);
    }

    // Sample before this poll's sends: a number idle since the last point stays flat on the chart.
    if (now >= nextSample) sample(now);
    const batch = engine.poll({ limit: pollLimit });
    polls++;
    for (let k = 0; k < batch.length; k++) {
      const m = batch[k]!;
      engine.report(m.messageId, { status: 'sent' });
      let i: number;
      if (m.phone === lastPhone) i = lastIndex;
      else {
        i = index.get(m.phone)!;
        lastPhone = m.phone;
        lastIndex = i;
      }
      sentBy[i]!++;
      sentWith[templateIndex.get(m.templateId)!]!++;
    }
    engine.takeOutcomes();
    if (batch.length > 0) {
      sent += batch.length;
      countDay(now);
    }
    input.onProgress?.(sent, now);
    if (sent >= messages) {
      completion = now;
      break;
    }
    const wake = engine.nextWakeAt();
    const eventAt = nextEvent < events.length ? events[nextEvent]!.change.at : Infinity;
    const next = Math.min(wake ?? Infinity, eventAt);
    if (!Number.isFinite(next)) {
      stoppedBy = engine.queueStatus(businessId, typeId).blocked ?? 'no-capacity';
      break;
    }
    if (next > input.horizonMs) {
      stoppedBy = 'horizon';
      break;
    }
    clock.set(next);
    now = next;
  }
  // The last point holds everything sent, including the last poll's sends.
  if (times[times.length - 1] === now) {
    times.pop();
    for (const series of perNumber) series.pop();
  }
  sample(now);

  /** Brings each number's 24 h count to `now` and notes the first time it reached its limit. */
  function countDay(at: number): void {
    const bucket = Math.floor(at / HOUR);
    for (let i = 0; i < views.length; i++) {
      const total = sentBy[i]!;
      const base = i * DAY_BUCKETS;
      const head = prevHead[i]!;
      if (head !== bucket) {
        if (head < 0 || bucket - head >= DAY_BUCKETS) {
          dayRing.fill(0, base, base + DAY_BUCKETS);
          daySum[i] = 0;
        } else {
          for (let k = head + 1; k <= bucket; k++) {
            const slot = base + (k % DAY_BUCKETS);
            daySum[i]! -= dayRing[slot]!;
            dayRing[slot] = 0;
          }
        }
        prevHead[i] = bucket;
      }
      const delta = total - counted[i]!;
      if (delta > 0) {
        dayRing[base + (bucket % DAY_BUCKETS)]! += delta;
        daySum[i]! += delta;
        counted[i] = total;
      }
      if (ranOut[i] === null && daySum[i]! >= limit24h[i]!) ranOut[i] = at;
    }
  }

  return {
    completed: completion !== null,
    completionMs: completion,
    endMs: now,
    sent,
    ...(stoppedBy !== undefined ? { stoppedBy } : {}),
    polls,
    throughputAtStartPerHour: throughputAtStart,
    numbers: views.map((n, i) => ({
      phone: n.phone,
      throughputPerHour: n.throughputPerHour,
      messagingLimit24h: n.messagingLimit24h,
      messagesPerSecond: n.messagesPerSecond ?? null,
      sent: sentBy[i]!,
      ranOutAtMs: ranOut[i]!,
    })),
    templates: templateList.map((t, i) => ({ id: t.id, name: t.name, sent: sentWith[i]!, ranOutAtMs: templateOut[i]! })),
    events: applied,
    series: { times, perNumber },
  };
}
