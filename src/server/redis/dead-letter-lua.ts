/**
 * The dead letters' Lua functions, inlined by the scripts that keep or drop dead letters: the
 * shared dead letters' own (shared-dead-letters.ts) and the queue's step (queue-scripts.ts).
 */

/**
 * Lua functions over the dead-letter keys (`root` is `<p>dl:`): `dl_drop(root, id)` removes one
 * (answers its JSON or false), `dl_add(root, company, id, score, family, json, keep, oldest)` keeps
 * one and applies the company's bounds, `dl_prune(root, oldest)` drops every one older.
 */
export const DEAD_LETTER_LUA = `
local function dl_drop(root, id)
  local json = redis.call('HGET', root .. 'h', id)
  if not json then return false end
  local d = cjson.decode(json)
  redis.call('HDEL', root .. 'h', id)
  redis.call('ZREM', root .. 't', id)
  redis.call('ZREM', root .. 't:' .. tostring(d.event.companyId), id)
  redis.call('ZREM', root .. 'q', id)
  redis.call('ZREM', root .. 'q:' .. tostring(d.event.companyId), id)
  if redis.call('HINCRBY', root .. 'n', d.event.family, -1) <= 0 then redis.call('HDEL', root .. 'n', d.event.family) end
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
`;
