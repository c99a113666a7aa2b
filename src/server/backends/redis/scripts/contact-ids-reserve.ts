/**
 * Reserves a block of contact ids from the counter every instance shares (contact-ids.ts); a
 * counter that is not there (a new Redis, or one that lost its data) starts at the floor first.
 * KEYS: [1] the counter.
 * ARGV: [1] the ids to reserve, [2] the floor a missing counter starts at.
 * Reply: the last id reserved.
 */
import { defineScript } from './codec.js';

export interface ContactIdsReserveArgs {
  readonly counter: string;
  readonly count: number;
  /** Where a missing counter starts (the block reserved is above it). */
  readonly floor: number;
}

export const CONTACT_IDS_RESERVE = defineScript<ContactIdsReserveArgs, number>({
  name: 'contact-ids-reserve',
  body: `
local by = tonumber(ARGV[1])
if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('SET', KEYS[1], ARGV[2]) end
return redis.call('INCRBY', KEYS[1], by)
`,
  encode: (a) => ({ keys: [a.counter], argv: [a.count, a.floor] }),
  decode: (reply, read) => read.int(reply, 'last id'),
});
