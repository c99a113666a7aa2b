/**
 * What waits for an instance's next step on Redis (redis-persistence.ts): the chunks of its 202s
 * and their requests' parts, the outbox entries delivered, the SMS accepted and answered, the dead
 * letters; taken whole into one step. A request's part (its ENQUEUED run, its statistics
 * admissions, the answer under its idempotency key) is written with its commit mark, or, when
 * another instance voided the request meanwhile (the fence, shared-phones.ts), taken out of the
 * step with its chunks.
 */
import type { DeadLetter } from '../../ports/dead-letters.js';
import type { ChunkBody } from './chunks.js';
import type { QueueStep } from './queue-step.js';
import type { CampaignReport } from './scripts/step.js';

/**
 * What a request with a 202 adds to a step besides its chunks: its ENQUEUED run and its statistics
 * admissions, and the answer kept under its idempotency record. Written with its commit mark, or
 * (the request was voided: shared-phones.ts) not at all.
 */
export interface RequestPart {
  readonly id: string;
  readonly key?: string;
  readonly answer?: string;
  readonly events: readonly string[];
  readonly reports: readonly CampaignReport[];
}

/** A step as taken, and the requests' parts composed into it (taken out again if voided). */
export interface TakenStep {
  readonly base: QueueStep;
  readonly requests: readonly RequestPart[];
}

/** The step as written: its base with the requests' marks, answers, events and reports. */
export function composeStep(taken: TakenStep): QueueStep {
  const { base, requests } = taken;
  if (requests.length === 0) return base;
  return {
    ...base,
    requests: requests.map((r) => ({ id: r.id, ...(r.key !== undefined ? { key: r.key, answer: r.answer ?? '' } : {}) })),
    events: [...(base.events ?? []), ...requests.flatMap((r) => r.events)],
    statistics: { reports: [...(base.statistics?.reports ?? []), ...requests.flatMap((r) => r.reports)], at: base.statistics?.at ?? 0 },
  };
}

/** The step without the requests another instance voided: their chunks and parts out, the rest as it was. */
export function withoutVoided(taken: TakenStep, voided: ReadonlySet<string>): TakenStep {
  return {
    base: { ...taken.base, chunks: (taken.base.chunks ?? []).filter((c) => !voided.has(c.requestId)) },
    requests: taken.requests.filter((r) => !voided.has(r.id)),
  };
}

/** The dead letters' part of a step, with the bounds that apply: the most kept per company, and the oldest time kept. */
export function deadLetterStep(dead: readonly DeadLetter[], bounds: { readonly maxPerCompany: number; readonly maxAgeMs: number }): NonNullable<QueueStep['deadLetters']> {
  const newest = Math.max(...dead.map((d) => d.deadLetteredAt));
  return {
    letters: dead.map((d) => ({ companyId: d.event.companyId, id: d.event.id, at: d.deadLetteredAt, family: d.event.family, json: JSON.stringify(d) })),
    keep: bounds.maxPerCompany,
    // By the server's clock (the time of the newest): the one the dead letters' times are of.
    oldest: newest - bounds.maxAgeMs,
  };
}

/** What the next step takes of what was staged. */
export interface Staged {
  readonly chunks: ChunkBody[];
  readonly requests: RequestPart[];
  /** Outbox entries delivered (or given up). */
  readonly delivered: string[];
  /** SMS accepted (JSON). */
  readonly sms: string[];
  /** SMS entries the gateway answered. */
  readonly smsAnswered: string[];
  /** Dead letters, written with the step that acknowledges their events. */
  readonly deadLetters: DeadLetter[];
}

/** The parts of the next step gathered so far. */
export class StagedStep {
  #staged = StagedStep.#empty();

  static #empty(): Staged {
    return { chunks: [], requests: [], delivered: [], sms: [], smsAnswered: [], deadLetters: [] };
  }

  chunk(c: ChunkBody): void {
    this.#staged.chunks.push(c);
  }

  request(part: RequestPart): void {
    this.#staged.requests.push(part);
  }

  delivered(entry: string): void {
    this.#staged.delivered.push(entry);
  }

  sms(json: string): void {
    this.#staged.sms.push(json);
  }

  smsAnswered(entry: string): void {
    this.#staged.smsAnswered.push(entry);
  }

  deadLetter(d: DeadLetter): void {
    this.#staged.deadLetters.push(d);
  }

  /** Something waits for a step. */
  get pending(): boolean {
    return Object.values(this.#staged).some((list: readonly unknown[]) => list.length > 0);
  }

  /** Everything gathered, for the step being taken; gathering starts again empty. */
  take(): Staged {
    const staged = this.#staged;
    this.#staged = StagedStep.#empty();
    return staged;
  }
}
