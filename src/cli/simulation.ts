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
  const day = new DayCounts(views.map((n) => n.messagingLimit24h));
  const templates = new TemplateCounts(engine, type.templateIds);

  const throughputAtStart = engine.throughput(businessId, typeId);
  const contact = { phone: '5500000000000', variables: new Array<string>(type.placeholders).fill('x') };
  engine.submit({ businessId, typeId, contacts: new Array(messages).fill(contact) });

  const samples = new Samples(views.length);
  samples.take(0, sentBy);
  const applied: AppliedEvent[] = [];
  let nextEvent = 0;
  let sent = 0;
  let polls = 0;
  let now = 0;
  let completion: number | null = null;
  let stoppedBy: string | undefined;
  let lastPhone = '';
  let lastIndex = -1;
  templates.noteOut(0);

  for (;;) {
    while (nextEvent < events.length && events[nextEvent]!.change.at <= now) {
      const e = events[nextEvent++]!;
      apply(engine, e);
      const c = e.change;
      if (c.kind === 'number-limits' && c.messagingLimit24h !== undefined) day.setLimit(index.get(c.phone), c.messagingLimit24h);
      applied.push({ atMs: now, label: e.label, kind: kindOf(e), throughputPerHour: engine.throughput(businessId, typeId) });
      templates.noteOut(now);
    }

    // Sample before this poll's sends: a number idle since the last point stays flat on the chart.
    if (now >= samples.next) samples.take(now, sentBy);
    const batch = engine.poll({ limit: pollLimit });
    polls++;
    for (let k = 0; k < batch.length; k++) {
      const m = batch[k]!;
      engine.report(m.messageId, { status: 'sent' });
      if (m.phone !== lastPhone) {
        lastIndex = index.get(m.phone)!;
        lastPhone = m.phone;
      }
      sentBy[lastIndex]!++;
      templates.sent(m.templateId);
    }
    engine.takeOutcomes();
    if (batch.length > 0) {
      sent += batch.length;
      day.update(now, sentBy);
    }
    input.onProgress?.(sent, now);
    if (sent >= messages) {
      completion = now;
      break;
    }
    const next = Math.min(engine.nextWakeAt() ?? Infinity, nextEvent < events.length ? events[nextEvent]!.change.at : Infinity);
    stoppedBy = stopAt(engine, input, next);
    if (stoppedBy !== undefined) break;
    clock.set(next);
    now = next;
  }
  samples.finish(now, sentBy);

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
      ranOutAtMs: day.ranOut[i]!,
    })),
    templates: templates.results(),
    events: applied,
    series: { times: samples.times, perNumber: samples.perNumber },
  };
}

/** Why the run stops before `next`, the next time something can happen: never (a dead end: the queue's blocker), or past the horizon; undefined: it goes on. */
function stopAt(engine: Engine, input: SimulationInput, next: number): string | undefined {
  if (!Number.isFinite(next)) return engine.queueStatus(input.businessId, input.typeId).blocked ?? 'no-capacity';
  return next > input.horizonMs ? 'horizon' : undefined;
}

/** Each number's count in its moving 24 h, as the store counts it (hour buckets, 25 of them), and when it first reached its limit. */
class DayCounts {
  readonly #limit24h: Float64Array;
  /** When each number first reached its 24 h limit, or null. */
  readonly ranOut: (number | null)[];
  readonly #ring: Float64Array;
  readonly #head: Float64Array;
  readonly #sum: Float64Array;
  /** What each number's count holds of its total sent. */
  readonly #counted: Float64Array;

  constructor(limits: readonly number[]) {
    const n = limits.length;
    this.#limit24h = Float64Array.from(limits);
    this.ranOut = limits.map(() => null);
    this.#ring = new Float64Array(n * DAY_BUCKETS);
    this.#head = new Float64Array(n).fill(-1);
    this.#sum = new Float64Array(n);
    this.#counted = new Float64Array(n);
  }

  /** A limit change of the number at `i` (undefined: not of this business). */
  setLimit(i: number | undefined, limit24h: number): void {
    if (i !== undefined) this.#limit24h[i] = limit24h;
  }

  /** Brings each number's count to `at` with its total sent (`sentBy`), and notes the first time it reached its limit. */
  update(at: number, sentBy: Float64Array): void {
    const bucket = Math.floor(at / HOUR);
    for (let i = 0; i < sentBy.length; i++) {
      this.#moveTo(i, bucket);
      const total = sentBy[i]!;
      const delta = total - this.#counted[i]!;
      if (delta > 0) {
        this.#ring[i * DAY_BUCKETS + (bucket % DAY_BUCKETS)]! += delta;
        this.#sum[i]! += delta;
        this.#counted[i] = total;
      }
      if (this.ranOut[i] === null && this.#sum[i]! >= this.#limit24h[i]!) this.ranOut[i] = at;
    }
  }

  /** The number's window to hour `bucket`: the buckets it leaves no longer count. */
  #moveTo(i: number, bucket: number): void {
    const base = i * DAY_BUCKETS;
    const head = this.#head[i]!;
    if (head === bucket) return;
    if (head < 0 || bucket - head >= DAY_BUCKETS) {
      this.#ring.fill(0, base, base + DAY_BUCKETS);
      this.#sum[i] = 0;
    } else {
      for (let k = head + 1; k <= bucket; k++) {
        const slot = base + (k % DAY_BUCKETS);
        this.#sum[i]! -= this.#ring[slot]!;
        this.#ring[slot] = 0;
      }
    }
    this.#head[i] = bucket;
  }
}

/** The type's templates: what each sent, and when each first stopped being active. */
class TemplateCounts {
  readonly #engine: Engine;
  readonly #list: ReturnType<Engine['templates']>;
  readonly #index: Map<number, number>;
  readonly #sent: Float64Array;
  readonly #out: (number | null)[];

  constructor(engine: Engine, ids: readonly number[]) {
    this.#engine = engine;
    this.#list = engine.templates().filter((t) => ids.includes(t.id));
    this.#index = new Map(this.#list.map((t, i) => [t.id, i]));
    this.#sent = new Float64Array(this.#list.length);
    this.#out = this.#list.map((t) => (t.status === 'active' ? null : 0));
  }

  sent(templateId: number): void {
    this.#sent[this.#index.get(templateId)!]!++;
  }

  /** Templates out now that were not before. */
  noteOut(now: number): void {
    for (const t of this.#engine.templates()) {
      const i = this.#index.get(t.id);
      if (i !== undefined && t.status !== 'active' && this.#out[i] === null) this.#out[i] = now;
    }
  }

  results(): SimulatedTemplate[] {
    return this.#list.map((t, i) => ({ id: t.id, name: t.name, sent: this.#sent[i]!, ranOutAtMs: this.#out[i]! }));
  }
}

/** The chart's points: one at 0, then one per interval (doubling when there would be too many), and one at the end. */
class Samples {
  readonly times: number[] = [];
  readonly perNumber: number[][];
  #interval = 60_000;
  /** When the next point is due. */
  next = 0;

  constructor(numbers: number) {
    this.perNumber = Array.from({ length: numbers }, () => []);
  }

  take(now: number, sentBy: Float64Array): void {
    this.times.push(now);
    for (let i = 0; i < this.perNumber.length; i++) this.perNumber[i]!.push(sentBy[i]!);
    if (this.times.length > MAX_SAMPLES) {
      // Keep every other point (always the first and the newest).
      const keep = (_: number, k: number, all: readonly number[]) => k % 2 === 0 || k === all.length - 1;
      for (const s of [this.times, ...this.perNumber]) {
        const kept = s.filter(keep);
        s.length = 0;
        s.push(...kept);
      }
      this.#interval *= 2;
    }
    this.next = now + this.#interval;
  }

  /** The last point, at `now`: it holds everything sent, including the last poll's sends. */
  finish(now: number, sentBy: Float64Array): void {
    if (this.times[this.times.length - 1] === now) {
      this.times.pop();
      for (const series of this.perNumber) series.pop();
    }
    this.take(now, sentBy);
  }
}
