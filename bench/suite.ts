/**
 * The whole benchmark suite as a function (the runner and the smoke test call it): assignment
 * scaling, peers, failover, memory (child process with --expose-gc), the dispatch loop; targets
 * checked against the figures of the same run.
 */
import { cliBenchmarks } from './cli.bench.js';
import { spawnSync } from 'node:child_process';
import { cpus } from 'node:os';
import { EXHAUSTED_SHARE, assignBenchmarks } from './assign.bench.js';
import { dispatchBenchmarks } from './dispatch.bench.js';
import { limitsBenchmarks } from './limits.bench.js';
import { RATIO_PAIRS, ratioBenchmarks } from './ratios.bench.js';
import { failoverBenchmarks } from './failover.bench.js';
import { FULL, QUICK, type Result } from './harness.js';
import type { ChildRequest } from './child.js';
import { runIsolated } from './isolated.js';
import { ROOT, entry } from './paths.js';
import { measureMemory, type MemoryReport } from './memory.js';
import { peerBenchmarks } from './peers.bench.js';

export interface SuiteConfig {
  readonly quick: boolean;
  readonly filter?: string | undefined;
  /** Run the memory measurement in a child process with --expose-gc. @default true */
  readonly memoryChild?: boolean;
  /**
   * Run each fleet shape's assignment cases, and each pool size's peers, in a process of their own
   * (bench/isolated.ts), so no case is measured with code compiled for another.
   * @default true, but false with `quick`
   */
  readonly isolate?: boolean;
  /** Processes per isolated group; each case reports its median. @default 3 */
  readonly repeats?: number;
  readonly log?: (line: string) => void;
}

export interface Target {
  readonly target: string;
  readonly measured: string;
  readonly met: boolean | null;
}

export interface SuiteReport {
  readonly date: string;
  readonly quick: boolean;
  readonly machine: { readonly cpu: string; readonly cores: number; readonly node: string; readonly platform: string };
  readonly results: Result[];
  readonly targets: Target[];
}

const PLAN = {
  full: {
    sizes: [1, 10, 100, 1_000, 10_000, 100_000],
    templates: [1, 20],
    asyncSizes: [100],
    failover: { poolSize: 10_000, pools: 1_000, perPool: 10 },
    memory: { numbers: 100_000, templates: 20, contacts: 1_000_000 },
    dispatch: { numbers: 100, contactsPerIteration: 10_000, campaigns: [1, 100] },
  },
  quick: {
    sizes: [1, 10, 100],
    templates: [1, 2],
    asyncSizes: [100],
    failover: { poolSize: 100, pools: 10, perPool: 5 },
    memory: { numbers: 1_000, templates: 2, contacts: 1_000 },
    dispatch: { numbers: 10, contactsPerIteration: 200, campaigns: [1, 10] },
  },
} as const;

function memoryInChild(m: { numbers: number; templates: number; contacts: number }): MemoryReport {
  const main = entry('memory-main');
  const child = spawnSync(process.execPath, ['--expose-gc', ...main.nodeArgs, main.script, '--numbers', String(m.numbers), '--templates', String(m.templates), '--contacts', String(m.contacts)], {
    encoding: 'utf8',
    cwd: ROOT,
    maxBuffer: 1 << 20,
  });
  const line = child.stdout.trim().split('\n').pop() ?? '';
  if (child.status !== 0 || !line.startsWith('{')) throw new Error(`memory child failed (${child.status}): ${child.stderr.trim().slice(-500)}`);
  return JSON.parse(line) as MemoryReport;
}

export async function runSuite(config: SuiteConfig): Promise<SuiteReport> {
  const plan = config.quick ? PLAN.quick : PLAN.full;
  const timing = config.quick ? QUICK : FULL;
  const log = config.log ?? (() => {});
  const filter = config.filter;
  const results: Result[] = [];
  const common = { timing, filter, log };
  if (config.isolate ?? !config.quick) {
    const wanted = (ids: readonly string[]): boolean => filter === undefined || ids.some((id) => id.includes(filter));
    const requests: ChildRequest[] = [];
    for (const n of plan.sizes) {
      for (const t of plan.templates) {
        for (const share of n >= 10 ? [0, EXHAUSTED_SHARE] : [0]) {
          const scenario = share > 0 ? 'exhausted90' : 'ample';
          if (!wanted([`batch n=${n} t=${t} ${scenario}`, `batch n=${n} t=${t} pause-resume`, `single n=${n} t=${t} ${scenario}`])) continue;
          requests.push({ group: 'assign', options: { timing, filter, sizes: [n], templates: [t], exhaustedShares: [share] } });
        }
      }
    }
    for (const n of plan.sizes) {
      const subjects = ['sendpool', 'ceiling', 'limiter', 'sendpool-single', 'rate-limiter-flexible', 'p-queue'];
      if (!wanted(subjects.map((subject) => `peers n=${n} t=1 ${subject}`))) continue;
      requests.push({ group: 'peers', options: { timing, filter, sizes: [n], templates: [1], asyncSizes: plan.asyncSizes } });
    }
    results.push(...runIsolated(requests, config.repeats ?? 3));
  } else {
    results.push(...(await assignBenchmarks({ ...common, sizes: plan.sizes, templates: plan.templates })));
    results.push(...(await peerBenchmarks({ ...common, sizes: plan.sizes, templates: [1], asyncSizes: plan.asyncSizes })));
  }
  results.push(...(await failoverBenchmarks({ ...common, ...plan.failover })));
  if (filter === undefined || 'memory'.includes(filter) || filter.startsWith('memory')) {
    const m = config.memoryChild === false ? measureMemory(plan.memory.numbers, plan.memory.templates, plan.memory.contacts) : memoryInChild(plan.memory);
    const perNumber: Result = {
      id: `memory per number n=${m.numbers}`,
      group: 'memory',
      subject: 'sendpool',
      numbers: m.numbers,
      templates: m.templates,
      ...(m.bytesPerNumber === null ? {} : { bytes: m.bytesPerNumber }),
      note: m.gc ? `after forced GC; total ${m.totalBytes} bytes` : 'no --expose-gc',
    };
    const perContact: Result = {
      id: `memory per queued contact queued=${m.contacts}`,
      group: 'memory',
      subject: 'sendpool',
      ...(m.bytesPerQueuedContact === null ? {} : { bytes: m.bytesPerQueuedContact }),
      note: `${m.note}; the caller keeps its contacts`,
    };
    const perNumberAlone: Result = {
      id: `memory per number alone n=${m.numbers}`,
      group: 'memory',
      subject: 'sendpool',
      numbers: m.numbers,
      templates: m.templates,
      ...(m.bytesPerNumberAlone === null ? {} : { bytes: m.bytesPerNumberAlone }),
      note: 'the caller dropped its fleet description (read from JSON) after createEngine',
    };
    const perContactAlone: Result = {
      id: `memory per queued contact alone queued=${m.contacts}`,
      group: 'memory',
      subject: 'sendpool',
      ...(m.bytesPerQueuedContactAlone === null ? {} : { bytes: m.bytesPerQueuedContactAlone }),
      note: `${m.note}; the caller keeps nothing after submit`,
    };
    results.push(perNumber, perNumberAlone, perContact, perContactAlone);
    for (const r of [perNumber, perNumberAlone, perContact, perContactAlone]) log(`${r.id}: ${r.bytes ?? '-'} bytes`);
  }
  results.push(...dispatchBenchmarks({ quick: config.quick, filter, log, ...plan.dispatch, campaigns: [...plan.dispatch.campaigns] }));
  results.push(...limitsBenchmarks({ quick: config.quick, filter, log }));
  results.push(...ratioBenchmarks({ quick: config.quick, filter, log }));
  results.push(...cliBenchmarks({ quick: config.quick, filter, log }));
  return {
    date: new Date().toISOString(),
    quick: config.quick,
    machine: { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, node: process.version, platform: `${process.platform} ${process.arch}` },
    results,
    targets: checkTargets(results, plan.sizes, plan.templates),
  };
}

const M = (x: number): string => `${(x / 1e6).toFixed(1)} M/s`;

/** The targets, from the figures of this run; `met: null` when a figure is missing. */
export function checkTargets(results: readonly Result[], sizes: readonly number[], templates: readonly number[]): Target[] {
  const get = (id: string): Result | undefined => results.find((r) => r.id === id);
  const ops = (id: string): number | undefined => get(id)?.opsPerSecond;
  const targets: Target[] = [];
  const add = (target: string, value: number | undefined, ok: (v: number) => boolean, show: (v: number) => string): void => {
    targets.push(value === undefined ? { target, measured: 'not measured', met: null } : { target, measured: show(value), met: ok(value) });
  };
  const small = sizes.includes(100) ? 100 : sizes[sizes.length - 1]!;
  const big = sizes[sizes.length - 1]!;
  add(`batch at ${small} numbers >= 25 M/s`, ops(`batch n=${small} t=1 ample`), (v) => v >= 25e6, M);
  const sp = ops(`peers n=${small} t=1 sendpool`);
  const lim = ops(`peers n=${small} t=1 limiter`);
  const ceil = ops(`peers n=${small} t=1 ceiling`);
  add(
    `batch at ${small} >= 3x limiter (same section)`,
    sp !== undefined && lim !== undefined ? sp / lim : undefined,
    (v) => v >= 3,
    (v) => `${v.toFixed(2)}x (${M(sp!)} vs ${M(lim!)})`,
  );
  add(
    `batch at ${small} >= 0.5x ceiling (same section)`,
    sp !== undefined && ceil !== undefined ? sp / ceil : undefined,
    (v) => v >= 0.5,
    (v) => `${v.toFixed(2)}x (${M(sp!)} vs ${M(ceil!)})`,
  );
  add(`single assign(…, 1) >= 5 M/s (at ${small})`, ops(`single n=${small} t=1 ample`), (v) => v >= 5e6, M);
  for (const t of templates) {
    const base = ops(`batch n=${small} t=${t} ample`);
    const others = [...new Set([`batch n=${big} t=${t} ample`, `batch n=${small} t=${t} exhausted90`, `batch n=${big} t=${t} exhausted90`])];
    for (const other of others) {
      const v = ops(other);
      add(
        `${small} -> "${other}": falls by <= 2x`,
        base !== undefined && v !== undefined ? base / v : undefined,
        (x) => x <= 2,
        (x) => `${x.toFixed(2)}x (${M(base!)} -> ${M(v!)})`,
      );
    }
  }
  for (const id of results.filter((r) => r.group === 'failover' && r.id.includes('number')).map((r) => r.id)) {
    add(
      `${id} < 20 µs`,
      get(id)?.microsPerOp,
      (v) => v < 20,
      (v) => `${v.toFixed(3)} µs`,
    );
  }
  const mem = results.find((r) => r.id.startsWith('memory per number alone'));
  add(
    `memory per number without the caller's fleet <= 300 bytes (${mem?.numbers ?? '?'} numbers)`,
    mem?.bytes,
    (v) => v <= 300,
    (v) => `${v} bytes`,
  );
  const q = results.find((r) => r.id.startsWith('memory per queued contact alone'));
  add(
    'memory per queued contact, the caller keeping nothing, <= 120 bytes',
    q?.bytes,
    (v) => v <= 120,
    (v) => `${v} bytes`,
  );
  for (const [campaigns, goal] of [
    [1, 5e6],
    [100, 3e6],
  ] as const) {
    const r = results.find((x) => x.group === 'dispatch' && x.id.startsWith('dispatch batch ') && x.id.endsWith(` campaigns=${campaigns}`));
    add(`dispatch loop (batch API), ${campaigns} campaign(s) >= ${goal / 1e6} M contacts/s`, r?.opsPerSecond, (v) => v >= goal, M);
  }
  for (const [, , what] of RATIO_PAIRS) {
    const r = results.find((x) => x.id === `ratio ${what}`)?.ratioToSendpool;
    const [ok, show] = what.startsWith('100 ->') ? [(v: number) => v <= 2, `falls by <= 2x`] : what.includes('limiter') ? [(v: number) => v >= 3, '>= 3x'] : [(v: number) => v >= 0.5, '>= 0.5x'];
    add(`${what} ${show} (paired rounds, one process)`, r, ok, (v) => `${v.toFixed(2)}x`);
  }
  const sim = results.find((r) => r.id === 'cli simulate 1,000,000 messages');
  add(
    'sendpool simulate of 1,000,000 messages < 5 s',
    sim?.microsPerOp === undefined ? undefined : sim.microsPerOp,
    (v) => v < 5,
    (v) => `${v.toFixed(2)} s`,
  );
  return targets;
}
