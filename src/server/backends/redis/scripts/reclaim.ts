/**
 * Takes over entries whose holder went quiet: those pending longer than the lease, from any
 * consumer (a holder alive renews its entries well within it), with a chunk's progress. Entries
 * deleted meanwhile are acknowledged and skipped.
 * KEYS: [1..n] the streams.
 * ARGV: [1] the group, [2] this consumer, [3] the lease (ms), [4] the most entries taken,
 *       [5] the queue's prefix to read chunks' progress hashes (`<p>p:<flow>:<entry>`), or '' for
 *       entries without progress (webhook events, SMS).
 * Reply: one { stream, entry id, its first field's value (the body), progress as HGETALL answers } per entry.
 */
import { defineScript } from './codec.js';
import type { Pair } from './sections.js';

export interface ReclaimArgs {
  readonly streams: readonly string[];
  readonly group: string;
  readonly consumer: string;
  readonly leaseMs: number;
  readonly max: number;
  /** The queue's prefix, to read each chunk's progress; undefined for entries without progress. */
  readonly progressPrefix?: string;
}

export interface ReclaimedEntry {
  readonly stream: string;
  readonly entryId: string;
  /** The entry's value (a chunk's JSON body, an event, an SMS). */
  readonly body: string;
  /** A chunk's progress fields (`h<i>`, `e<i>`, `f<i>`); none without a progress prefix. */
  readonly progress: readonly Pair[];
}

export const RECLAIM = defineScript<ReclaimArgs, ReclaimedEntry[]>({
  name: 'reclaim',
  body: `
local out = {}
local left = tonumber(ARGV[4])
for i = 1, #KEYS do
  if left <= 0 then break end
  if redis.call('EXISTS', KEYS[i]) == 1 then
    local r = redis.call('XAUTOCLAIM', KEYS[i], ARGV[1], ARGV[2], ARGV[3], '0-0', 'COUNT', left)
    for _, e in ipairs(r[2]) do
      local progress = {}
      if ARGV[5] ~= '' then
        local flow = string.sub(KEYS[i], string.len(ARGV[5]) + 3)
        progress = redis.call('HGETALL', ARGV[5] .. 'p:' .. flow .. ':' .. e[1])
      end
      out[#out + 1] = { KEYS[i], e[1], e[2][2], progress }
      left = left - 1
    end
    for _, id in ipairs(r[3] or {}) do
      redis.call('XACK', KEYS[i], ARGV[1], id)
    end
  end
end
return out
`,
  encode: (a) => ({ keys: a.streams, argv: [a.group, a.consumer, a.leaseMs, a.max, a.progressPrefix ?? ''] }),
  decode: (reply, read) =>
    read.tuples(reply, 4, 'entries').map(([stream, entryId, body, progress], i) => ({
      stream: read.text(stream, `entries[${i}].stream`),
      entryId: read.text(entryId, `entries[${i}].entryId`),
      body: read.text(body, `entries[${i}].body`),
      progress: read.pairs(progress, `entries[${i}].progress`),
    })),
});
