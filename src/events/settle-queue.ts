/**
 * The contacts of a campaign in their failure window, by the time it ends: a binary min-heap of
 * (settle time, contact id). Sends are recorded in time order, so pushes land at the end and cost
 * O(1) almost always; taking the due ones costs O(due · log n), never a scan of the campaign.
 *
 * Entries are not removed when a contact leaves its window another way (a failure, a delivery, a
 * new attempt): the taker checks each entry against the contact's state, so a stale one is skipped.
 */
export class SettleQueue {
  readonly #at: number[] = [];
  readonly #ids: string[] = [];

  get size(): number {
    return this.#at.length;
  }

  /** The earliest settle time queued, or undefined when none is. */
  peek(): number | undefined {
    return this.#at[0];
  }

  /** The contact of the earliest entry, or undefined when none is. */
  peekId(): string | undefined {
    return this.#ids[0];
  }

  /** Removes the earliest entry. */
  dropFirst(): void {
    if (this.#at.length > 0) this.#pop();
  }

  push(at: number, contactId: string): void {
    const a = this.#at;
    const ids = this.#ids;
    let i = a.length;
    a.push(at);
    ids.push(contactId);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (a[parent]! <= at) break;
      a[i] = a[parent]!;
      ids[i] = ids[parent]!;
      i = parent;
    }
    a[i] = at;
    ids[i] = contactId;
  }

  /** Removes and returns the entries due at `now` (settle time at or before it), earliest first. */
  takeDue(now: number): [at: number, contactId: string][] {
    const out: [number, string][] = [];
    while (this.#at.length > 0 && this.#at[0]! <= now) out.push(this.#pop());
    return out;
  }

  clear(): void {
    this.#at.length = 0;
    this.#ids.length = 0;
  }

  #pop(): [number, string] {
    const a = this.#at;
    const ids = this.#ids;
    const top: [number, string] = [a[0]!, ids[0]!];
    const lastAt = a.pop()!;
    const lastId = ids.pop()!;
    const n = a.length;
    if (n === 0) return top;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && a[r]! < a[l]! ? r : l;
      if (a[c]! >= lastAt) break;
      a[i] = a[c]!;
      ids[i] = ids[c]!;
      i = c;
    }
    a[i] = lastAt;
    ids[i] = lastId;
    return top;
  }
}
