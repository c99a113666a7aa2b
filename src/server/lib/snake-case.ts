/**
 * Every JSON answer of the server is snake_case, as the spec's are; the engine's views are
 * camelCase, as TypeScript's are. A view answered as it is (the operator's numbers, templates and
 * queues) goes through {@link snakeKeys} at the edge, so the engine keeps its names and the wire
 * keeps the spec's.
 */

/** `throughputPerHour` → `throughput_per_hour`; a name without capitals is kept. */
export function snakeName(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** A JSON value with every object key in snake_case, at every depth (arrays and plain objects). */
export function snakeKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(snakeKeys);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) out[snakeName(key)] = snakeKeys(inner);
  return out;
}
