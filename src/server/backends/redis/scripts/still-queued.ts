/**
 * Which of the chunks an instance accepted are still in their streams, fenced by the queue's epoch
 * (an empty Redis must not read as "every chunk done").
 * KEYS: [1] the epoch marker `<p>epoch`, then the stream of each entry asked (one per entry).
 * ARGV: [1] the epoch id, then the entry ids (ARGV[j] is in KEYS[j]).
 * Reply: per entry 1 when it is still there, else 0.
 */
import { defineScript } from './codec.js';
import { EPOCH_FENCE } from './modules.js';

export interface StillQueuedArgs {
  readonly epochKey: string;
  readonly epochId: string;
  readonly entries: readonly { readonly stream: string; readonly entryId: string }[];
}

export const STILL_QUEUED = defineScript<StillQueuedArgs, boolean[]>({
  name: 'still-queued',
  uses: [EPOCH_FENCE],
  body: `
if epoch_lost(KEYS[1], ARGV[1]) then return epoch_reset() end
local out = {}
for j = 2, #KEYS do
  out[#out + 1] = (#redis.call('XRANGE', KEYS[j], ARGV[j], ARGV[j]) > 0) and 1 or 0
end
return out
`,
  encode: (a) => ({ keys: [a.epochKey, ...a.entries.map((e) => e.stream)], argv: [a.epochId, ...a.entries.map((e) => e.entryId)] }),
  decode: (reply, read) => read.list(reply, 'entries').map((r, i) => read.int(r, `entries[${i}]`) === 1),
});
