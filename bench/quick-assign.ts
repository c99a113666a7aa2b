/**
 * A quick side-by-side of the hot path (not part of `npm run bench`): batch assignment at a few
 * pool sizes, single `assign` calls, and the hand-written ceiling, in one process. For iterating on
 * the engine: `npx tsx bench/quick-assign.ts`.
 */
import { ManualClock, createEngine } from '../src/index.js';
import { BUSINESS, TYPE, makeFleet } from './fleets.js';
import { makeCeiling } from './peers/ceiling.js';

const BATCH = 10_000;

function rate(run: () => void, seconds = 1.5): number {
  for (let i = 0; i < 20; i++) run();
  let n = 0;
  const start = performance.now();
  let now = start;
  while (now - start < seconds * 1000) {
    run();
    n++;
    now = performance.now();
  }
  return (n * BATCH) / ((now - start) / 1000);
}

const fmt = (x: number) => `${(x / 1e6).toFixed(1)} M/s`;
for (const numbers of [100, 100_000]) {
  for (const [templates, exhausted] of [
    [1, 0],
    [20, 0],
    [1, 0.9],
  ] as const) {
    const clock = new ManualClock(0);
    const engine = createEngine(makeFleet({ numbers, templates, exhausted }), { clock });
    if (exhausted > 0) {
      const drain = 2 * numbers + 2;
      engine.assignInto(BUSINESS, TYPE, drain, new Int32Array(drain), new Float64Array(drain));
    }
    const outN = new Int32Array(BATCH);
    const outT = new Float64Array(BATCH);
    const batch = rate(() => {
      clock.advance(1);
      engine.assignInto(BUSINESS, TYPE, BATCH, outN, outT);
    });
    const ceiling = makeCeiling(numbers, templates, 1e9);
    let t = 0;
    const peer = rate(() => void ceiling.fill(++t, BATCH, outN, outT));
    console.log(`n=${numbers} t=${templates}${exhausted ? ' exhausted90' : ''}: batch ${fmt(batch)}  ceiling ${fmt(peer)}  ratio ${(batch / peer).toFixed(2)}`);
  }
}
{
  const clock = new ManualClock(0);
  const engine = createEngine(makeFleet({ numbers: 100, templates: 1 }), { clock });
  const single = rate(() => {
    clock.advance(1);
    for (let i = 0; i < BATCH; i++) engine.assign(BUSINESS, TYPE, 1);
  });
  console.log(`single assign(…, 1): ${fmt(single)}`);
}
