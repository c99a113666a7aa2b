import { NOW_LUA } from './now.js';

/**
 * The lease script: charges a batch of tokens for one or more numbers, every window of a number at
 * once (GCRA per hour and per second, a bucketed counter for the rolling 24 h), all or nothing per
 * token, at Redis' own time. The arithmetic is that of `src/core/limits/gcra.ts`, line for line.
 *
 * KEYS (two per number i = 1..N):
 *   KEYS[2i-1]  state hash of number i: `<prefix>{<phone>}:s`
 *   KEYS[2i]    lease record of number i: `<prefix>{<phone>}:l:<leaseId>` (idempotency, give-back)
 * ARGV:
 *   ARGV[1]  time override in ms, or '' to read Redis `TIME` (the override is a test/simulation seam)
 *   ARGV[2]  (unused, kept for layout) 0
 *   ARGV[3]  bucket width of the 24 h counter in ms (divides 86,400,000)
 *   ARGV[4]  how long a lease record is kept, in ms (>= every ttl)
 *   then 6 values per number i, from ARGV[5 + 6(i-1)]:
 *     want, perHour, perSecond (0: no per-second window), per24h, leaseId,
 *     ttl (lease time-to-live in ms: the lease may be spent until grantedAt + ttl)
 * Returns: { now, then 4 values per number: granted, grantedAt, retryAt, left }
 *   granted    tokens charged for this lease (a retried call with the same lease id gets the
 *              recorded answer and is not charged again)
 *   grantedAt  Redis time of the charge: the lease expires at grantedAt + ttl
 *   retryAt    earliest Redis time one more token may be available (now when it is; -1 never)
 *   left       tokens still available in Redis right after this charge (all windows together)
 *
 * State hash fields: ht/hr/hc (hour TAT, remainder, capacity), st/sr/sc (second window), dh (the
 * newest 24 h bucket processed), ds (sum of counted buckets), d<k> (count of bucket k), t (latest
 * time seen: the script's time never goes back for a number), last (id of the latest lease).
 *
 * A lease's tokens may be spent at any moment of [grantedAt, grantedAt + ttl], so each window is
 * charged for the worst case, which keeps the hand-outs themselves (not only the charges) within
 * every window: availability is checked at grantedAt (only what has refilled by now) and the rate
 * windows' TAT moves from max(TAT, grantedAt + ttl) (no refill is credited for the lease's own
 * lifetime); the 24 h counter is charged in the bucket of grantedAt + ttl, so a token weighs on
 * the limit for at least 24 h after it is spent. Under saturation TAT is already ahead of
 * grantedAt + ttl and nothing is lost; hence short leases for numbers with a per-second window.
 */
export const LEASE_SCRIPT = `
local HOUR = 3600000
local SECOND = 1000
local DAY = 86400000
${NOW_LUA}
local bucketMs = tonumber(ARGV[3])
local keep = tonumber(ARGV[4])
local ring = DAY / bucketMs + 1
local ahead = math.ceil(keep / bucketMs) + 2

local function full(tat, rem, t) return tat < t or (tat == t and rem == 0) end
local function avail(tat, rem, cap, period, t)
  if full(tat, rem, t) then return cap end
  local debt = math.ceil(((tat - t) * cap + rem) / period)
  if debt >= cap then return 0 end
  return cap - debt
end
local function take(tat, rem, cap, period, t, n)
  if full(tat, rem, t) then tat = t; rem = 0 end
  local numer = rem + n * period
  local whole = math.floor(numer / cap)
  return tat + whole, numer - whole * cap
end
local function availAt(tat, rem, cap, period, t, n)
  if n > cap then return -1 end
  local at = tat + math.ceil((rem - (cap - n) * period) / cap)
  if at > t then return at end
  return t
end
local function rescale(tat, rem, old, new, t)
  if full(tat, rem, t) then return 0, 0 end
  local x = (tat - t) * old + rem
  local whole = math.floor(x / new)
  return t + whole, x - whole * new
end

local out = { now }
local n = #KEYS / 2
for i = 1, n do
  local sk = KEYS[2 * i - 1]
  local lk = KEYS[2 * i]
  local a = 5 + 6 * (i - 1)
  local want = tonumber(ARGV[a])
  local hCap = tonumber(ARGV[a + 1])
  local sCap = tonumber(ARGV[a + 2])
  local dLimit = tonumber(ARGV[a + 3])
  local leaseId = ARGV[a + 4]
  local ttl = tonumber(ARGV[a + 5])
  local f = redis.call('HMGET', sk, 'ht', 'hr', 'hc', 'st', 'sr', 'sc', 'dh', 'ds', 't')
  local ht = tonumber(f[1]) or 0
  local hr = tonumber(f[2]) or 0
  local hc = tonumber(f[3]) or hCap
  local st = tonumber(f[4]) or 0
  local sr = tonumber(f[5]) or 0
  local sc = tonumber(f[6]) or sCap
  local dh = tonumber(f[7]) or -1
  local ds = tonumber(f[8]) or 0
  local seen = tonumber(f[9]) or 0
  local t = now
  if seen > t then t = seen end
  -- Limits changed since the last call: what was charged keeps counting at the new rate.
  if hc ~= hCap then ht, hr = rescale(ht, hr, hc, hCap, t) end
  if sc ~= sCap then
    if sc > 0 and sCap > 0 then st, sr = rescale(st, sr, sc, sCap, t) else st = 0; sr = 0 end
  end
  -- 24 h counter: buckets that left the window stop counting.
  local cur = math.floor(t / bucketMs)
  if cur > dh then
    if dh >= 0 then
      local hi = cur - ring
      local top = dh + ahead
      if hi > top then hi = top end
      for k = dh - ring + 1, hi do
        local c = tonumber(redis.call('HGET', sk, 'd' .. k))
        if c then
          ds = ds - c
          redis.call('HDEL', sk, 'd' .. k)
        end
      end
    end
    dh = cur
  end
  local granted, grantedAt
  local rec = redis.call('HMGET', lk, 'g', 'a')
  if rec[1] then
    granted = tonumber(rec[1])
    grantedAt = tonumber(rec[2])
  else
    local g = avail(ht, hr, hCap, HOUR, t)
    if sCap > 0 then
      local s = avail(st, sr, sCap, SECOND, t)
      if s < g then g = s end
    end
    local d = dLimit - ds
    if d < g then g = d end
    if want < g then g = want end
    if g < 0 then g = 0 end
    granted = g
    grantedAt = t
    if g > 0 then
      ht, hr = take(ht, hr, hCap, HOUR, t + ttl, g)
      if sCap > 0 then st, sr = take(st, sr, sCap, SECOND, t + ttl, g) end
      local b = math.floor((t + ttl) / bucketMs)
      redis.call('HINCRBY', sk, 'd' .. b, g)
      ds = ds + g
      redis.call('HSET', lk, 'g', g, 'a', t, 'b', b, 'r', 0)
      redis.call('PEXPIRE', lk, keep)
      redis.call('HSET', sk, 'last', leaseId)
    end
  end
  redis.call('HSET', sk, 'ht', ht, 'hr', hr, 'hc', hCap, 'st', st, 'sr', sr, 'sc', sCap, 'dh', dh, 'ds', ds, 't', t)
  redis.call('PEXPIRE', sk, DAY + 2 * bucketMs + keep)
  -- What is left, and when one more token may come.
  local left = avail(ht, hr, hCap, HOUR, t)
  local retryAt = availAt(ht, hr, hCap, HOUR, t, 1)
  if sCap > 0 then
    local s = avail(st, sr, sCap, SECOND, t)
    if s < left then left = s end
    local sa = availAt(st, sr, sCap, SECOND, t, 1)
    if sa > retryAt then retryAt = sa end
  end
  local d = dLimit - ds
  if d < left then left = d end
  if left < 0 then left = 0 end
  if d < 1 then
    if dLimit < 1 then
      retryAt = -1
    else
      -- Walk from the oldest counted bucket until enough of them have left the window.
      local excess = ds + 1 - dLimit
      local at = -1
      for k = dh - ring + 1, dh + ahead do
        local c = tonumber(redis.call('HGET', sk, 'd' .. k))
        if c then
          excess = excess - c
          if excess <= 0 then at = (k + ring) * bucketMs; break end
        end
      end
      if at > retryAt then retryAt = at end
    end
  end
  out[#out + 1] = granted
  out[#out + 1] = grantedAt
  out[#out + 1] = retryAt
  out[#out + 1] = left
end
return out
`;
