/** Growing the typed arrays of the batches' rows, what they hold kept. */
type Rows = Int32Array | Float64Array | Uint8Array;

/** A copy of `a` with room for `size` rows (the same kind of array). */
export function grown<T extends Rows>(a: T, size: number): T {
  const b = new (a.constructor as new (n: number) => T)(size);
  b.set(a);
  return b;
}
