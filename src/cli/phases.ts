/** Words for what holds a number back, shared by forecast tables. */
import type { ForecastLimit, LimitPhase } from '../core/forecast.js';
import { formatDuration } from './duration.js';

const NAMES: Record<ForecastLimit, string> = {
  messagesPerSecond: 'per-second',
  throughputPerHour: 'hourly',
  messagingLimit24h: '24h',
  paused: 'paused',
  'no-template': 'no template',
};

/** `hourly 0s-9h00m, 24h 9h00m-25h00m, …` (the first `max` phases). */
export function describePhases(phases: readonly LimitPhase[], endMs: number | null, max = 4): string {
  const shown = phases.slice(0, max).map((p) => {
    const to = endMs !== null && p.toMs >= endMs + 1 ? 'end' : formatDuration(p.toMs);
    return `${NAMES[p.limit]} ${formatDuration(p.fromMs)}-${to}`;
  });
  if (phases.length > max) shown.push(`… (+${phases.length - max})`);
  return shown.join(', ');
}
