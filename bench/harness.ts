/**
 * A thin layer over tinybench: one Bench per case (so a large fleet is built, measured and dropped
 * before the next), figures per operation rather than per tinybench iteration.
 *
 * A tinybench iteration runs `ops` operations (10,000 assignments of one `assignInto` call, 1,000
 * `assign` calls, ...), so the timer's own cost does not swamp sub-microsecond operations.
 * Operations per second are taken from the median iteration (robust on a noisy shared machine);
 * the mean-based figure and the relative margin of error are kept in the JSON.
 */
import { Bench, type FnHook } from 'tinybench';

export interface Timing {
  /** Budget per case in ms, and minimum iterations. */
  readonly time: number;
  readonly iterations: number;
  readonly warmupTime: number;
  readonly warmupIterations: number;
}

export const FULL: Timing = { time: 600, iterations: 20, warmupTime: 400, warmupIterations: 5 };
export const QUICK: Timing = { time: 1, iterations: 2, warmupTime: 0, warmupIterations: 1 };

export interface Measured {
  /** Operations per second from the median iteration. */
  readonly opsPerSecond: number;
  /** Operations per second from the mean iteration. */
  readonly meanOpsPerSecond: number;
  /** Median time of one operation, in microseconds. */
  readonly microsPerOp: number;
  /** Relative margin of error of the mean iteration time, in percent. */
  readonly rme: number;
  readonly samples: number;
}

export interface CaseHooks {
  readonly beforeEach?: FnHook;
  readonly afterEach?: FnHook;
}

/** Runs `fn` (which performs `ops` operations) under tinybench and returns per-operation figures. */
export async function measure(name: string, ops: number, fn: () => unknown, timing: Timing, hooks: CaseHooks = {}, async = false): Promise<Measured> {
  const bench = new Bench({
    time: timing.time,
    iterations: timing.iterations,
    warmup: timing.warmupIterations > 0,
    warmupTime: timing.warmupTime,
    warmupIterations: Math.max(1, timing.warmupIterations),
    throws: true,
  });
  bench.add(name, fn, { ...hooks, async });
  if (async) await bench.run();
  else bench.runSync();
  const task = bench.tasks[0];
  const r = task?.result;
  if (!r || (r.state !== 'completed' && r.state !== 'aborted-with-statistics')) {
    const error = r && r.state === 'errored' ? r.error : undefined;
    throw new Error(`benchmark "${name}" did not complete (${r?.state ?? 'no result'})`, { cause: error });
  }
  const p50 = r.latency.p50 > 0 ? r.latency.p50 : r.latency.mean;
  return {
    opsPerSecond: (ops * 1000) / p50,
    meanOpsPerSecond: (ops * 1000) / r.latency.mean,
    microsPerOp: (p50 * 1000) / ops,
    rme: r.latency.rme,
    samples: r.latency.samplesCount,
  };
}

/** One line of the results (table and JSON). */
export interface Result {
  /** Stable key, e.g. "batch n=100 t=1 ample". */
  readonly id: string;
  readonly group: 'assign' | 'peers' | 'failover' | 'memory' | 'dispatch' | 'cli' | 'ratio';
  /** What ran: sendpool or a peer. */
  readonly subject: string;
  readonly path?: string;
  readonly numbers?: number;
  readonly templates?: number;
  readonly scenario?: string;
  readonly opsPerSecond?: number;
  readonly meanOpsPerSecond?: number;
  readonly microsPerOp?: number;
  readonly rme?: number;
  readonly samples?: number;
  /** Ratio to the sendpool figure it is compared with (peers). */
  readonly ratioToSendpool?: number;
  readonly bytes?: number;
  readonly note?: string;
}

export function fromMeasured(base: Omit<Result, 'opsPerSecond' | 'meanOpsPerSecond' | 'microsPerOp' | 'rme' | 'samples'>, m: Measured): Result {
  return {
    ...base,
    opsPerSecond: Math.round(m.opsPerSecond),
    meanOpsPerSecond: Math.round(m.meanOpsPerSecond),
    microsPerOp: Number(m.microsPerOp.toPrecision(4)),
    rme: Number(m.rme.toFixed(2)),
    samples: m.samples,
  };
}

/** Stops the optimiser from dropping a result. */
export let sink = 0;
export function consume(x: number): void {
  sink = (sink + x) | 0;
}
