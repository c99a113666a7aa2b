/**
 * The randomness port of the events subsystem. Event ids (UUID v4), webhook secrets and the jitter
 * of delivery retries all come from here, never from `Math.random()`, so a test injects a seeded
 * source and replays a run exactly, and a host plugs in its CSPRNG:
 *
 * ```ts
 * import { randomFillSync } from 'node:crypto';
 * const random: RandomSource = { randomBytes: (n) => randomFillSync(new Uint8Array(n)) };
 * ```
 */
export interface RandomSource {
  /** `n` fresh random bytes. Event ids are only as unique as these are random: use a CSPRNG in production. */
  randomBytes(n: number): Uint8Array;
}

/**
 * A uniform number in [0, 1) from 53 random bits (7 bytes, top 3 bits dropped): what jitter needs,
 * with no modulo bias.
 */
export function randomUnit(random: RandomSource): number {
  const b = random.randomBytes(7);
  // 5 high bits from the first byte, then 48 bits: 53 bits in all, exactly a double's mantissa.
  let hi = (b[0] ?? 0) & 0x1f;
  for (let i = 1; i < 7; i++) hi = hi * 256 + (b[i] ?? 0);
  return hi / 2 ** 53;
}
