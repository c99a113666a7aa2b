/** Options of the operator dashboard (`buildServer({ dashboard })`). */
import { problem, type Problem } from '../../core/problems.js';
import { integerProblem } from '../lib/option-checks.js';

/** The operator dashboard served under /dashboard/. */
export interface DashboardOptions {
  /**
   * How often the output of every (business, template type) is sampled for the dashboard's charts,
   * in ms; an hour of samples is kept (360 a pool at the default, 8 bytes each).
   * @default 10_000
   */
  readonly sampleIntervalMs?: number;
}

/** Shortest sampling period accepted: below it the samples would cost more than they tell. */
export const MIN_SAMPLE_INTERVAL_MS = 100;
/** How far back the output samples go. */
export const HISTORY_MS = 3_600_000;

/** The dashboard's options as the server uses them; undefined when it is off. */
export function resolveDashboard(option: unknown, problems: Problem[]): DashboardOptions | undefined {
  if (option === undefined || option === true) return {};
  if (option === false) return undefined;
  if (typeof option !== 'object' || option === null || Array.isArray(option)) {
    problems.push(problem('dashboard', 'true, false or { sampleIntervalMs }', option));
    return undefined;
  }
  const { sampleIntervalMs, ...rest } = option as Record<string, unknown>;
  for (const key of Object.keys(rest)) problems.push(problem(`dashboard.${key}`, 'no such option (known: sampleIntervalMs)', rest[key]));
  if (sampleIntervalMs === undefined) return {};
  const bad = integerProblem('dashboard.sampleIntervalMs', sampleIntervalMs, MIN_SAMPLE_INTERVAL_MS, HISTORY_MS, 'ms');
  if (bad) {
    problems.push(bad);
    return undefined;
  }
  return { sampleIntervalMs: sampleIntervalMs as number };
}
