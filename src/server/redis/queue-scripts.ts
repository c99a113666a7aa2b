/**
 * Lua scripts of the shared contact queue (queue.ts). Every key of the queue carries one hash tag,
 * so each script touches one Redis Cluster slot and runs atomically: what a 202 promised (the
 * chunks and their ENQUEUED events), what a step decided (hand-outs, finals, their notifications,
 * the chunks done) is written whole or not at all.
 *
 * Keys (`<p>` is the prefix with its tag, e.g. `sendpool:{queue}:`):
 *   <p>active             set of the streams that may hold work
 *   <p>s:<flow>           a stream per flow (a campaign of a company, or a request without one);
 *                         an entry is a chunk of contacts, field `b` its JSON body
 *   <p>p:<flow>:<entry>   a chunk's progress hash: `h<i>` hand-outs of contact i written before it
 *                         went to the channel, `e<i>` hand-outs whose attempt ended without a
 *                         final (a retry to come), `f<i>` its final state
 *   <p>outbox             stream of webhook events, written with the step that made them
 */

/**
 * Enqueues chunks (and the events that announce them) at once.
 * KEYS: [1] active set, [2] outbox stream, [3..] the chunks' streams (each once).
 * ARGV: [1] dispatch group, [2] outbox group, [3] chunk count n, then n pairs (stream index in
 *       KEYS from 3, body), then the events' JSON.
 * Returns the chunks' entry ids.
 */
export const ENQUEUE_SCRIPT = `
local group = ARGV[1]
for i = 3, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 0 then
    redis.call('XGROUP', 'CREATE', KEYS[i], group, '0', 'MKSTREAM')
  end
  redis.call('SADD', KEYS[1], KEYS[i])
end
local n = tonumber(ARGV[3])
local ids = {}
for j = 0, n - 1 do
  local at = 4 + 2 * j
  ids[#ids + 1] = redis.call('XADD', KEYS[tonumber(ARGV[at]) + 2], '*', 'b', ARGV[at + 1])
end
local first = 4 + 2 * n
if first <= #ARGV and redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('XGROUP', 'CREATE', KEYS[2], ARGV[2], '0', 'MKSTREAM')
end
for j = first, #ARGV do
  redis.call('XADD', KEYS[2], '*', 'e', ARGV[j])
end
return ids
`;

/**
 * One step of an instance: hand-outs and finals recorded, events written, chunks that are done
 * acknowledged and deleted with their progress; a stream left empty leaves the active set.
 * KEYS: [1] active set, [2] outbox stream, then the streams and progress hashes named below.
 * ARGV: [1] dispatch group, [2] outbox group, [3] marks count m, then m triples (progress key
 *       index, field, value), then [..] done count d and d triples (stream key index, entry id,
 *       progress key index), then the events' JSON.
 * Returns the number of streams removed.
 */
export const STEP_SCRIPT = `
local group = ARGV[1]
local m = tonumber(ARGV[3])
local at = 4
for j = 1, m do
  redis.call('HSET', KEYS[tonumber(ARGV[at])], ARGV[at + 1], ARGV[at + 2])
  at = at + 3
end
local d = tonumber(ARGV[at])
at = at + 1
local removed = 0
for j = 1, d do
  local stream = KEYS[tonumber(ARGV[at])]
  redis.call('XACK', stream, group, ARGV[at + 1])
  redis.call('XDEL', stream, ARGV[at + 1])
  redis.call('DEL', KEYS[tonumber(ARGV[at + 2])])
  if redis.call('XLEN', stream) == 0 then
    local pending = redis.call('XPENDING', stream, group)
    if tonumber(pending[1]) == 0 then
      redis.call('DEL', stream)
      redis.call('SREM', KEYS[1], stream)
      removed = removed + 1
    end
  end
  at = at + 3
end
if at <= #ARGV and redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('XGROUP', 'CREATE', KEYS[2], ARGV[2], '0', 'MKSTREAM')
end
for j = at, #ARGV do
  redis.call('XADD', KEYS[2], '*', 'e', ARGV[j])
end
return removed
`;

/**
 * Takes over chunks whose holder went quiet: entries pending longer than the lease, from any
 * consumer (a holder alive renews its entries well within it), with their progress.
 * KEYS: [1..n] streams.
 * ARGV: [1] group, [2] this consumer, [3] lease in ms, [4] most entries, [5] progress prefix.
 * Returns a flat list: stream, entry id, body, progress (a flat field/value list), … Entries
 * deleted meanwhile are acknowledged and skipped.
 */
export const RECLAIM_SCRIPT = `
local out = {}
local left = tonumber(ARGV[4])
for i = 1, #KEYS do
  if left <= 0 then break end
  if redis.call('EXISTS', KEYS[i]) == 1 then
    local r = redis.call('XAUTOCLAIM', KEYS[i], ARGV[1], ARGV[2], ARGV[3], '0-0', 'COUNT', left)
    for _, e in ipairs(r[2]) do
      local flow = string.sub(KEYS[i], string.len(ARGV[5]) + 3)
      out[#out + 1] = KEYS[i]
      out[#out + 1] = e[1]
      out[#out + 1] = e[2][2]
      out[#out + 1] = redis.call('HGETALL', ARGV[5] .. 'p:' .. flow .. ':' .. e[1])
      left = left - 1
    end
    for _, id in ipairs(r[3] or {}) do
      redis.call('XACK', KEYS[i], ARGV[1], id)
    end
  end
end
return out
`;

/**
 * Renews the entries this consumer still holds (resets their idle time, so nobody takes them over);
 * an entry another consumer took meanwhile is not taken back.
 * KEYS: [1] a stream. ARGV: [1] group, [2] this consumer, then entry ids.
 * Returns the ids this consumer no longer holds.
 */
export const RENEW_SCRIPT = `
local lost = {}
local claim = { KEYS[1], ARGV[1], ARGV[2], '0' }
for j = 3, #ARGV do
  local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[j], ARGV[j], 1)
  if p[1] and p[1][2] == ARGV[2] then claim[#claim + 1] = ARGV[j] else lost[#lost + 1] = ARGV[j] end
end
if #claim > 4 then
  claim[#claim + 1] = 'JUSTID'
  redis.call('XCLAIM', unpack(claim))
end
return lost
`;
