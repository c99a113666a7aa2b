/**
 * Lua scripts of the shared contact queue (queue.ts). Every key of the queue carries one hash tag,
 * so each script touches one Redis Cluster slot and runs atomically: what a 202 promised (the
 * chunks and their ENQUEUED events) and what a step decided (hand-outs, finals, their
 * notifications, the chunks done, the events delivered) is written whole or not at all.
 *
 * Keys (`<p>` is the prefix with its tag, e.g. `sendpool:{queue}:`):
 *   <p>active             set of the streams that may hold work
 *   <p>s:<flow>           a stream per flow (a campaign of a company, or a request without one);
 *                         an entry is a chunk of contacts, field `b` its JSON body
 *   <p>p:<flow>:<entry>   a chunk's progress hash: `h<i>` hand-outs of contact i written before it
 *                         went to the channel, `e<i>` hand-outs whose attempt ended without a
 *                         final (a retry to come), `f<i>` its final state
 *   <p>outbox             stream of webhook events, written with the step that made them
 *   <p>instances          sorted set of the live instances (score: when each one's heartbeat
 *                         lapses), counted for the fair share of the backlog (queue.ts)
 */
import { CAMPAIGN_LUA } from '../../redis/scripts/campaign.js';
import { DEAD_LETTER_LUA } from './dead-letter-lua.js';
import { MEMORY_WRITE_LUA } from './shared-memory.js';
import { renewLua } from './renew-lua.js';
import { epochFenceLua } from './reset-scripts.js';

/**
 * One step of an instance, whole or not at all: chunks enqueued (a 202's contacts), hand-outs and
 * finals recorded, webhook events written, chunks that are done acknowledged and deleted with their
 * progress (a stream left empty leaves the active set), events delivered acknowledged and deleted.
 * Progress is recorded only for chunks this consumer still holds: a chunk another instance took
 * over (this one stalled past the lease) is the new holder's to finish, so a contact gets one final.
 * KEYS: [1] active set, [2] outbox stream, [3] SMS stream, then the streams and progress hashes
 *       named below.
 * ARGV: [1] dispatch group, [2] outbox group, [3] this consumer, [4] the step's id (a step sent
 *       again after a lost reply is not applied twice: its id is remembered for an hour),
 *       [5] the queue's epoch id as the instance knows it ('' before its first look): another
 *       marker, or none, refuses the whole step with `RESET` (reset.ts),
 *       [6] the count of requests the step commits (a 202's: their chunks, events and reports are
 *       in the step), [7] how long their commit marks `<p>req:<request>` are kept (ms), [8] how long
 *       an idempotency record is kept (ms), then a triple per request: its id, its idempotency
 *       record's key ('' for none) and the answer to keep there (shared-phones.ts, idempotency.ts),
 *       then chunk count n, then n triples (stream key index, body, contacts in it),
 *       then the count of chunks with progress, and for each: stream key index, entry id,
 *       progress key index, done (1 or 0), its contacts, field count f, then f pairs (field, value), event
 *       count v, then v events (the notifications of its contacts: written only while held),
 *       then delivered count k and k outbox entry ids,
 *       then SMS count q and q SMS (JSON: accepted, to be sent by any instance),
 *       then answered count a and a SMS entry ids (the gateway answered them),
 *       then statistics count r, how long a finished campaign keeps its contacts' states (ms), the
 *       step's time (ms, a new campaign's creation), and r reports of six: company, campaign,
 *       contact (or a range's name), op, a3, a4 (CAMPAIGN_LUA's `campaign_report`, contacts known),
 *       then the count m of memory entries, the entries a generation holds, and m pairs (key,
 *       value; '' deletes) for the shared memory (shared-memory.ts),
 *       then the count d of dead letters, the most kept per company, the oldest time kept (ms),
 *       and d groups of five: company, event id, time, family, the dead letter's JSON
 *       (shared-dead-letters.ts; written with the step that acknowledges their events),
 *       then the events' JSON.
 * `<p>st:c<company>:{camp:<id>}:…` are the campaign statistics of shared-statistics.ts.
 * `<p>backlog` counts the contacts of the chunks not done (the intake bound of every instance).
 * Returns { entry ids of the chunks enqueued, entry ids of the chunks no longer held }, or, when a
 * request of the step was voided (nothing is written then), { {}, {}, the requests voided }.
 */
export const STEP_SCRIPT = `
${CAMPAIGN_LUA}
${DEAD_LETTER_LUA}
${epochFenceLua("string.sub(KEYS[1], 1, string.len(KEYS[1]) - 6) .. 'epoch'", 'ARGV[5]')}
local group = ARGV[1]
local me = ARGV[3]
local root = string.sub(KEYS[1], 1, string.len(KEYS[1]) - 6)
-- The fence: a request another voided (it took over its phones, shared-phones.ts) is never
-- committed; the step is refused whole, for the instance to write it again without it.
local requests = tonumber(ARGV[6])
local voided = {}
for j = 0, requests - 1 do
  if redis.call('GET', root .. 'req:' .. ARGV[9 + 3 * j]) == 'void' then voided[#voided + 1] = ARGV[9 + 3 * j] end
end
if #voided > 0 then return { {}, {}, voided } end
local applied = root .. 'step:' .. ARGV[4]
if not redis.call('SET', applied, '1', 'NX', 'PX', 3600000) then
  return { {}, {} }
end
-- Each request's commit mark, and its idempotency record's first answer (idempotency.ts) when it
-- has a key (unless another request holds the key).
for j = 0, requests - 1 do
  local id = ARGV[9 + 3 * j]
  redis.call('SET', root .. 'req:' .. id, '1', 'PX', ARGV[7])
  local key = ARGV[10 + 3 * j]
  if key ~= '' then
    local owner = redis.call('HGET', key, 'req')
    if owner == false or owner == id then
      redis.call('HSET', key, 'req', id, 'ans', ARGV[11 + 3 * j])
      redis.call('PEXPIRE', key, ARGV[8])
    end
  end
end
local backlog = root .. 'backlog'
local at = 9 + 3 * requests
local n = tonumber(ARGV[at])
at = at + 1
local ids = {}
for j = 1, n do
  local stream = KEYS[tonumber(ARGV[at])]
  if redis.call('EXISTS', stream) == 0 then
    redis.call('XGROUP', 'CREATE', stream, group, '0', 'MKSTREAM')
  end
  redis.call('SADD', KEYS[1], stream)
  ids[#ids + 1] = redis.call('XADD', stream, '*', 'b', ARGV[at + 1])
  redis.call('INCRBY', backlog, ARGV[at + 2])
  at = at + 3
end
local lost = {}
local c = tonumber(ARGV[at])
at = at + 1
for j = 1, c do
  local stream = KEYS[tonumber(ARGV[at])]
  local id = ARGV[at + 1]
  local progress = KEYS[tonumber(ARGV[at + 2])]
  local done = ARGV[at + 3] == '1'
  local size = tonumber(ARGV[at + 4])
  local f = tonumber(ARGV[at + 5])
  local first = at + 6
  local v = tonumber(ARGV[first + 2 * f])
  local firstEvent = first + 2 * f + 1
  at = firstEvent + v
  local held = false
  if redis.call('EXISTS', stream) == 1 then
    local p = redis.call('XPENDING', stream, group, id, id, 1)
    held = p[1] ~= nil and p[1][2] == me
  end
  if not held then
    lost[#lost + 1] = id
  else
    if v > 0 and redis.call('EXISTS', KEYS[2]) == 0 then
      redis.call('XGROUP', 'CREATE', KEYS[2], ARGV[2], '0', 'MKSTREAM')
    end
    for q = firstEvent, firstEvent + v - 1 do redis.call('XADD', KEYS[2], '*', 'e', ARGV[q]) end
  end
  if not held then
  elseif done then
    redis.call('DECRBY', backlog, size)
    redis.call('XACK', stream, group, id)
    redis.call('XDEL', stream, id)
    redis.call('DEL', progress)
    if redis.call('XLEN', stream) == 0 then
      local pending = redis.call('XPENDING', stream, group)
      if tonumber(pending[1]) == 0 then
        redis.call('DEL', stream)
        redis.call('SREM', KEYS[1], stream)
      end
    end
  elseif f > 0 then
    local fields = {}
    for q = first, first + 2 * f - 1 do fields[#fields + 1] = ARGV[q] end
    redis.call('HSET', progress, unpack(fields))
  end
end
local k = tonumber(ARGV[at])
at = at + 1
for j = 1, k do
  redis.call('XACK', KEYS[2], ARGV[2], ARGV[at])
  redis.call('XDEL', KEYS[2], ARGV[at])
  at = at + 1
end
local q = tonumber(ARGV[at])
at = at + 1
if q > 0 and redis.call('EXISTS', KEYS[3]) == 0 then
  redis.call('XGROUP', 'CREATE', KEYS[3], 'sms', '0', 'MKSTREAM')
end
for j = 1, q do
  redis.call('XADD', KEYS[3], '*', 'e', ARGV[at])
  at = at + 1
end
local a = tonumber(ARGV[at])
at = at + 1
for j = 1, a do
  redis.call('XACK', KEYS[3], 'sms', ARGV[at])
  redis.call('XDEL', KEYS[3], ARGV[at])
  at = at + 1
end
local r = tonumber(ARGV[at])
local retain = ARGV[at + 1]
local created = ARGV[at + 2]
at = at + 3
local statsRoot = string.sub(KEYS[1], 1, string.len(KEYS[1]) - 6) .. 'st:'
local accs = {}
for j = 1, r do
  local prefix = statsRoot .. 'c' .. ARGV[at] .. ':'
  local base = prefix .. '{camp:' .. ARGV[at + 1] .. '}:'
  local acc = accs[base]
  if acc == nil then
    acc = campaign_acc()
    accs[base] = acc
    if redis.call('HSETNX', base .. 'meta', 'createdAt', created) == 1 then
      redis.call('HSETNX', base .. 'meta', 'name', 'campaign ' .. ARGV[at + 1])
      redis.call('SADD', prefix .. 'campaigns', ARGV[at + 1])
    end
  end
  campaign_report(acc, base .. 'contacts', base .. 'counts', base .. 'dirty', base .. 'live', base .. 'ranges', base .. 'window', ARGV[at + 2], ARGV[at + 3], ARGV[at + 4], ARGV[at + 5], '1')
  at = at + 6
end
for _, acc in pairs(accs) do campaign_finish(acc, retain) end
local m = tonumber(ARGV[at])
local generation = tonumber(ARGV[at + 1])
at = at + 2
if m > 0 then
  ${MEMORY_WRITE_LUA}
  memory_write(statsRoot:sub(1, -4) .. 'mem:', generation, at, m)
  at = at + 2 * m
end
local dl = tonumber(ARGV[at])
local dlKeep = tonumber(ARGV[at + 1])
local dlOldest = ARGV[at + 2]
at = at + 3
for j = 1, dl do
  dl_add(statsRoot:sub(1, -4) .. 'dl:', ARGV[at], ARGV[at + 1], ARGV[at + 2], ARGV[at + 3], ARGV[at + 4], dlKeep, dlOldest)
  at = at + 5
end
if at <= #ARGV and redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('XGROUP', 'CREATE', KEYS[2], ARGV[2], '0', 'MKSTREAM')
end
for j = at, #ARGV do
  redis.call('XADD', KEYS[2], '*', 'e', ARGV[j])
end
return { ids, lost }
`;

/**
 * Takes over chunks whose holder went quiet: entries pending longer than the lease, from any
 * consumer (a holder alive renews its entries well within it), with their progress.
 * KEYS: [1..n] streams.
 * ARGV: [1] group, [2] this consumer, [3] lease in ms, [4] most entries, [5] the key prefix, or ''
 *       for entries without progress (the outbox's events).
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
      out[#out + 1] = KEYS[i]
      out[#out + 1] = e[1]
      out[#out + 1] = e[2][2]
      if ARGV[5] == '' then
        out[#out + 1] = {}
      else
        local flow = string.sub(KEYS[i], string.len(ARGV[5]) + 3)
        out[#out + 1] = redis.call('HGETALL', ARGV[5] .. 'p:' .. flow .. ':' .. e[1])
      end
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
 * Renews the entries this consumer still holds (sets their idle time to ARGV[3]: 0 renews them, so
 * nobody takes them over; the lease releases them, so the next instance that looks takes them);
 * an entry another consumer took meanwhile is not taken back.
 * KEYS: [1] a stream. ARGV: [1] group, [2] this consumer, [3] idle time in ms, then entry ids.
 * Returns the ids this consumer no longer holds.
 */
export const RENEW_SCRIPT = renewLua(4);
