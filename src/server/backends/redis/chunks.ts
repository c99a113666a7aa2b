/**
 * A 202's contacts as chunks of the shared queue: a few dozen contacts each, so that a chunk is a
 * small unit of work to claim, to take over and to acknowledge, and a request of 10,000 contacts is
 * spread over every instance instead of landing whole on one.
 */
import type { Submission } from '../../../core/submission.js';
import type { ChunkBody, QueuedContact } from './queue.js';

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
