/**
 * Runs a group of benchmarks in Node processes of its own (bench/child.ts).
 *
 * Why processes: the engine's hot loop is compiled from what it has seen run. In one process each
 * fleet shape would be measured with code shaped by the shapes before it, and a case could read
 * 30 % high or low depending on its place in the plan. A process per shape measures each as a host
 * running that fleet sees it.
 *
 * Why several: on this 2-core VM, stretches of a few seconds run the same code up to a third
 * slower (the same compiled code and inlining: the shared host, not the engine). Each group runs in
 * `repeats` processes and each case keeps its median, with the range in its note.
 */
import { spawnSync } from 'node:child_process';
import type { ChildRequest } from './child.js';
import type { Result } from './harness.js';
import { ROOT, entry } from './paths.js';

function runChild(request: ChildRequest): Result[] {
  // --expose-gc: the cases settle the heap after building a fleet (assign.bench.ts, settleHeap).
  const child = entry('child');
  const run = spawnSync(process.execPath, ['--expose-gc', ...child.nodeArgs, child.script, JSON.stringify(request)], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 1 << 24,
  });
  const line = run.stdout.trim().split('\n').pop() ?? '';
  if (run.status !== 0 || !line.startsWith('[')) throw new Error(`bench child (${request.group}) failed with status ${run.status}`);
  return JSON.parse(line) as Result[];
}

const M = (x: number): string => (x / 1e6).toFixed(1);

/** Each case's median over the runs (by operations per second), with the range in its note. */
export function medianOfRuns(runs: readonly (readonly Result[])[]): Result[] {
  const first = runs[0] ?? [];
  if (runs.length === 1) return [...first];
  return first.map((r) => {
    const all = runs.map((run) => run.find((x) => x.id === r.id)).filter((x): x is Result => x?.opsPerSecond !== undefined);
    if (all.length === 0) return r;
    all.sort((a, b) => a.opsPerSecond! - b.opsPerSecond!);
    const median = all[Math.floor((all.length - 1) / 2)]!;
    const range = `median of ${all.length} processes (${M(all[0]!.opsPerSecond!)} to ${M(all[all.length - 1]!.opsPerSecond!)} M/s)`;
    return { ...median, note: median.note ? `${median.note}; ${range}` : range };
  });
}

/** Peers' ratios recomputed from the medians: each peer against sendpool's median at its size. */
function ratiosFromMedians(results: readonly Result[]): Result[] {
  return results.map((r) => {
    if (r.group !== 'peers' || r.ratioToSendpool === undefined || r.opsPerSecond === undefined) return r;
    const base = results.find((x) => x.group === 'peers' && x.numbers === r.numbers && x.subject === 'sendpool')?.opsPerSecond;
    return base === undefined ? r : { ...r, ratioToSendpool: Number((r.opsPerSecond / base).toFixed(3)) };
  });
}

/**
 * Runs every request `repeats` times, in rounds (all requests once, then again), so the runs of a
 * case are spread over the whole suite: a stretch of a few seconds in which the machine is busier
 * (it is a VM on a shared host) then touches one run of each case it overlaps, not all of them.
 */
export function runIsolated(requests: readonly ChildRequest[], repeats = 1): Result[] {
  const runs: Result[][][] = requests.map(() => []);
  for (let round = 0; round < repeats; round++) {
    requests.forEach((request, k) => runs[k]!.push(runChild(request)));
  }
  return runs.flatMap((r) => ratiosFromMedians(medianOfRuns(r)));
}
