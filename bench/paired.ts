/**
 * Paired measurement: several cases in one process, in interleaved rounds (every case once, then
 * again), so a ratio between two cases divides figures taken over the same seconds of the machine.
 * A shared VM has stretches in which everything runs a third slower; medians from different
 * processes, or from cases run one after the other, put such a stretch into one side of a ratio.
 *
 * Each round times one call of each case (`ops` operations); a case's figure is the median of its
 * rounds, and a ratio is the median over rounds of the per-round ratio.
 */
import { cpuLoad } from './load.js';

export interface PairedCase {
  readonly id: string;
  /** Operations one call performs. */
  readonly ops: number;
  /** One call; may throw to say the case failed. */
  readonly run: () => void;
}

export interface PairedResult {
  /** Median operations per second, by case id. */
  readonly opsPerSecond: ReadonlyMap<string, number>;
  /** Seconds of each round, by case id. */
  readonly seconds: ReadonlyMap<string, readonly number[]>;
  readonly rounds: number;
  /** `/proc/loadavg` (1 min) before and after. */
  readonly load: readonly [number | undefined, number | undefined];
}

export interface PairedTiming {
  /** Rounds at least, and seconds at least (whichever ends later). */
  readonly rounds: number;
  readonly seconds: number;
  /** Untimed rounds first (the compiler settles). */
  readonly warmup: number;
}

export const PAIRED_FULL: PairedTiming = { rounds: 30, seconds: 4, warmup: 10 };
export const PAIRED_QUICK: PairedTiming = { rounds: 2, seconds: 0, warmup: 1 };

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export function runPaired(cases: readonly PairedCase[], timing: PairedTiming): PairedResult {
  const loadBefore = cpuLoad();
  for (let w = 0; w < timing.warmup; w++) for (const c of cases) c.run();
  const seconds = new Map<string, number[]>(cases.map((c) => [c.id, []]));
  const started = performance.now();
  let rounds = 0;
  while (rounds < timing.rounds || performance.now() - started < timing.seconds * 1000) {
    // Each round in another order, so no case always follows the same one.
    const order = rounds % 2 === 0 ? cases : [...cases].reverse();
    for (const c of order) {
      const t = performance.now();
      c.run();
      seconds.get(c.id)!.push((performance.now() - t) / 1000);
    }
    rounds++;
  }
  const opsPerSecond = new Map(cases.map((c) => [c.id, c.ops / median(seconds.get(c.id)!)]));
  return { opsPerSecond, seconds, rounds, load: [loadBefore, cpuLoad()] };
}

/** Median over rounds of `a`'s speed over `b`'s (a value above 1: `a` is faster). */
export function pairedRatio(result: PairedResult, a: string, b: string): number {
  const sa = result.seconds.get(a)!;
  const sb = result.seconds.get(b)!;
  return median(sa.map((s, i) => sb[i]! / s));
}
