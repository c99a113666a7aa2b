/**
 * The ceiling: the same job written by hand over typed arrays, with nothing else. A token bucket
 * per number (refilled lazily on first touch in a call, time read once per call), round-robin
 * over a ring of the numbers that have tokens (a number out of tokens leaves the ring), templates
 * round-robin. It has no 24 h window, no statuses, no store port, no reasons: what is left when
 * everything but the job is taken away.
 */
export interface Peer {
  /** Fills `count` pairs into the arrays; returns how many it filled. */
  fill(now: number, count: number, numbers: Int32Array, templates: Float64Array): number;
}

export function makeCeiling(n: number, templateCount: number, perHour: number): Peer {
  const ratePerMs = perHour / 3_600_000;
  const tokens = new Float64Array(n).fill(perHour);
  const last = new Float64Array(n);
  const stamp = new Float64Array(n);
  const ring = new Int32Array(n);
  for (let i = 0; i < n; i++) ring[i] = i;
  const templateIds = new Float64Array(templateCount);
  for (let k = 0; k < templateCount; k++) templateIds[k] = 100 + k;
  let head = 0;
  let size = n;
  let cursor = 0;
  let call = 0;
  return {
    fill(now, count, numbers, templates) {
      call++;
      let i = 0;
      while (i < count && size > 0) {
        const m = ring[head]!;
        if (stamp[m] !== call) {
          stamp[m] = call;
          const t = tokens[m]! + (now - last[m]!) * ratePerMs;
          tokens[m] = t > perHour ? perHour : t;
          last[m] = now;
        }
        if (tokens[m]! < 1) {
          // Out of tokens: leave the ring (a real scheduler parks it until it refills).
          head = head + 1 === n ? 0 : head + 1;
          size--;
          continue;
        }
        tokens[m]!--;
        numbers[i] = m;
        templates[i] = templateIds[cursor]!;
        cursor = cursor + 1 === templateCount ? 0 : cursor + 1;
        i++;
        let tail = head + size;
        if (tail >= n) tail -= n;
        ring[tail] = m;
        head = head + 1 === n ? 0 : head + 1;
      }
      return i;
    },
  };
}
