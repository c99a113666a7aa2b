/**
 * Failover cost: time to pause and to resume one number in a 10,000-number pool, and to pause and
 * to resume one template used by 1,000 pools (1,000 businesses of 10 numbers, each type with the
 * shared template and one of its own, so the pools keep a template and stay open).
 *
 * The measured call is the public `setNumberStatus` / `setTemplateStatus`; the opposite change is
 * made in a tinybench hook, outside the timed window.
 */
import { ManualClock, createEngine } from '../src/index.js';
import { BUSINESS, TYPE, makeFleet, makeSharedTemplateFleet, phoneOf } from './fleets.js';
import { fromMeasured, measure, type Result, type Timing } from './harness.js';

/** Numbers paused (or resumed) per tinybench iteration. */
export const NUMBER_OPS = 100;

export interface FailoverOptions {
  readonly poolSize: number;
  readonly pools: number;
  readonly perPool: number;
  readonly timing: Timing;
  readonly filter?: string | undefined;
  readonly log?: (line: string) => void;
}

export async function failoverBenchmarks(options: FailoverOptions): Promise<Result[]> {
  const results: Result[] = [];
  const wanted = (id: string): boolean => options.filter === undefined || id.includes(options.filter);
  const log = options.log ?? (() => {});
  const n = options.poolSize;
  const ops = Math.min(NUMBER_OPS, n);
  const pauseId = `failover pause number n=${n}`;
  const resumeId = `failover resume number n=${n}`;
  if (wanted(pauseId) || wanted(resumeId)) {
    const clock = new ManualClock(0);
    const engine = createEngine(makeFleet({ numbers: n, templates: 2 }), { clock });
    const phones = Array.from({ length: n }, (_, i) => phoneOf(i));
    const out = new Int32Array(n);
    const outT = new Float64Array(n);
    // The pool is rotating: a round of assignments before, and between, the changes.
    engine.assignInto(BUSINESS, TYPE, n, out, outT);
    let k = 0;
    const batch = (): string[] => {
      const list: string[] = [];
      for (let j = 0; j < ops; j++) {
        list.push(phones[k]!);
        k = (k + 1) % n;
      }
      return list;
    };
    let current: string[] = [];
    const pauseAll = (): void => {
      for (const p of current) engine.setNumberStatus(p, 'paused');
    };
    const resumeAll = (): void => {
      for (const p of current) engine.setNumberStatus(p, 'active');
    };
    const between = (): void => {
      clock.advance(1);
      engine.assignInto(BUSINESS, TYPE, ops, out, outT);
    };
    if (wanted(pauseId)) {
      const m = await measure(pauseId, ops, pauseAll, options.timing, {
        beforeEach: () => {
          current = batch();
          between();
        },
        afterEach: resumeAll,
      });
      results.push(fromMeasured({ id: pauseId, group: 'failover', subject: 'sendpool', path: 'setNumberStatus paused', numbers: n }, m));
      log(`${pauseId}: ${m.microsPerOp.toFixed(3)} µs`);
    }
    if (wanted(resumeId)) {
      const m = await measure(resumeId, ops, resumeAll, options.timing, {
        beforeEach: () => {
          current = batch();
          pauseAll();
          between();
        },
      });
      results.push(fromMeasured({ id: resumeId, group: 'failover', subject: 'sendpool', path: 'setNumberStatus active', numbers: n }, m));
      log(`${resumeId}: ${m.microsPerOp.toFixed(3)} µs`);
    }
  }

  const pools = options.pools;
  const tPauseId = `failover pause template pools=${pools}`;
  const tResumeId = `failover resume template pools=${pools}`;
  if (wanted(tPauseId) || wanted(tResumeId)) {
    const clock = new ManualClock(0);
    const engine = createEngine(makeSharedTemplateFleet(pools, options.perPool), { clock });
    const numbers = options.pools * options.perPool;
    if (wanted(tPauseId)) {
      const m = await measure(tPauseId, 1, () => engine.setTemplateStatus(1, 'paused'), options.timing, {
        afterEach: () => engine.setTemplateStatus(1, 'active'),
      });
      results.push(fromMeasured({ id: tPauseId, group: 'failover', subject: 'sendpool', path: 'setTemplateStatus paused', numbers, note: `${pools} pools of ${options.perPool} numbers` }, m));
      log(`${tPauseId}: ${m.microsPerOp.toFixed(1)} µs`);
    }
    if (wanted(tResumeId)) {
      const m = await measure(tResumeId, 1, () => engine.setTemplateStatus(1, 'active'), options.timing, {
        beforeEach: () => engine.setTemplateStatus(1, 'paused'),
      });
      results.push(fromMeasured({ id: tResumeId, group: 'failover', subject: 'sendpool', path: 'setTemplateStatus active', numbers, note: `${pools} pools of ${options.perPool} numbers` }, m));
      log(`${tResumeId}: ${m.microsPerOp.toFixed(1)} µs`);
    }
  }

  return results;
}
