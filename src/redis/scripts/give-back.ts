import { NOW_LUA } from './now.js';

/**
 * The give-back script: returns tokens of a lease that were never handed out (on shutdown, or when
 * a number leaves this instance). Idempotent: the caller sends the lease's cumulative returned
 * total, so a retried call returns nothing twice.
 *
 * KEYS:
 *   KEYS[1]  state hash of the number: `<prefix>{<phone>}:s`
 *   KEYS[2]  lease record: `<prefix>{<phone>}:l:<leaseId>`
 * ARGV:
 *   ARGV[1]  time override in ms, or '' to read Redis `TIME`
 *   ARGV[2]  lease time-to-live in ms
 *   ARGV[3]  the lease's total returned so far, this call included
 *   ARGV[4]  lease id
 *   ARGV[5]  the fleet's epoch id ('' to skip the check)
 *   ARGV[6]  the caller's instance id: its record of unspent tokens (the lease script's `hd`) is
 *            dropped, since it gives them all back; '' to keep it
 *   ARGV[7]  '1' when the lease expired at the caller with these tokens unspent (they can never be
 *            spent): the 24 h counter gets them back even after the lease's lifetime; else ''
 * Returns: tokens given back by this call.
 *
 * Rules (docs/decisions.md (many instances on Redis), "Expiry model"):
 * - an expired lease (now >= grantedAt + ttl) gives nothing back to the rate windows (they refill
 *   within the hour); to the 24 h counter only when its holder says the tokens expired unspent
 *   (ARGV[7]), which would otherwise stay charged for a day; a lease whose record is gone gives
 *   nothing back, nor does a lease of a state that is gone or of another epoch (Redis lost it:
 *   nothing to give back to);
 * - the 24 h counter gets the tokens back in the bucket the lease charged;
 * - the rate windows get them back only when this lease is the number's latest charge, where the
 *   give-back is the exact inverse of the charge. After someone else charged, a give-back could
 *   admit more than the limit (GCRA clips at now), so the tokens refill with time instead.
 */
export const GIVE_BACK_SCRIPT = `
local HOUR = 3600000
local SECOND = 1000
${NOW_LUA}
local ttl = tonumber(ARGV[2])
local target = tonumber(ARGV[3])
local leaseId = ARGV[4]
local sk = KEYS[1]
local lk = KEYS[2]
-- The caller gives back all it holds for the number: others no longer count it.
if ARGV[6] and ARGV[6] ~= '' then
  local raw = redis.call('HGET', KEYS[1], 'hd')
  if raw then
    local hd = cjson.decode(raw)
    if hd[ARGV[6]] ~= nil then
      hd[ARGV[6]] = nil
      if next(hd) == nil then redis.call('HDEL', KEYS[1], 'hd') else redis.call('HSET', KEYS[1], 'hd', cjson.encode(hd)) end
    end
  end
end
local rec = redis.call('HMGET', lk, 'g', 'a', 'b', 'r')
if not rec[1] then return 0 end
local g = tonumber(rec[1])
local a = tonumber(rec[2])
local b = rec[3]
local r = tonumber(rec[4])
local f = redis.call('HMGET', sk, 'ht', 'hr', 'hc', 'st', 'sr', 'sc', 'ds', 't', 'last', 'ep')
if not f[8] then return 0 end
if ARGV[5] and ARGV[5] ~= '' and f[10] and f[10] ~= ARGV[5] then return 0 end
local t = now
local seen = tonumber(f[8]) or 0
if seen > t then t = seen end
local expired = t >= a + ttl
if expired and ARGV[7] ~= '1' then return 0 end
if target > g then target = g end
local delta = target - r
if delta <= 0 then return 0 end
local c = tonumber(redis.call('HGET', sk, 'd' .. b))
if c then
  local dec = delta
  if c < dec then dec = c end
  redis.call('HINCRBY', sk, 'd' .. b, -dec)
  redis.call('HSET', sk, 'ds', (tonumber(f[7]) or 0) - dec)
end
if f[9] == leaseId and not expired then
  local function back(tat, rem, cap, period, n)
    local numer = rem - n * period
    local whole = math.floor(numer / cap)
    return tat + whole, numer - whole * cap
  end
  local hc = tonumber(f[3])
  if hc and hc > 0 then
    local ht, hr = back(tonumber(f[1]), tonumber(f[2]), hc, HOUR, delta)
    redis.call('HSET', sk, 'ht', ht, 'hr', hr)
  end
  local sc = tonumber(f[6])
  if sc and sc > 0 then
    local st, sr = back(tonumber(f[4]), tonumber(f[5]), sc, SECOND, delta)
    redis.call('HSET', sk, 'st', st, 'sr', sr)
  end
end
redis.call('HSET', lk, 'r', target)
return delta
`;
