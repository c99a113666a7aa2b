/**
 * The ratios the targets are about, each measured in one process in interleaved rounds
 * (bench/paired.ts): the batch path at 100 numbers against 100,000 numbers, against 90 % of
 * 100,000 exhausted, against the hand-written ceiling and `limiter` at 100. The per-shape figures
 * of the table come from a process per shape (bench/isolated.ts); these ratios do not divide
 * figures from different processes. In one process the engine's loop is compiled for every shape
 * it runs, so both sides of a ratio run the same code.
 */
import { BATCH, EXHAUSTED_SHARE, batchTask, buildEngine } from './assign.bench.js';
import { AMPLE_PER_HOUR } from './fleets.js';
import type { Result } from './harness.js';
import { loadNote } from './load.js';
import { PAIRED_FULL, PAIRED_QUICK, type PairedCase, pairedRatio, runPaired } from './paired.js';
import { makeCeiling, type Peer } from './peers/ceiling.js';
import { makeLimiterPeer } from './peers/limiter.js';

function peerCase(id: string, peer: Peer): PairedCase {
  const numbers = new Int32Array(BATCH);
  const templates = new Float64Array(BATCH);
  let now = 0;
  return {
    id,
    ops: BATCH,
    run: () => {
      const got = peer.fill(++now, BATCH, numbers, templates);
      if (got !== BATCH) throw new Error(`${id} filled ${got} of ${BATCH}`);
    },
  };
}

/** A case of several calls, so each round takes a few milliseconds at least. */
function repeated(c: PairedCase, times: number): PairedCase {
  return {
    id: c.id,
    ops: c.ops * times,
    run: () => {
      for (let k = 0; k < times; k++) c.run();
    },
  };
}

/** The pairs: [numerator, denominator, what the ratio says]. */
export const RATIO_PAIRS = [
  ['ratio batch n=100', 'ratio batch n=100000', '100 -> 100,000 numbers'],
  ['ratio batch n=100', 'ratio batch n=100000 exhausted90', '100 -> 100,000 numbers, 90 % exhausted'],
  ['ratio batch n=100', 'ratio limiter n=100', 'sendpool over limiter at 100'],
  ['ratio batch n=100', 'ratio ceiling n=100', 'sendpool over the ceiling at 100'],
] as const;

export function ratioBenchmarks(options: { readonly quick: boolean; readonly filter?: string | undefined; readonly log?: (line: string) => void }): Result[] {
  if (options.filter !== undefined && !'ratio'.includes(options.filter) && !options.filter.startsWith('ratio')) return [];
  const big = options.quick ? 1_000 : 100_000;
  const times = options.quick ? 1 : 5;
  const cases = [
    repeated({ id: 'ratio batch n=100', ops: BATCH, run: batchTask(buildEngine({ numbers: 100, templates: 1 })) }, times),
    repeated({ id: 'ratio batch n=100000', ops: BATCH, run: batchTask(buildEngine({ numbers: big, templates: 1 })) }, times),
    repeated({ id: 'ratio batch n=100000 exhausted90', ops: BATCH, run: batchTask(buildEngine({ numbers: big, templates: 1, exhausted: EXHAUSTED_SHARE })) }, times),
    repeated(peerCase('ratio limiter n=100', makeLimiterPeer(100, 1, AMPLE_PER_HOUR)), times),
    repeated(peerCase('ratio ceiling n=100', makeCeiling(100, 1, AMPLE_PER_HOUR)), times),
  ];
  const paired = runPaired(cases, options.quick ? PAIRED_QUICK : PAIRED_FULL);
  const results: Result[] = cases.map((c) => ({
    id: c.id,
    group: 'assign',
    subject: c.id.includes('limiter') ? 'limiter' : c.id.includes('ceiling') ? 'ceiling' : 'sendpool',
    opsPerSecond: Math.round(paired.opsPerSecond.get(c.id)!),
    samples: paired.rounds,
    note: `median of ${paired.rounds} interleaved rounds; ${loadNote(paired.load)}`,
  }));
  for (const [a, b, what] of RATIO_PAIRS) {
    const ratio = pairedRatio(paired, a, b);
    results.push({
      id: `ratio ${what}`,
      group: 'ratio',
      subject: 'sendpool',
      ratioToSendpool: Number(ratio.toFixed(3)),
      note: `${a} / ${b}, per round, median of ${paired.rounds}; ${loadNote(paired.load)}`,
    });
    options.log?.(`ratio ${what}: x${ratio.toFixed(2)}`);
  }
  return results;
}
