/**
 * The time buckets of `already_sent` (`alreadySentWindowMs`): the phones a business took for a
 * template type are kept per 1/24 of the window, here (sent-phones.ts) and in Redis
 * (backends/redis/shared-phones.ts), so every place that keeps them reads the same buckets.
 */

/** Buckets a window is cut into: the time a phone stays refused past the window is at most 1/24 of it. */
export const SENT_BUCKETS_PER_WINDOW = 24;

/** The width of a bucket for a window (ms). */
export function sentBucketMs(windowMs: number): number {
  return Math.max(1, Math.ceil(windowMs / SENT_BUCKETS_PER_WINDOW));
}

/**
 * The starts of the buckets that may hold a phone taken within the window before `now`, oldest
 * first; the last is the bucket `now` writes to. A bucket `[s, s + width)` may while `s + width > now - window`.
 */
export function liveSentBuckets(windowMs: number, now: number): number[] {
  const width = sentBucketMs(windowMs);
  const current = Math.floor(now / width) * width;
  const starts: number[] = [];
  for (let s = (Math.floor((now - windowMs - width) / width) + 1) * width; s <= current; s += width) starts.push(s);
  return starts;
}
