/**
 * One step of the shared queue (queue.ts, scripts/step.ts): what an instance records in one write,
 * whole or not at all, and how it is written as the step script's named sections. Its parts go in
 * groups: the requests it commits (those listed, and those whose chunks it writes), the chunks
 * accepted, the progress of the chunks held (gathered by chunk), the outbox and SMS entries, the
 * campaign statistics, the shared memory and the dead letters.
 */
import { randomUUID } from 'node:crypto';
import { IDEMPOTENCY_TTL_MS } from '../../ports/backend.js';
import type { ChunkBody, ClaimedChunk } from './chunks.js';
import type { Pair } from './scripts/sections.js';
import type { CampaignReport, StepArgs } from './scripts/step.js';
import { COMMIT_TTL_MS } from './shared-phones.js';
import { RETAIN_CONTACTS_MS } from './shared-statistics.js';

/** What one step records. */
export interface QueueStep {
  /** The step's id: a step sent again with the same id (its reply was lost) is applied once. @default a new one */
  readonly id?: string;
  /**
   * Requests the step commits (a 202's): their commit marks, and the answer kept under their
   * idempotency record's key (the Redis key) when they have one. A request of a chunk counts
   * without being listed. A request voided meanwhile (the fence, shared-phones.ts) refuses the
   * whole step: answered in `voided`, nothing written.
   */
  readonly requests?: readonly { readonly id: string; readonly key?: string; readonly answer?: string }[];
  /** Chunks of contacts accepted (a 202 waits for them). */
  readonly chunks?: readonly ChunkBody[];
  /** A contact's hand-out count (written before the message goes to the channel). */
  readonly handouts?: readonly { readonly chunk: ClaimedChunk; readonly index: number; readonly count: number }[];
  /** Hand-outs of a contact whose attempts ended without a final (a failure with a retry to come). */
  readonly ended?: readonly { readonly chunk: ClaimedChunk; readonly index: number; readonly count: number }[];
  /** A contact's final state. */
  readonly finals?: readonly { readonly chunk: ClaimedChunk; readonly index: number; readonly state: string }[];
  /** Chunks whose every contact is final: acknowledged and deleted. */
  readonly done?: readonly ClaimedChunk[];
  /** Webhook events (JSON) written with the step. */
  readonly events?: readonly string[];
  /** Notifications of a chunk's contacts: written only while this instance holds the chunk. */
  readonly chunkEvents?: readonly { readonly chunk: ClaimedChunk; readonly json: string }[];
  /** Outbox entries delivered (or given up): acknowledged and deleted. */
  readonly delivered?: readonly string[];
  /** SMS accepted (JSON), for any instance to send. */
  readonly sms?: readonly string[];
  /** SMS entries the gateway answered: acknowledged and deleted. */
  readonly smsAnswered?: readonly string[];
  /**
   * Campaign statistics reports (shared-statistics.ts), joined into the shared counts with the
   * step, and the time a campaign they first name is created at.
   */
  readonly statistics?: { readonly reports: readonly CampaignReport[]; readonly at: number };
  /**
   * Entries of the shared memory (shared-memory.ts): key, value pairs ('' deletes), and how many
   * entries a generation holds.
   */
  readonly memory?: { readonly pairs: readonly Pair[]; readonly generation: number };
  /**
   * Dead letters (shared-dead-letters.ts), written with the step that acknowledges their events,
   * with the bounds that apply: the most kept per company, and the oldest time kept.
   */
  readonly deadLetters?: {
    readonly letters: readonly { readonly companyId: number; readonly id: string; readonly at: number; readonly family: string; readonly json: string }[];
    readonly keep: number;
    readonly oldest: number;
  };
}

/** Where a step is written: the queue's keys, groups and this instance's names (ContactQueue's). */
export interface StepPlace {
  /** The queue's key prefix, with its hash tag. */
  readonly prefix: string;
  readonly activeKey: string;
  readonly outboxKey: string;
  readonly smsKey: string;
  readonly epochKey: string;
  /** The queue's epoch id as this instance knows it. */
  readonly epochId: string;
  readonly groups: { readonly dispatch: string; readonly outbox: string; readonly sms: string };
  readonly consumer: string;
  /** The stream of a chunk's flow. */
  streamOf(body: ChunkBody): string;
  /** A chunk's progress hash. */
  progressKey(chunk: ClaimedChunk): string;
}

/** A step's named sections (scripts/step.ts). */
export function stepSections(step: QueueStep, at: StepPlace): StepArgs {
  return {
    prefix: at.prefix,
    active: at.activeKey,
    outbox: at.outboxKey,
    sms: at.smsKey,
    epoch: at.epochKey,
    epochId: at.epochId,
    dispatchGroup: at.groups.dispatch,
    outboxGroup: at.groups.outbox,
    smsGroup: at.groups.sms,
    consumer: at.consumer,
    stepId: step.id ?? randomUUID(),
    commitTtlMs: COMMIT_TTL_MS,
    idempotencyTtlMs: IDEMPOTENCY_TTL_MS,
    requests: requestsOf(step),
    chunks: (step.chunks ?? []).map((c) => ({ stream: at.streamOf(c), body: JSON.stringify(c), contacts: c.contacts.length })),
    progress: progressOf(step, at),
    delivered: step.delivered ?? [],
    smsAccepted: step.sms ?? [],
    smsAnswered: step.smsAnswered ?? [],
    ...statisticsOf(step.statistics),
    ...memoryOf(step.memory),
    ...deadLettersOf(step.deadLetters),
    events: step.events ?? [],
  };
}

/** The requests the step commits: those listed, and those whose chunks it writes (shared-phones.ts). */
function requestsOf(step: QueueStep): StepArgs['requests'] {
  const requests = new Map<string, { key?: string; answer?: string }>();
  for (const r of step.requests ?? []) requests.set(r.id, r);
  for (const c of step.chunks ?? []) if (!requests.has(c.requestId)) requests.set(c.requestId, {});
  return [...requests].map(([id, r]) => ({ id, idempotencyKey: r.key ?? '', answer: r.answer ?? '' }));
}

/** The progress of the chunks held, gathered by chunk: hand-outs, attempts ended, finals, done, notifications. */
function progressOf(step: QueueStep, at: StepPlace): StepArgs['progress'] {
  const touched = new Map<ClaimedChunk, { fields: Pair[]; events: string[] }>();
  const of = (c: ClaimedChunk) => {
    let t = touched.get(c);
    if (!t) touched.set(c, (t = { fields: [], events: [] }));
    return t;
  };
  for (const h of step.handouts ?? []) of(h.chunk).fields.push([`h${h.index}`, String(h.count)]);
  for (const e of step.ended ?? []) of(e.chunk).fields.push([`e${e.index}`, String(e.count)]);
  for (const f of step.finals ?? []) of(f.chunk).fields.push([`f${f.index}`, f.state]);
  const done = new Set(step.done ?? []);
  for (const c of done) of(c);
  for (const e of step.chunkEvents ?? []) of(e.chunk).events.push(e.json);
  return [...touched].map(([c, t]) => ({
    stream: c.stream,
    entryId: c.entryId,
    progress: at.progressKey(c),
    done: done.has(c),
    contacts: c.body.contacts.length,
    fields: t.fields,
    events: t.events,
  }));
}

function statisticsOf(s: QueueStep['statistics']): Pick<StepArgs, 'retainContactsMs' | 'reportedAt' | 'reports'> {
  return { retainContactsMs: RETAIN_CONTACTS_MS, reportedAt: s?.at ?? 0, reports: s?.reports ?? [] };
}

function memoryOf(m: QueueStep['memory']): Pick<StepArgs, 'memoryGeneration' | 'memory'> {
  return { memoryGeneration: m?.generation ?? 1, memory: m?.pairs ?? [] };
}

function deadLettersOf(d: QueueStep['deadLetters']): Pick<StepArgs, 'deadLetterKeep' | 'deadLetterOldest' | 'deadLetters'> {
  return {
    deadLetterKeep: d?.keep ?? 0,
    deadLetterOldest: d?.oldest ?? 0,
    deadLetters: (d?.letters ?? []).map((l) => ({ company: String(l.companyId), id: l.id, at: l.at, family: l.family, json: l.json })),
  };
}
