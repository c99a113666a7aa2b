/**
 * Durations on the command line and in events files: `45s`, `30m`, `2h`, `1h30m`, `1d`, `1d6h`,
 * `250ms`, or `0`. Units from largest to smallest, each at most once, whole numbers only.
 */

const DURATION = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+)s)?(?:(\d+)ms)?$/;
const UNITS = [86_400_000, 3_600_000, 60_000, 1_000, 1] as const;

export const DURATION_SYNTAX = 'a duration such as 45s, 30m, 2h, 1h30m, 1d or 250ms';

/** Milliseconds of a duration, or undefined when `text` is not one. */
export function parseDuration(text: string): number | undefined {
  if (text === '0') return 0;
  const m = DURATION.exec(text);
  if (!m || text === '') return undefined;
  let ms = 0;
  for (let i = 0; i < UNITS.length; i++) {
    const part = m[i + 1];
    if (part !== undefined) ms += Number(part) * UNITS[i]!;
  }
  return Number.isSafeInteger(ms) ? ms : undefined;
}

/** `0s`, `45s`, `12m30s`, `9h00m`, `2d 02h00m11.5s`: short, exact to the millisecond. */
export function formatDuration(ms: number): string {
  const sign = ms < 0 ? '-' : '';
  let rest = Math.abs(Math.round(ms));
  const days = Math.floor(rest / 86_400_000);
  rest -= days * 86_400_000;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = rest / 1000;
  const sec = seconds === 0 ? '' : `${seconds < 10 && (hours > 0 || minutes > 0 || days > 0) ? '0' : ''}${trimZeros(seconds.toFixed(3))}s`;
  const pad = (n: number) => String(n).padStart(2, '0');
  let body: string;
  if (days > 0) body = `${days}d ${pad(hours)}h${pad(minutes)}m${sec}`;
  else if (hours > 0) body = `${hours}h${pad(minutes)}m${sec}`;
  else if (minutes > 0) body = `${minutes}m${sec}`;
  else body = sec === '' ? '0s' : sec;
  return sign + body;
}

function trimZeros(text: string): string {
  return text.includes('.') ? text.replace(/\.?0+$/, '') : text;
}
