import { NOW_LUA } from './now.js';

/**
 * The epoch script: the fleet's marker of "this Redis still holds what it was told", and the
 * register of numbers whose state is known to exist, so that a Redis that comes back empty (or
 * older) is noticed rather than trusted (docs/scaling.md, "Redis loses its state").
 *
 * The marker is created at first use with a random id. A caller that knew an id and finds none, or
 * another one, has met a Redis that lost its state: the marker then records a loss time, before
 * which the usage of every number is unknown (the lease script takes the windows as fully used
 * then). The register holds, per phone, the latest time an instance saw its state in Redis in this
 * epoch: a number whose state is missing while the register saw it within a state's lifetime was
 * lost (a cluster node that came back empty loses some numbers and not the marker). What was seen
 * before the marker's creation is left out: a lost marker already makes every number count as lost.
 *
 * KEYS (one hash tag, one Redis Cluster slot):
 *   KEYS[1]  marker hash `<prefix>{epoch}`: id, since (Redis ms of creation), lost (loss time)
 *   KEYS[2]  register `<prefix>{epoch}:numbers` (sorted set: phone -> last seen alive, Redis ms)
 * ARGV:
 *   ARGV[1]  time override in ms, or '' to read Redis `TIME`
 *   ARGV[2]  the epoch id the caller knew ('' for none)
 *   ARGV[3]  an id for a new marker (random, from the caller)
 *   ARGV[4]  a state's lifetime in ms: a phone seen alive within it cannot have expired
 *   ARGV[5]  q: how many phones to ask about
 *   ARGV[6 .. 5+q]  phones whose state was missing: lost or new?
 *   ARGV[6+q ..]    pairs phone, time: the caller saw the phone's state alive at that time (Redis ms)
 * Returns: { now, id, since, lost (-1 for none), then per asked phone 1 (lost) or 0 (new) }
 */
export const EPOCH_SCRIPT = `
${NOW_LUA}
local known = ARGV[2]
local life = tonumber(ARGV[4])
local q = tonumber(ARGV[5])
local m = redis.call('HMGET', KEYS[1], 'id', 'since', 'lost')
local id, since, lost = m[1], tonumber(m[2]), tonumber(m[3])
if not id then
  id = ARGV[3]
  since = now
  redis.call('HSET', KEYS[1], 'id', id, 'since', since)
  -- The caller knew a marker: this Redis lost it, and with it the usage before now.
  if known ~= '' then
    lost = now
    redis.call('HSET', KEYS[1], 'lost', lost)
  end
elseif known ~= '' and known ~= id and not lost then
  -- Another instance recreated the marker without knowing the old one: the loss came before it.
  lost = since
  redis.call('HSET', KEYS[1], 'lost', lost)
end
local out = { now, id, since, lost or -1 }
for k = 1, q do
  local s = tonumber(redis.call('ZSCORE', KEYS[2], ARGV[5 + k]))
  if s and now - s < life then out[#out + 1] = 1 else out[#out + 1] = 0 end
end
for k = 6 + q, #ARGV - 1, 2 do
  local seen = tonumber(ARGV[k + 1])
  if seen >= since then redis.call('ZADD', KEYS[2], 'GT', seen, ARGV[k]) end
end
-- Phones not seen for a state's lifetime tell nothing any more.
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - life)
return out
`;
