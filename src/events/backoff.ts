/** The outbox's wait before another attempt: exponential, capped, with "equal jitter". */
import { randomUnit, type RandomSource } from './random.js';

export interface Backoff {
  readonly initialMs: number;
  readonly factor: number;
  readonly maxMs: number;
  readonly random: RandomSource;
}

/** Wait before attempt `failures + 1`: half of the capped exponential fixed, half random. */
export function backoffDelay(b: Backoff, failures: number): number {
  const raw = b.initialMs * b.factor ** Math.max(0, failures - 1);
  // After ~1,000 failures factor ** n overflows; 0 x Infinity would be NaN: cap first.
  const base = Number.isFinite(raw) ? Math.min(b.maxMs, raw) : b.maxMs;
  return Math.round(base / 2 + (randomUnit(b.random) * base) / 2);
}
