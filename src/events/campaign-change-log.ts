/**
 * What changed in the campaign statistics since a host last wrote them (the aggregator's
 * `trackChanges` option): the campaigns whose row changed, their contacts whose state changed, and
 * the campaigns settled since, whose contact rows are gone.
 */
export class CampaignChangeLog {
  /** Campaigns whose row changed, each with its contacts that changed. */
  readonly #changed = new Map<number, Set<string>>();
  readonly #settled = new Set<number>();

  /** Notes a change of a campaign's row, and of one of its contacts when given. */
  touch(campaignId: number, contactId?: string): void {
    let set = this.#changed.get(campaignId);
    if (!set) this.#changed.set(campaignId, (set = new Set()));
    if (contactId !== undefined) set.add(contactId);
  }

  /** Notes a campaign settled: its contacts' changes are moot, its row changed. */
  settled(campaignId: number): void {
    this.#changed.delete(campaignId);
    this.touch(campaignId);
    this.#settled.add(campaignId);
  }

  /** The changes noted since the last call, which starts a new log. */
  take(): { readonly changed: ReadonlyMap<number, ReadonlySet<string>>; readonly settled: readonly number[] } {
    const changed = new Map(this.#changed);
    const settled = [...this.#settled];
    this.#changed.clear();
    this.#settled.clear();
    return { changed, settled };
  }
}
