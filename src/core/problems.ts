/**
 * One problem found in user input (a fleet description, a request body, a snapshot): where it is,
 * what was expected there and what was found. Validators collect every problem before answering, so
 * a user fixes a file once instead of once per error.
 */
export interface Problem {
  /** JSON path of the offending value, e.g. `$.businesses[0].numbers[2].throughputPerHour`. */
  readonly path: string;
  /** What the value should have been, in words: `a positive integer`, `one of "active", "paused"`. */
  readonly expected: string;
  /** The value found, rendered short: `-5 (number)`, `"pasued" (string)`, `missing`. */
  readonly actual: string;
  /** `path: expected …, got …`: ready for a log line or an error body. */
  readonly message: string;
}

const MAX_RENDERED = 60;

/** Renders a value for a problem report: short, typed, never throwing (cycles, BigInt, symbols). */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'missing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array of ${value.length}`;
  const type = typeof value;
  if (type === 'object') return 'an object';
  if (type === 'function') return 'a function';
  // Objects and functions were answered above: what is left prints itself.
  const plain = value as string | number | boolean | symbol | bigint;
  if (type === 'symbol' || type === 'bigint') return `${String(plain)} (${type})`;
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(plain);
  } catch {
    text = String(plain);
  }
  if (type === 'number' && !Number.isFinite(value)) text = String(plain);
  if (text.length > MAX_RENDERED) text = `${text.slice(0, MAX_RENDERED - 1)}…`;
  return `${text} (${type})`;
}

/** Builds a {@link Problem} for `value` found at `path` where `expected` was wanted. */
export function problem(path: string, expected: string, value: unknown): Problem {
  const actual = describeValue(value);
  return { path, expected, actual, message: `${path}: expected ${expected}, got ${actual}` };
}

/** Appends a key to a JSON path, quoting keys that are not plain identifiers. */
export function pathKey(path: string, key: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/** Appends an array index to a JSON path. */
export function pathIndex(path: string, index: number): string {
  return `${path}[${index}]`;
}
