/**
 * Each company's blocklist: recipients who answered with an opt-out (a REPLIED status with
 * `blocklistResponse`), and phones an operator added. Contacts with a blocked phone are refused at
 * intake (`blocked`, counted in `count_blocked`), in every campaign of the company, until an
 * operator removes the phone.
 */
import type { PhoneSet } from '../contract/rejection.js';
import { phoneKey } from './phone-hash-set.js';
import type { BlockEntry, BlockSource, BlocklistChange, BlocklistReplica } from './ports/blocklist.js';

export type { BlockEntry, BlockSource, BlocklistChange } from './ports/blocklist.js';

/** A blocklist row: company and entry. */
export interface BlocklistRow {
  readonly companyId: number;
  readonly entry: BlockEntry;
}

export class Blocklist implements BlocklistReplica {
  /** By company, by phone (as its integer). */
  readonly #companies = new Map<number, Map<number, BlockEntry>>();
  readonly #track: boolean;
  #changes: BlocklistChange[] = [];
  #version = 0;

  /** @param trackChanges remember changes for {@link takeChanges} (a durable server) */
  constructor(trackChanges = false) {
    this.#track = trackChanges;
  }

  #of(companyId: number): Map<number, BlockEntry> {
    let m = this.#companies.get(companyId);
    if (!m) this.#companies.set(companyId, (m = new Map<number, BlockEntry>()));
    return m;
  }

  /** Changes with every entry added or removed: a screening done at one version holds while it is unchanged (intake-parse.ts). */
  get version(): number {
    return this.#version;
  }

  /** The company's blocked phones, as the intake reads them. */
  view(companyId: number): PhoneSet {
    const m = this.#companies.get(companyId);
    return { has: (phone) => m?.has(phoneKey(phone)) === true };
  }

  /** Adds a phone (normalised digits); false when it was blocked already (its first entry stays). */
  add(companyId: number, phone: string, addedAt: number, source: BlockSource): boolean {
    const m = this.#of(companyId);
    const key = phoneKey(phone);
    if (m.has(key)) return false;
    const entry = { phone, addedAt, source };
    m.set(key, entry);
    this.#version++;
    if (this.#track) this.#changes.push({ companyId, phone, entry });
    return true;
  }

  /** Removes a phone; false when it was not blocked. */
  remove(companyId: number, phone: string): boolean {
    const removed = this.#companies.get(companyId)?.delete(phoneKey(phone)) === true;
    if (removed) this.#version++;
    if (removed && this.#track) this.#changes.push({ companyId, phone, entry: null });
    return removed;
  }

  /** Blocked phones of a company. */
  size(companyId: number): number {
    return this.#companies.get(companyId)?.size ?? 0;
  }

  /** A page of a company's blocked phones in phone order, after `after` (exclusive). */
  list(companyId: number, after: string | undefined, limit: number): { entries: BlockEntry[]; next: string | null } {
    const m = this.#companies.get(companyId);
    if (!m) return { entries: [], next: null };
    const from = after === undefined ? -1 : phoneKey(after);
    const keys = [...m.keys()].filter((k) => k > from).sort((a, b) => a - b);
    const page = keys.slice(0, limit).map((k) => m.get(k)!);
    return { entries: page, next: keys.length > limit ? page[page.length - 1]!.phone : null };
  }

  /** Every company's entries (the snapshot file's form). */
  rows(): BlocklistRow[] {
    return [...this.#companies].flatMap(([companyId, m]) => [...m.values()].map((entry) => ({ companyId, entry })));
  }

  /** What changed since the last call, in order (every entry with `full`). */
  takeChanges(full = false): BlocklistChange[] {
    const changes = full ? this.rows().map(({ companyId, entry }) => ({ companyId, phone: entry.phone, entry })) : this.#changes;
    this.#changes = [];
    return changes;
  }

  /**
   * Applies a change another instance made (the server on Redis: backends/redis/shared-blocklist.ts), not
   * tracked as this instance's own.
   */
  replay(change: BlocklistChange): void {
    this.#version++;
    if (change.entry === null) this.#companies.get(change.companyId)?.delete(phoneKey(change.phone));
    else if (!this.#of(change.companyId).has(phoneKey(change.phone))) this.#of(change.companyId).set(phoneKey(change.phone), change.entry);
  }

  /** Replaces a company's entries with those kept elsewhere (not tracked). */
  replaceCompany(companyId: number, entries: readonly BlockEntry[]): void {
    this.#version++;
    this.#companies.set(companyId, new Map(entries.map((e) => [phoneKey(e.phone), e])));
  }

  /** Loads the rows a durable server kept. */
  load(rows: Iterable<BlocklistRow>): void {
    this.#version++;
    for (const { companyId, entry } of rows) this.#of(companyId).set(phoneKey(entry.phone), entry);
  }
}
