/**
 * Assignments per second through the public API: the batch path (`assignInto`, 10,000 per call into
 * preallocated typed arrays) and single `assign(…, 1)` calls, over pools of 1 to 100,000 numbers,
 * 1 and 20 templates, with ample capacity, with 90 % of the numbers exhausted (waiting on the heap),
 * and with a number paused and resumed around every 10,000 assignments.
 *
 * Time comes from a ManualClock advanced by 1 ms per tinybench iteration, so buckets refill as in
 * production and the engine sees a moving clock.
 */
import { ManualClock, createEngine, type Engine } from '../src/index.js';
import { BUSINESS, TYPE, makeFleet, phoneOf, type FleetShape } from './fleets.js';
import { consume, fromMeasured, measure, type Result, type Timing } from './harness.js';

/** Assignments per `assignInto` call on the batch path. */
export const BATCH = 10_000;
/** `assign(…, 1)` calls per tinybench iteration. */
export const SINGLE_CALLS = 1_000;
export const EXHAUSTED_SHARE = 0.9;

export interface SuiteOptions {
  readonly sizes: readonly number[];
  readonly templates: readonly number[];
  readonly timing: Timing;
  /** Runs only cases whose id contains this text. */
  readonly filter?: string | undefined;
  /** Exhausted shares to run (0: ample); by default 0 and 0.9 (0 alone below 10 numbers). */
  readonly exhaustedShares?: readonly number[];
  readonly log?: (line: string) => void;
}

export interface BenchEngine {
  readonly engine: Engine;
  readonly clock: ManualClock;
  readonly shape: FleetShape;
}

/** Builds an engine on a generated fleet; with an exhausted share, uses up those numbers first. */
export function buildEngine(shape: FleetShape): BenchEngine {
  const clock = new ManualClock(0);
  const engine = createEngine(makeFleet(shape), { clock });
  if ((shape.exhausted ?? 0) > 0) {
    // Two passes of the ring: each exhausted number sends its one message, then is parked.
    const count = 2 * shape.numbers + 2;
    const numbers = new Int32Array(count);
    const templates = new Float64Array(count);
    const r = engine.assignInto(BUSINESS, TYPE, count, numbers, templates);
    if (r.count !== count) throw new Error(`draining the exhausted numbers: got ${r.count} of ${count}`);
  }
  return { engine, clock, shape };
}

function label(path: string, n: number, t: number, scenario: string): string {
  return `${path} n=${n} t=${t} ${scenario}`;
}

function scenarioOf(shape: FleetShape): string {
  return (shape.exhausted ?? 0) > 0 ? 'exhausted90' : 'ample';
}

/** The batch path: one `assignInto` of 10,000 per iteration. */
export function batchTask(b: BenchEngine, batch = BATCH): () => void {
  const { engine, clock } = b;
  const numbers = new Int32Array(batch);
  const templates = new Float64Array(batch);
  return () => {
    clock.advance(1);
    const r = engine.assignInto(BUSINESS, TYPE, batch, numbers, templates);
    if (r.count !== batch) throw new Error(`assignInto handed out ${r.count} of ${batch} (${r.reason ?? ''})`);
  };
}

/** The batch path with one number paused before and resumed after each call of 10,000. */
export function pauseResumeTask(b: BenchEngine, batch = BATCH): () => void {
  const { engine, clock, shape } = b;
  const numbers = new Int32Array(batch);
  const templates = new Float64Array(batch);
  const phones = Array.from({ length: shape.numbers }, (_, i) => phoneOf(i));
  let k = 0;
  return () => {
    clock.advance(1);
    const phone = phones[k]!;
    k = k + 1 === phones.length ? 0 : k + 1;
    engine.setNumberStatus(phone, 'paused');
    const r = engine.assignInto(BUSINESS, TYPE, batch, numbers, templates);
    engine.setNumberStatus(phone, 'active');
    if (r.count !== batch) throw new Error(`assignInto handed out ${r.count} of ${batch} (${r.reason ?? ''})`);
  };
}

/** Single calls: 1,000 `assign(…, 1)` per iteration. */
export function singleTask(b: BenchEngine, calls = SINGLE_CALLS): () => void {
  const { engine, clock } = b;
  return () => {
    clock.advance(1);
    for (let k = 0; k < calls; k++) {
      const r = engine.assign(BUSINESS, TYPE, 1);
      consume(r.assignments.length);
    }
  };
}

export async function assignBenchmarks(options: SuiteOptions): Promise<Result[]> {
  const results: Result[] = [];
  const wanted = (id: string): boolean => options.filter === undefined || id.includes(options.filter);
  const log = options.log ?? (() => {});
  for (const n of options.sizes) {
    for (const t of options.templates) {
      for (const exhausted of (options.exhaustedShares ?? [0, EXHAUSTED_SHARE]).filter((e) => e === 0 || n >= 10)) {
        const shape: FleetShape = { numbers: n, templates: t, exhausted };
        const scenario = scenarioOf(shape);
        const ids = {
          batch: label('batch', n, t, scenario),
          pause: label('batch', n, t, 'pause-resume'),
          single: label('single', n, t, scenario),
        };
        const runPause = exhausted === 0 && n >= 10 && t === 1;
        if (!wanted(ids.batch) && !wanted(ids.single) && !(runPause && wanted(ids.pause))) continue;
        const b = buildEngine(shape);
        // Building a large fleet leaves garbage whose collection would land in the first case
        // measured (on a 2-core machine the collector's helper threads compete with it too).
        settleHeap();
        if (wanted(ids.batch)) {
          const m = await measure(ids.batch, BATCH, batchTask(b), options.timing);
          results.push(fromMeasured({ id: ids.batch, group: 'assign', subject: 'sendpool', path: 'batch', numbers: n, templates: t, scenario }, m));
          log(`${ids.batch}: ${fmt(m.opsPerSecond)}/s`);
        }
        if (runPause && wanted(ids.pause)) {
          const m = await measure(ids.pause, BATCH, pauseResumeTask(b), options.timing);
          results.push(fromMeasured({ id: ids.pause, group: 'assign', subject: 'sendpool', path: 'batch', numbers: n, templates: t, scenario: 'pause-resume' }, m));
          log(`${ids.pause}: ${fmt(m.opsPerSecond)}/s`);
        }
        if (wanted(ids.single)) {
          const m = await measure(ids.single, SINGLE_CALLS, singleTask(b), options.timing);
          results.push(fromMeasured({ id: ids.single, group: 'assign', subject: 'sendpool', path: 'single', numbers: n, templates: t, scenario }, m));
          log(`${ids.single}: ${fmt(m.opsPerSecond)}/s`);
        }
      }
    }
  }
  return results;
}

/** A full collection when the process allows one (`node --expose-gc`, as bench/isolated.ts runs it). */
export function settleHeap(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc) gc();
}

export function fmt(x: number): string {
  if (x >= 1e6) return `${(x / 1e6).toFixed(2)} M`;
  if (x >= 1e3) return `${(x / 1e3).toFixed(1)} k`;
  return x.toFixed(0);
}
