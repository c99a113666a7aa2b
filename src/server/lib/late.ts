/**
 * A value made after the things that refer to it (a backend's step collects from parts made over
 * the backend's own hooks): set once, read only after. A read before is a wiring bug, said as such.
 */
export class Late<T> {
  #value: T | undefined;

  /** @param what what the value is, for the error of a read before it was set */
  constructor(readonly what: string) {}

  set(value: T): void {
    if (this.#value !== undefined) throw new WiringError(`${this.what} set twice`);
    this.#value = value;
  }

  get(): T {
    if (this.#value === undefined) throw new WiringError(`${this.what} read before it was set`);
    return this.#value;
  }
}

/** The server's parts were wired in the wrong order (a bug of sendpool, not of its input). */
export class WiringError extends Error {
  override readonly name = 'WiringError';
}
