/**
 * The memory measurement as a process of its own (the suite starts it with --expose-gc):
 * `--numbers N --templates T --contacts C`, one JSON line on stdout.
 */
import { measureMemory } from './memory.js';

function argOf(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  const v = i >= 0 ? Number(process.argv[i + 1]) : NaN;
  return Number.isFinite(v) && v > 0 ? v : fallback;
}

const report = measureMemory(argOf('--numbers', 100_000), argOf('--templates', 20), argOf('--contacts', 1_000_000));
process.stdout.write(`${JSON.stringify(report)}\n`);
