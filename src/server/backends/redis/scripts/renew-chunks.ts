/**
 * Renews the chunks an instance holds in one stream, as renew-work.ts, fenced by the queue's epoch:
 * a stream that lost its entries with Redis must not read as "taken over by another" (the contacts
 * would then be sent by nobody); the instance handles the `RESET` refusal (reset.ts).
 * KEYS: [1] the stream, [2] the epoch marker `<p>epoch`.
 * ARGV: [1] the group, [2] this consumer, [3] the idle time to set (ms: 0 renews), [4] the epoch id
 *       ('' skips the check), then entry ids.
 * Reply: the ids this consumer no longer holds.
 */
import { defineScript } from './codec.js';
import { EPOCH_FENCE, RENEW_HELD } from './modules.js';
import type { RenewArgs } from './renew-work.js';

export interface RenewChunksArgs extends RenewArgs {
  readonly epochKey: string;
  readonly epochId: string;
}

export const RENEW_CHUNKS = defineScript<RenewChunksArgs, string[]>({
  name: 'renew-chunks',
  uses: [EPOCH_FENCE, RENEW_HELD],
  body: `
if epoch_lost(KEYS[2], ARGV[4]) then return epoch_reset() end
local ids = {}
for j = 5, #ARGV do ids[#ids + 1] = ARGV[j] end
return renew_held(KEYS[1], ARGV[1], ARGV[2], ARGV[3], ids)
`,
  encode: (a) => ({ keys: [a.stream, a.epochKey], argv: [a.group, a.consumer, a.idleMs, a.epochId, ...a.entryIds] }),
  decode: (reply, read) => read.texts(reply, 'chunks lost'),
});
