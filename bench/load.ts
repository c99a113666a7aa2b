/** The machine's load beside a figure: benches share it with other work (docs/benchmarks.md). */
import { readFileSync } from 'node:fs';

/** The 1-minute load average from /proc/loadavg, or undefined where there is none. */
export function cpuLoad(): number | undefined {
  try {
    return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
  } catch {
    return undefined;
  }
}

export function loadNote(load: readonly [number | undefined, number | undefined]): string {
  const f = (x: number | undefined): string => (x === undefined ? '?' : x.toFixed(2));
  return `load ${f(load[0])} -> ${f(load[1])}`;
}
