/**
 * Which numbers (or templates) changed since a durable host last took changes: a flag per index
 * and the list of flagged ones, so taking them costs what changed, not the fleet's size.
 */
export class ChangeMarks {
  #flags = new Uint8Array(0);
  #list: number[] = [];
  #on = false;

  /** Starts marking (tracking on). */
  enable(): void {
    this.#on = true;
  }

  /** For a new fleet of `count` entries: every one changed while tracking (all are written again). */
  reset(count: number): void {
    this.#flags = new Uint8Array(count).fill(this.#on ? 1 : 0);
    this.#list = this.#on ? Array.from({ length: count }, (_, i) => i) : [];
  }

  mark(index: number): void {
    if (!this.#on || this.#flags[index] === 1) return;
    this.#flags[index] = 1;
    this.#list.push(index);
  }

  /** The marked indexes (every one of `count` with `all`), cleared. */
  take(all: boolean, count: number): number[] {
    const out = all ? Array.from({ length: count }, (_, i) => i) : this.#list;
    for (const i of out) this.#flags[i] = 0;
    this.#list = [];
    return out;
  }
}
