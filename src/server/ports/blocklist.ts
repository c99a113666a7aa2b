/**
 * The blocklist as a backend sees it: its entries and changes, and what a backend that shares it
 * asks of this instance's copy (the server on Redis keeps a replica per instance in step with the
 * fleet's: backends/redis/shared-blocklist.ts). The blocklist itself is blocklist.ts.
 */
import type { PhoneSet } from '../../contract/rejection.js';

/** How a phone came on the blocklist. */
export type BlockSource = 'reply' | 'operator';

/** One blocked phone. */
export interface BlockEntry {
  readonly phone: string;
  /** When it was added (epoch ms). */
  readonly addedAt: number;
  readonly source: BlockSource;
}

/** One change, in order: an entry added, or (`entry` null) a phone removed. */
export interface BlocklistChange {
  readonly companyId: number;
  readonly phone: string;
  readonly entry: BlockEntry | null;
}

/** This instance's blocklist, as a backend that keeps it elsewhere too reads and updates it. */
export interface BlocklistReplica {
  /** The company's blocked phones, as the intake reads them. */
  view(companyId: number): PhoneSet;
  /** This instance's changes since the last call, in order. */
  takeChanges(): BlocklistChange[];
  /** Applies a change another instance made, not tracked as this instance's own. */
  replay(change: BlocklistChange): void;
  /** Replaces a company's entries with those kept elsewhere (not tracked). */
  replaceCompany(companyId: number, entries: readonly BlockEntry[]): void;
}
