/**
 * Drops the dead letters older than a time (shared-dead-letters.ts: before a list).
 * KEYS: [1] `<p>dl:t` (the other dead-letter keys derive from it).
 * ARGV: [1] the oldest time kept (epoch ms).
 * Reply: 0.
 */
import { defineScript } from './codec.js';
import { DEAD_LETTERS } from './modules.js';

export interface DeadLetterPruneArgs {
  /** `<p>dl:t`. */
  readonly byTime: string;
  readonly oldest: number;
}

export const DEAD_LETTER_PRUNE = defineScript<DeadLetterPruneArgs, void>({
  name: 'dead-letter-prune',
  uses: [DEAD_LETTERS],
  body: `
dl_prune(string.sub(KEYS[1], 1, string.len(KEYS[1]) - 1), ARGV[1])
return 0
`,
  encode: (a) => ({ keys: [a.byTime], argv: [a.oldest] }),
  decode: (reply, read) => void read.int(reply, 'reply'),
});
