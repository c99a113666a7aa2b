/**
 * Lua scripts of the shared queue's reset path (reset.ts): the queue's epoch marker, the renewal of
 * chunks fenced by it, the rebuild of chunks after Redis came back without them, and the check of
 * the chunks an instance accepted. Every key is in the queue's slot (`<p>` carries its hash tag).
 *
 * Keys (`<p>` is the queue's prefix, e.g. `sendpool:{queue}:`):
 *   <p>epoch              the queue's epoch: a random id, created when missing. A script given
 *                         another id than the one it finds (or none) refuses with `RESET`: Redis
 *                         lost the queue since that instance last looked.
 *   <p>rb:<flow>:<entry>  a chunk written again after a reset (kept for a day): the instance that
 *                         accepted it does not write it a second time.
 */

import { renewLua } from './renew-lua.js';

/** Refuses with `RESET …` when the queue's epoch marker is not `ARGV[at]`; a '' id skips the check. */
export function epochFenceLua(epochKey: string, arg: string): string {
  return `
if ${arg} ~= '' and redis.call('GET', ${epochKey}) ~= ${arg} then
  return redis.error_reply('RESET the queue lost its state (its epoch marker is gone or another)')
end
`;
}

/**
 * Reads the queue's epoch marker, creating it when missing.
 * KEYS: [1] the marker. ARGV: [1] the id to create it with.
 * Returns { the marker's id, 1 when this call created it else 0 }.
 */
export const QUEUE_EPOCH_SCRIPT = `
local id = redis.call('GET', KEYS[1])
if id then return { id, 0 } end
redis.call('SET', KEYS[1], ARGV[1])
return { ARGV[1], 1 }
`;

/**
 * Renews the chunks this consumer holds, as RENEW_SCRIPT (queue-scripts.ts), fenced by the epoch: a
 * stream that lost its entries with Redis must not read as "taken over by another" (the contacts
 * would then be sent by nobody).
 * KEYS: [1] a stream, [2] the epoch marker. ARGV: [1] group, [2] this consumer, [3] idle time in ms,
 * [4] the epoch id, then entry ids. Returns the ids this consumer no longer holds.
 */
export const FENCED_RENEW_SCRIPT = `
${epochFenceLua('KEYS[2]', 'ARGV[4]')}
${renewLua(5)}`;

/**
 * Writes chunks again after a reset, fenced by the epoch, each once (`<p>rb:` marks): those an
 * instance holds (`hold` 1: it keeps sending them, so the new entry is made pending under it, with
 * the progress it knows), those it only accepted (`hold` 0: any instance claims them).
 * KEYS: [1] active set, [2] the epoch marker.
 * ARGV: [1] group, [2] this consumer, [3] the epoch id, [4] the lease (ms: undelivered entries read
 *       while making one pending are released at once), [5] the queue's prefix, [6] chunk count n,
 *       then per chunk: stream, its mark (`rb:<flow>:<old entry>`), the progress key's head
 *       (`p:<flow>:`), hold, contacts not final, body, field count f, f pairs (field, value);
 *       then the count of marks only (chunks done, nothing to write) and those marks.
 * Returns per chunk the new entry id, or '' when it was written already (by whoever marked it).
 */
export const REBUILD_SCRIPT = `
${epochFenceLua('KEYS[2]', 'ARGV[3]')}
local group = ARGV[1]
local me = ARGV[2]
local p = ARGV[5]
local out = {}
local at = 7
for j = 1, tonumber(ARGV[6]) do
  local stream = ARGV[at]
  local mark = p .. ARGV[at + 1]
  local head = ARGV[at + 2]
  local hold = ARGV[at + 3] == '1'
  local open = tonumber(ARGV[at + 4])
  local body = ARGV[at + 5]
  local f = tonumber(ARGV[at + 6])
  local first = at + 7
  at = first + 2 * f
  if redis.call('SET', mark, '1', 'NX', 'PX', 86400000) then
    if redis.call('EXISTS', stream) == 0 then
      redis.call('XGROUP', 'CREATE', stream, group, '0', 'MKSTREAM')
    end
    redis.call('SADD', KEYS[1], stream)
    local id = redis.call('XADD', stream, '*', 'b', body)
    redis.call('INCRBY', p .. 'backlog', open)
    if f > 0 then
      local fields = {}
      for q = first, first + 2 * f - 1 do fields[#fields + 1] = ARGV[q] end
      redis.call('HSET', p .. head .. id, unpack(fields))
    end
    if hold then
      -- Pending under this consumer: what XREADGROUP delivers with it (chunks nobody read yet) is
      -- released at once, for whoever takes over idle chunks next.
      local r = redis.call('XREADGROUP', 'GROUP', group, me, 'STREAMS', stream, '>')
      local others = { stream, group, me, '0' }
      for _, s in ipairs(r or {}) do
        for _, e in ipairs(s[2]) do
          if e[1] ~= id then others[#others + 1] = e[1] end
        end
      end
      if #others > 4 then
        others[#others + 1] = 'IDLE'
        others[#others + 1] = ARGV[4]
        others[#others + 1] = 'JUSTID'
        redis.call('XCLAIM', unpack(others))
      end
    end
    out[#out + 1] = id
  else
    out[#out + 1] = ''
  end
end
local marks = tonumber(ARGV[at])
for j = at + 1, at + marks do redis.call('SET', p .. ARGV[j], '1', 'NX', 'PX', 86400000) end
return out
`;

/**
 * Which of the chunks an instance accepted are still in Redis, fenced by the epoch (an empty Redis
 * must not read as "every chunk done").
 * KEYS: [1] the epoch marker. ARGV: [1] the epoch id, then pairs (stream, entry id).
 * Returns per pair 1 when the entry is still there, else 0.
 */
export const RECORD_CHECK_SCRIPT = `
${epochFenceLua('KEYS[1]', 'ARGV[1]')}
local out = {}
for j = 2, #ARGV, 2 do
  local r = redis.call('XRANGE', ARGV[j], ARGV[j + 1], ARGV[j + 1])
  out[#out + 1] = (#r > 0) and 1 or 0
end
return out
`;
