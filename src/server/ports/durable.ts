/**
 * A durable component: a part of the server's state that outlives the process (the blocklist, the
 * campaigns' phones, the tracked messages, …), as the backend that keeps it sees it. It owns its
 * rows: it says what changed since it was last asked, and loads what a restart found. The sqlite
 * backend registers one per durable feature, each in a file of its own with its tables
 * (src/server/backends/sqlite/components/); its durable step asks every registered component,
 * never one by name.
 */

export interface DurableComponent<Changes, Rows> {
  /** Its name: the field its changes take in a step, and its rows in what a restart finds. */
  readonly name: string;
  /**
   * What changed since the last call, or undefined when nothing did. With `full`, everything it
   * holds (a store that starts empty under a state restored from elsewhere). `now`: the step's time.
   */
  takeChanges(full: boolean, now: number): Changes | undefined;
  /** Loads the rows a restart found, at `now`, before any traffic. */
  restore(rows: Rows, now: number): void;
}
