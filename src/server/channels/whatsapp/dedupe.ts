/**
 * Events Meta delivers twice are acted on once: each webhook event has a key (webhook-events.ts)
 * that is remembered once the event was acted on, in a bounded map (the most recent keys kept).
 * An event whose effect could not be written (the durable server failed closed) is forgotten
 * again, so Meta's redelivery acts on it then.
 */
import { BoundedMap } from '../../lib/bounded-map.js';

export class WebhookDedupe {
  readonly #seen: BoundedMap<string, true>;
  #duplicates = 0;

  /** @param maxKeys most keys remembered (at least the last half of them are) */
  constructor(maxKeys: number) {
    this.#seen = new BoundedMap(maxKeys);
  }

  /** Events dropped because they were seen before. */
  get duplicates(): number {
    return this.#duplicates;
  }

  /**
   * Acts on each event not seen before, in order, and remembers its key once `act` returned (an
   * event `act` throws on is not remembered). A key repeated within `events` is acted on once.
   * Answers the keys acted on.
   */
  actOnce<E extends { readonly key: string }>(events: readonly E[], act: (event: E) => void): string[] {
    const acted: string[] = [];
    for (const e of events) {
      if (this.#seen.has(e.key)) {
        this.#duplicates++;
        continue;
      }
      act(e);
      this.#seen.set(e.key, true);
      acted.push(e.key);
    }
    return acted;
  }

  /** Forgets keys acted on: their events are acted on again when delivered again. */
  forget(keys: readonly string[]): void {
    for (const key of keys) this.#seen.delete(key);
  }
}
