/** The production {@link RandomSource}: node:crypto's CSPRNG. */
import { randomFillSync } from 'node:crypto';
import type { RandomSource } from '../events/random.js';

export const cryptoRandom: RandomSource = { randomBytes: (n) => randomFillSync(new Uint8Array(n)) };
