/**
 * What the durable components of the sqlite backend are made over: the server's parts (its books,
 * notifier, workers), once made; the backend's own books; and what its group commit staged.
 */
import type { IdempotencyBook } from '../../../idempotency.js';
import type { LocalContactIds } from '../../../ports/contact-ids.js';
import type { BackendParts } from '../../server-backend.js';
import type { StagedWrites } from '../staged-writes.js';

export interface DurableSources {
  /** The server's parts: a component is asked for its changes and restored only once they are made (`attach`). */
  readonly parts: () => BackendParts;
  readonly idempotency: IdempotencyBook;
  readonly contactIds: LocalContactIds;
  /** The webhook events and SMS the group commit staged for its next step. */
  readonly staged: StagedWrites;
  /** Whether the reports changed since the last step; asking forgets it. */
  readonly takeReportsChanged: () => boolean;
  /** The report token key the server made, as text, to sign the same links after a restart. @default none: the host's */
  readonly reportTokenKey: string | undefined;
}
