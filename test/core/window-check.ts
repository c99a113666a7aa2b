/**
 * An independent check of the windows, from the record of what was sent: no engine code here.
 * Per hour / per second (token buckets of capacity C over period P): in every interval [a, b],
 * at most C + floor((b - a) * C / P) messages. Per 24 h: at most the limit in every sliding 24 h.
 */
export interface Send {
  readonly at: number;
  readonly count: number;
}

export interface WindowLimits {
  readonly perHour: number;
  readonly per24h: number;
  readonly perSecond?: number | undefined;
}

/** Merges sends at the same instant and sorts them by time. */
function merged(sends: readonly Send[]): Send[] {
  const byTime = new Map<number, number>();
  for (const s of sends) byTime.set(s.at, (byTime.get(s.at) ?? 0) + s.count);
  return [...byTime].sort((a, b) => a[0] - b[0]).map(([at, count]) => ({ at, count }));
}

function bucketViolation(sends: readonly Send[], capacity: number, period: number): string | undefined {
  for (let a = 0; a < sends.length; a++) {
    let sum = 0;
    for (let b = a; b < sends.length; b++) {
      sum += sends[b]!.count;
      const allowed = capacity + Math.floor(((sends[b]!.at - sends[a]!.at) * capacity) / period);
      if (sum > allowed) return `${sum} sent in [${sends[a]!.at}, ${sends[b]!.at}] where ${allowed} are allowed (capacity ${capacity} per ${period} ms)`;
    }
  }
  return undefined;
}

/** Describes the first window a number exceeded, or undefined when it kept to all of them. */
export function windowViolation(raw: readonly Send[], limits: WindowLimits): string | undefined {
  const sends = merged(raw);
  const hour = bucketViolation(sends, limits.perHour, 3_600_000);
  if (hour) return `per hour: ${hour}`;
  if (limits.perSecond) {
    const second = bucketViolation(sends, limits.perSecond, 1_000);
    if (second) return `per second: ${second}`;
  }
  let start = 0;
  let sum = 0;
  for (let b = 0; b < sends.length; b++) {
    sum += sends[b]!.count;
    while (sends[start]!.at <= sends[b]!.at - 86_400_000) sum -= sends[start++]!.count;
    if (sum > limits.per24h) return `per 24 h: ${sum} sent in (${sends[b]!.at - 86_400_000}, ${sends[b]!.at}] where ${limits.per24h} are allowed`;
  }
  return undefined;
}
