/**
 * The Lua modules the queue's scripts share (lua.ts): each a set of functions, included by the
 * scripts that name it. Every key they touch is in the queue's slot (`<p>` carries its hash tag).
 */
import { CAMPAIGN_LUA } from '../../../../redis/scripts/campaign.js';
import { luaModule } from './lua.js';

/**
 * The queue's epoch marker (reset.ts): `epoch_lost(key, id)` is true when the marker is not `id`
 * (an '' id skips the check); a script then answers `epoch_reset()`: the `RESET` refusal the
 * instance handles (Redis lost the queue since it last looked).
 */
export const EPOCH_FENCE = luaModule(
  'epoch fence',
  `
local function epoch_lost(key, id)
  return id ~= '' and redis.call('GET', key) ~= id
end
local function epoch_reset()
  return redis.error_reply('RESET the queue lost its state (its epoch marker is gone or another)')
end
`,
);

/** `stream_group(stream, group)` creates a stream with its consumer group when the stream does not exist. */
export const STREAM_GROUP = luaModule(
  'stream group',
  `
local function stream_group(stream, group)
  if redis.call('EXISTS', stream) == 0 then redis.call('XGROUP', 'CREATE', stream, group, '0', 'MKSTREAM') end
end
`,
);

/**
 * `renew_held(stream, group, consumer, idle, ids)` sets the idle time of the entries `consumer`
 * still holds (0 renews them; the lease releases them) and answers those another consumer took
 * meanwhile (not taken back).
 */
export const RENEW_HELD = luaModule(
  'renew held',
  `
local function renew_held(stream, group, consumer, idle, ids)
  local lost = {}
  local claim = { stream, group, consumer, '0' }
  for _, id in ipairs(ids) do
    local p = redis.call('XPENDING', stream, group, id, id, 1)
    if p[1] and p[1][2] == consumer then claim[#claim + 1] = id else lost[#lost + 1] = id end
  end
  if #claim > 4 then
    claim[#claim + 1] = 'IDLE'
    claim[#claim + 1] = idle
    claim[#claim + 1] = 'JUSTID'
    redis.call('XCLAIM', unpack(claim))
  end
  return lost
end
`,
);

/**
 * The dead letters' functions (`root` is `<p>dl:`, keys in shared-dead-letters.ts): `dl_drop(root,
 * id)` removes one (answers its JSON or false), `dl_add(root, company, id, score, family, json, keep,
 * oldest)` keeps one and applies the company's bounds, `dl_prune(root, oldest)` drops every one older.
 */
export const DEAD_LETTERS = luaModule(
  'dead letters',
  `
local function dl_drop(root, id)
  local json = redis.call('HGET', root .. 'h', id)
  if not json then return false end
  local d = cjson.decode(json)
  redis.call('HDEL', root .. 'h', id)
  redis.call('ZREM', root .. 't', id)
  redis.call('ZREM', root .. 't:' .. tostring(d.event.companyId), id)
  redis.call('ZREM', root .. 'q', id)
  redis.call('ZREM', root .. 'q:' .. tostring(d.event.companyId), id)
  if redis.call('HINCRBY', root .. 'n', d.event.family, -1) <= 0 then
    redis.call('HDEL', root .. 'n', d.event.family)
  end
  return json
end
local function dl_add(root, company, id, score, family, json, keep, oldest)
  dl_drop(root, id)
  local zc = root .. 't:' .. company
  redis.call('HSET', root .. 'h', id, json)
  redis.call('ZADD', root .. 't', score, id)
  redis.call('ZADD', zc, score, id)
  local seq = redis.call('INCR', root .. 'seq')
  redis.call('ZADD', root .. 'q', seq, id)
  redis.call('ZADD', root .. 'q:' .. company, seq, id)
  redis.call('HINCRBY', root .. 'n', family, 1)
  for _, old in ipairs(redis.call('ZRANGEBYSCORE', zc, '-inf', '(' .. oldest)) do dl_drop(root, old) end
  local extra = redis.call('ZCARD', zc) - keep
  if extra > 0 then
    for _, old in ipairs(redis.call('ZRANGE', zc, 0, extra - 1)) do dl_drop(root, old) end
  end
end
local function dl_prune(root, oldest)
  for _, old in ipairs(redis.call('ZRANGEBYSCORE', root .. 't', '-inf', '(' .. oldest)) do dl_drop(root, old) end
end
`,
);

/**
 * The campaign statistics' join (`campaign_acc`, `campaign_report`, `campaign_finish`:
 * src/redis/scripts/campaign.ts).
 */
export const CAMPAIGN_REPORTS = luaModule('campaign reports', CAMPAIGN_LUA);

/**
 * The shared memory's write (shared-memory.ts): `memory_write(root, generation, first, count)`
 * writes `count` key, value pairs from ARGV[first] on into the newest generation of `root` (`<p>mem:`,
 * its entry counter `<p>mem:n`), a generation holding `generation` entries; a write that starts a
 * generation drops the one two back.
 */
export const MEMORY_WRITE = luaModule(
  'memory write',
  `
local function memory_write(root, generation, first, count)
  local n = redis.call('INCRBY', root .. 'n', count)
  local g = math.floor(n / generation)
  local old = math.floor((n - count) / generation)
  -- Generations that fell two behind are dropped (a large step may pass more than one).
  for d = math.max(old - 1, g - 3), g - 2 do
    if d >= 0 then redis.call('DEL', root .. d) end
  end
  local fields = {}
  for j = first, first + 2 * count - 1 do
    fields[#fields + 1] = ARGV[j]
    -- HSET in slices: Lua's unpack has a limit on the values it spreads.
    if #fields == 1000 then redis.call('HSET', root .. g, unpack(fields)); fields = {} end
  end
  if #fields > 0 then redis.call('HSET', root .. g, unpack(fields)) end
end
`,
);
