/**
 * A 202's contacts as chunks of the shared queue (queue.ts): a few dozen contacts each, so that a
 * chunk is a small unit of work to claim, to take over and to acknowledge, and a request of 10,000
 * contacts is spread over every instance instead of landing whole on one. What a chunk is, as
 * written, as an instance holds it with its progress, and as written again after a reset.
 */
import type { Submission, SubmissionContact } from '../../../core/submission.js';

/** A contact as the queue keeps it: the engine's contact with the server's ids. */
export interface QueuedContact extends SubmissionContact {
  /** The contact id of the 202 (global: from the shared counter). */
  readonly id: number;
  readonly costCenterId: number;
}

/** A chunk of one request's contacts, with what the engine needs to send them (a submission's options). */
export interface ChunkBody extends Omit<Submission, 'contacts' | 'weight' | 'maxRetries' | 'retryInterval'> {
  readonly requestId: string;
  readonly companyId: number;
  readonly maxRetries: number;
  /** Milliseconds. */
  readonly retryInterval: number;
  readonly contacts: readonly QueuedContact[];
  /**
   * A contact sent again after a failure reported later: the fleet-wide hand-out its next message
   * starts at (its earlier ids are never used again). @default 0
   */
  readonly handoutBase?: number;
}

/** A chunk an instance holds, with the progress written for it so far. */
export interface ClaimedChunk {
  readonly stream: string;
  /** Its entry in the stream: a new one when the chunk is written again after a Redis reset (reset.ts). */
  entryId: string;
  readonly body: ChunkBody;
  /** Hand-outs written per contact index (absent: never handed out). */
  readonly handouts: ReadonlyMap<number, number>;
  /** Hand-outs per contact index whose attempt ended without a final (a retry to come). */
  readonly ended: ReadonlyMap<number, number>;
  /** Final state per contact index, as recorded. */
  readonly finals: ReadonlyMap<number, string>;
}

/** A chunk written again after a Redis reset (ContactQueue.rebuild). */
export interface RebuiltChunk {
  /** Its stream (the flow's). */
  readonly stream: string;
  /** Its entry id before the reset (what the rebuilt mark names). */
  readonly entryId: string;
  /** Its body, with the contacts to send. */
  readonly body: ChunkBody;
  /** Contacts of it not final (the fleet's backlog counts them). */
  readonly open: number;
  /** Pending under this instance (it keeps sending them), or for any instance to claim. */
  readonly hold: boolean;
  /** The progress to write with it (none for a chunk only accepted here). */
  readonly progress?: ChunkProgress;
}

/** A chunk's progress as recorded in its hash (`h<i>`, `e<i>`, `f<i>` fields). */
export type ChunkProgress = Pick<ClaimedChunk, 'handouts' | 'ended' | 'finals'>;

/** Contacts per chunk. */
export const CHUNK_CONTACTS = 100;

/**
 * `handoutBase`: for a contact sent again after a failure reported later, the hand-out its next
 * message starts at (the failed message's plus one), so no message id repeats.
 */
export function chunksOf(submission: Submission, requestId: string, companyId: number, handoutBase?: number): ChunkBody[] {
  const head = {
    requestId,
    companyId,
    businessId: submission.businessId,
    typeId: submission.typeId,
    ...(submission.campaignId !== undefined ? { campaignId: submission.campaignId } : {}),
    ...(submission.queueId !== undefined ? { queueId: submission.queueId } : {}),
    ...(submission.botId !== undefined ? { botId: submission.botId } : {}),
    maxRetries: submission.maxRetries ?? 0,
    retryInterval: submission.retryInterval ?? 0,
    ...(submission.deadline !== undefined ? { deadline: submission.deadline } : {}),
    ...(submission.retriesUsed !== undefined ? { retriesUsed: submission.retriesUsed } : {}),
    ...(submission.notBefore !== undefined ? { notBefore: submission.notBefore } : {}),
    ...(handoutBase !== undefined ? { handoutBase } : {}),
  };
  const out: ChunkBody[] = [];
  for (let i = 0; i < submission.contacts.length; i += CHUNK_CONTACTS) {
    out.push({ ...head, contacts: submission.contacts.slice(i, i + CHUNK_CONTACTS) as QueuedContact[] });
  }
  return out;
}
