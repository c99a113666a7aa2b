/**
 * Renews the webhook events or SMS an instance holds (or releases them: an idle time of the lease
 * lets the next instance that looks take them over); an entry another consumer took meanwhile is
 * not taken back. Not fenced by the epoch: after a reset the instance forgets what it held there.
 * KEYS: [1] the stream.
 * ARGV: [1] the group, [2] this consumer, [3] the idle time to set (ms: 0 renews), then entry ids.
 * Reply: the ids this consumer no longer holds.
 */
import { defineScript } from './codec.js';
import { RENEW_HELD } from './modules.js';

export interface RenewArgs {
  readonly stream: string;
  readonly group: string;
  readonly consumer: string;
  /** 0 renews; the lease releases. */
  readonly idleMs: number;
  readonly entryIds: readonly string[];
}

export const RENEW_WORK = defineScript<RenewArgs, string[]>({
  name: 'renew-work',
  uses: [RENEW_HELD],
  body: `
local ids = {}
for j = 4, #ARGV do ids[#ids + 1] = ARGV[j] end
return renew_held(KEYS[1], ARGV[1], ARGV[2], ARGV[3], ids)
`,
  encode: (a) => ({ keys: [a.stream], argv: [a.group, a.consumer, a.idleMs, ...a.entryIds] }),
  decode: (reply, read) => read.texts(reply, 'entries lost'),
});
