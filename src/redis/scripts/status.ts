/**
 * The status script: records a status change of a number or template for the whole fleet and
 * announces it, atomically, under a fleet-wide sequence number (last writer wins, by Redis' order).
 *
 * KEYS:
 *   KEYS[1]  status hash `<prefix>status`: field `n:<phone>` or `t:<templateId>` -> JSON change
 *   KEYS[2]  sequence counter `<prefix>status:seq`
 * ARGV:
 *   ARGV[1]  field
 *   ARGV[2]  the change as JSON without `seq` (a JSON object, inserted as is)
 *   ARGV[3]  pub/sub channel
 * Returns: the change's sequence number.
 */
export const STATUS_SCRIPT = `
local seq = redis.call('INCR', KEYS[2])
local body = '{"seq":' .. seq .. ',' .. string.sub(ARGV[2], 2)
redis.call('HSET', KEYS[1], ARGV[1], body)
redis.call('PUBLISH', ARGV[3], body)
return seq
`;

/**
 * The heartbeat script: this instance is alive; answers how many instances are.
 *
 * KEYS:
 *   KEYS[1]  sorted set `<prefix>instances`: member instance id, score last heartbeat (Redis ms)
 * ARGV:
 *   ARGV[1]  instance id
 *   ARGV[2]  an instance counts as alive this many ms after its last heartbeat
 * Returns: the number of live instances.
 */
export const HEARTBEAT_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[2]))
return redis.call('ZCARD', KEYS[1])
`;
