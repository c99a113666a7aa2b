/**
 * The production {@link RandomSource}: node:crypto's CSPRNG, drawn in blocks. Every webhook event
 * takes 16 bytes for its id; one `randomFillSync` per event cost more than the id's formatting, so
 * bytes come from a 4 KiB block filled at once (what `crypto.randomUUID` does inside), each caller
 * given a copy of its own.
 */
import { randomFillSync } from 'node:crypto';
import type { RandomSource } from '../events/random.js';

const BLOCK = 4096;
const block = new Uint8Array(BLOCK);
let used = BLOCK;

export const cryptoRandom: RandomSource = {
  randomBytes: (n) => {
    if (n > BLOCK / 4) return randomFillSync(new Uint8Array(n));
    if (used + n > BLOCK) {
      randomFillSync(block);
      used = 0;
    }
    // A copy: the caller may keep it, and the block's bytes are never handed out twice.
    const out = block.slice(used, used + n);
    used += n;
    return out;
  },
};
