import { NOW_LUA } from './now.js';
import { RedisStateError } from '../errors.js';

/**
 * The lease script: charges a batch of tokens for one or more numbers, every window of a number at
 * once (GCRA per hour and per second, a bucketed counter for the rolling 24 h), all or nothing per
 * token, at Redis' own time. The arithmetic is that of `src/core/limits/gcra.ts`, line for line.
 *
 * KEYS (two per number i = 1..N; on Redis Cluster every number of a call is in one slot):
 *   KEYS[2i-1]  state hash of number i: `<prefix>{<phone>}:s`
 *   KEYS[2i]    lease record of number i: `<prefix>{<phone>}:l:<leaseId>` (idempotency, give-back)
 * ARGV:
 *   ARGV[1]  time override in ms, or '' to read Redis `TIME` (the override is a test/simulation seam)
 *   ARGV[2]  the fleet's epoch id (scripts/epoch.ts), stamped on the states; '' to skip the check
 *   ARGV[3]  bucket width of the 24 h counter in ms (divides 86,400,000)
 *   ARGV[4]  how long a lease record is kept, in ms (>= every ttl)
 *   ARGV[5]  the fleet's loss time: usage before it is unknown (Redis came back empty); 0 for none
 *   ARGV[6]  the caller's instance id, for fair shares and the tokens it holds; '' for none
 *   ARGV[7]  grace (ms) after a competitor's announced retry before it stops counting as one
 *   ARGV[8]  the caller's shortest wait (ms) between two calls for a number (`minRetryMs`)
 *   ARGV[9]  how many instances the fleet has, as the caller knows it (fair shares)
 *   ARGV[10] '1': fair shares on; '': the first to ask is served
 *   then 10 values per number i, from ARGV[11 + 10(i-1)]:
 *     want, perHour, perSecond (0: no per-second window), per24h, leaseId,
 *     ttl (lease time-to-live in ms: the lease may be spent until grantedAt + ttl),
 *     seen (the latest grantedAt the caller had for this number; 0 for none),
 *     confirm ('' normally; a number once the caller checked the fleet's epoch for this number:
 *              the state may be created or adopted, and if above 0 usage before it is unknown),
 *     held (unspent tokens the caller holds for the number, this call's grant not included),
 *     heldUntil (Redis time the latest of those expires; 0 for none)
 * Returns: { now, then 6 values per number: granted, grantedAt, retryAt, left, code, others }
 *   granted    tokens charged for this lease (a retried call with the same lease id gets the
 *              recorded answer and is not charged again)
 *   grantedAt  Redis time of the charge: the lease expires at grantedAt + ttl
 *   retryAt    earliest Redis time one more token may be available (now when it is; -1 never)
 *   left       tokens still available in Redis right after this charge (all windows together)
 *   code       0 answered; else nothing was read nor written for the number and the caller must
 *              check the epoch and call again with `confirm`: 1 no state (new number, or lost),
 *              2 the state belongs to another epoch, 3 the state is older than what the caller saw
 *              (Redis went back to an older copy)
 *   others     unspent tokens the other instances hold for the number, as each said at its latest
 *              call (unexpired): with `left` and its own, what the whole fleet can send now
 *
 * State hash fields: ht/hr/hc (hour TAT, remainder, capacity), st/sr/sc (second window), dh (the
 * newest 24 h bucket processed), ds (sum of counted buckets), d<k> (count of bucket k), t (latest
 * time seen: the script's time never goes back for a number), last (id of the latest lease), ep
 * (epoch), fl (the latest loss time applied), fair (JSON: instance id -> [count, due, competing]),
 * fr (when the current round of competition began), hd (JSON: instance id -> [held, until], the
 * unspent tokens each instance said it holds and when the latest of them expires).
 *
 * A lease's tokens may be spent at any moment of [grantedAt, grantedAt + ttl], so each window is
 * charged for the worst case, which keeps the hand-outs themselves (not only the charges) within
 * every window: availability is checked at grantedAt (only what has refilled by now) and the rate
 * windows' TAT moves from max(TAT, grantedAt + ttl) (no refill is credited for the lease's own
 * lifetime); the 24 h counter is charged in the bucket of grantedAt + ttl, so a token weighs on
 * the limit for at least 24 h after it is spent. Under saturation TAT is already ahead of
 * grantedAt + ttl and nothing is lost; hence short leases for numbers with a per-second window.
 *
 * Unknown usage (a loss time L, fleet-wide or for this number): the number is taken as having sent
 * all it could until L + ttl (the last moment a lease granted before the loss can be spent), on top
 * of what the state counts: hour and second TAT at least L + ttl + period + ds × period / capacity
 * (empty buckets at L + ttl), and the 24 h counter charged with its burst and its rate (the least
 * of hour and second) bucket by bucket back from L + ttl, up to its 24 h limit. Applied once per
 * loss time (field fl).
 *
 * Fair shares: instances that asked for a number are recorded with the tokens granted to them in
 * the current round (count), when they will ask again (due) and whether they got less than they
 * asked (competing). A caller gets at most its water-filling share of what is available now: the
 * level L such that topping every competitor's count up to L uses exactly what is available; its
 * share is L minus its count. A record not renewed by due + grace is dropped; when none is left
 * the round ends, and the next call starts a new one. During a round's first `grace` ms the
 * instances of the fleet that have not asked yet count as competitors at 0 (the first to ask takes
 * its share of a full bucket, not all of it). An instance joining the competition starts at the
 * least competitor's count less its share of one burst (burst / instances): it catches up on what
 * it missed of a round's opening, never more, whenever it joins.
 */
export const LEASE_SCRIPT = `
local HOUR = 3600000
local SECOND = 1000
local DAY = 86400000
${NOW_LUA}
local epoch = ARGV[2]
local bucketMs = tonumber(ARGV[3])
local keep = tonumber(ARGV[4])
local floorAt = tonumber(ARGV[5])
local me = ARGV[6]
local grace = tonumber(ARGV[7])
local minRetry = tonumber(ARGV[8])
local fleet = tonumber(ARGV[9])
local fairOn = ARGV[10] == '1'
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
-- Water level over competitors' counts: topping each count up to it uses exactly total.
local function level(counts, total)
  table.sort(counts)
  local l = counts[1]
  local rest = total
  for k = 1, #counts do
    local nxt = counts[k + 1]
    if nxt == nil or (nxt - l) * k > rest then return l + rest / k end
    rest = rest - (nxt - l) * k
    l = nxt
  end
  return l
end

local function lease(i)
  local sk = KEYS[2 * i - 1]
  local lk = KEYS[2 * i]
  local a = 11 + 10 * (i - 1)
  local want = tonumber(ARGV[a])
  local hCap = tonumber(ARGV[a + 1])
  local sCap = tonumber(ARGV[a + 2])
  local dLimit = tonumber(ARGV[a + 3])
  local leaseId = ARGV[a + 4]
  local ttl = tonumber(ARGV[a + 5])
  local callerSeen = tonumber(ARGV[a + 6])
  local confirm = tonumber(ARGV[a + 7])
  local held = tonumber(ARGV[a + 8])
  local heldUntil = tonumber(ARGV[a + 9])
  local f = redis.call('HMGET', sk, 'ht', 'hr', 'hc', 'st', 'sr', 'sc', 'dh', 'ds', 't', 'ep', 'fl', 'fair', 'fr', 'hd')
  local exists = f[9] ~= false
  if confirm == nil then
    if not exists then return { 0, 0, now, 0, 1, 0 } end
    if epoch ~= '' and f[10] and f[10] ~= epoch then return { 0, 0, now, 0, 2, 0 } end
    if (tonumber(f[9]) or 0) < callerSeen then return { 0, 0, now, 0, 3, 0 } end
  end
  local ht = tonumber(f[1]) or 0
  local hr = tonumber(f[2]) or 0
  local hc = tonumber(f[3]) or hCap
  local st = tonumber(f[4]) or 0
  local sr = tonumber(f[5]) or 0
  local sc = tonumber(f[6]) or sCap
  local dh = tonumber(f[7]) or -1
  local ds = tonumber(f[8]) or 0
  local seen = tonumber(f[9]) or 0
  local fl = tonumber(f[11]) or 0
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
  -- Unknown usage before a loss time: every window fully used then (see the comment above).
  local lossAt = floorAt
  if confirm ~= nil and confirm > lossAt then lossAt = confirm end
  if lossAt > fl then
    local at = lossAt + ttl
    local th = at + HOUR + math.ceil(ds * HOUR / hCap)
    if th > ht then ht = th; hr = 0 end
    if sCap > 0 then
      local ts = at + SECOND + math.ceil(ds * SECOND / sCap)
      if ts > st then st = ts; sr = 0 end
    end
    -- The most the number can have sent before: its burst, and its rate back from the loss,
    -- bucket by bucket, up to its 24 h limit.
    local rate = hCap * bucketMs / HOUR
    local burst = hCap
    if sCap > 0 then
      if sCap * bucketMs / SECOND < rate then rate = sCap * bucketMs / SECOND end
      if sCap < burst then burst = sCap end
    end
    rate = math.ceil(rate)
    local rest = dLimit
    local k = math.floor(at / bucketMs)
    local add = burst + rate
    while rest > 0 and k > cur - ring do
      if add > rest then add = rest end
      redis.call('HINCRBY', sk, 'd' .. k, add)
      ds = ds + add
      rest = rest - add
      k = k - 1
      add = rate
    end
    fl = lossAt
  end
  local granted, grantedAt
  local fair = nil
  local round = tonumber(f[13]) or 0
  local count = 0
  local limited = false
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
    if g < 0 then g = 0 end
    local room = g
    if want < g then g = want end
    if fairOn and me ~= '' and want > 0 then
      fair = {}
      if f[12] then fair = cjson.decode(f[12]) end
      local others = {}
      local mine = nil
      local known = 1
      for id, r in pairs(fair) do
        if r[2] + grace < t then fair[id] = nil
        elseif id == me then mine = r
        else
          known = known + 1
          if r[3] == 1 then others[#others + 1] = r[1] end
        end
      end
      if mine == nil and known == 1 then round = t end
      local opening = t < round + grace
      -- Instances of the fleet that have not asked yet, while the round opens: competitors at 0.
      if opening then
        for _ = known + 1, fleet do others[#others + 1] = 0 end
      end
      if mine then count = mine[1] end
      if #others > 0 then
        local low = others[1]
        for _, x in ipairs(others) do if x < low then low = x end end
        -- Joining: no further behind than its share of one burst (what it missed of the round's opening).
        local burst = hCap
        if sCap > 0 and sCap < burst then burst = sCap end
        if dLimit < burst then burst = dLimit end
        local start = low - math.ceil(burst / fleet)
        if (mine == nil or mine[3] ~= 1) and count < start then count = start end
        local counts = { count }
        for _, x in ipairs(others) do counts[#counts + 1] = x end
        local share = math.ceil(level(counts, room) - count - 1e-9)
        if share < 0 then share = 0 end
        if share < g then g = share; limited = true end
      end
    end
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
  redis.call('HSET', sk, 'ht', ht, 'hr', hr, 'hc', hCap, 'st', st, 'sr', sr, 'sc', sCap, 'dh', dh, 'ds', ds, 't', t, 'fl', fl)
  if epoch ~= '' then redis.call('HSET', sk, 'ep', epoch) end
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
  if fair ~= nil then
    -- The caller's record: competing while it got less than it asked; due when it will ask again.
    local short = granted < want
    local due = t + minRetry
    if short and not limited and retryAt > due then due = retryAt end
    if retryAt < 0 then fair[me] = nil else fair[me] = { count + granted, due, short and 1 or 0 } end
    if next(fair) == nil then redis.call('HDEL', sk, 'fair', 'fr') else redis.call('HSET', sk, 'fair', cjson.encode(fair), 'fr', round) end
  end
  -- What each instance holds unspent: the caller's record replaced, expired ones dropped.
  local others = 0
  if me ~= '' then
    local hd = {}
    if f[14] then hd = cjson.decode(f[14]) end
    local changed = false
    for id, r in pairs(hd) do
      if r[2] <= t then hd[id] = nil; changed = true
      elseif id ~= me then others = others + r[1] end
    end
    local mine = held + granted
    local upto = heldUntil
    if granted > 0 and grantedAt + ttl > upto then upto = grantedAt + ttl end
    local r = hd[me]
    if mine > 0 and upto > t then
      if r == nil or r[1] ~= mine or r[2] ~= upto then hd[me] = { mine, upto }; changed = true end
    elseif r ~= nil then
      hd[me] = nil; changed = true
    end
    if changed then
      if next(hd) == nil then redis.call('HDEL', sk, 'hd') else redis.call('HSET', sk, 'hd', cjson.encode(hd)) end
    end
  end
  return { granted, grantedAt, retryAt, left, 0, others }
end

local out = { now }
for i = 1, #KEYS / 2 do
  local r = lease(i)
  for k = 1, 6 do out[#out + 1] = r[k] end
end
return out
`;

/** Why a lease call wrote nothing for a number (the script's codes 1, 2, 3): its epoch is checked before the next call. */
export type LeaseRefusal = 'no-state' | 'other-epoch' | 'older-copy';

const REFUSALS: readonly (LeaseRefusal | undefined)[] = [undefined, 'no-state', 'other-epoch', 'older-copy'];

/** The lease script's answer for one number (the fields are described with the script). */
export type LeaseAnswer =
  | { readonly kind: 'answered'; readonly granted: number; readonly grantedAt: number; readonly retryAt: number; readonly left: number; readonly others: number }
  | { readonly kind: 'refused'; readonly found: LeaseRefusal };

/** Reads a lease call's reply for `count` numbers; throws {@link RedisStateError} for a reply of another shape. */
export function decodeLeaseReply(reply: unknown, count: number): { readonly now: number; readonly answers: LeaseAnswer[] } {
  const values = Array.isArray(reply) && reply.length === 1 + 6 * count ? reply.map(Number) : undefined;
  if (values === undefined || !values.every(Number.isFinite)) throw new RedisStateError('lease script', `an array of ${1 + 6 * count} numbers (Redis' time, then 6 per number)`, reply);
  const answers: LeaseAnswer[] = [];
  for (let i = 0; i < count; i++) {
    const [granted, grantedAt, retryAt, left, code, others] = values.slice(1 + 6 * i, 7 + 6 * i) as [number, number, number, number, number, number];
    if (code === 0) answers.push({ kind: 'answered', granted, grantedAt, retryAt, left, others });
    else {
      const found = REFUSALS[code];
      if (found === undefined) throw new RedisStateError('lease script', `a code of 0 to 3 for number ${i + 1}`, reply);
      answers.push({ kind: 'refused', found });
    }
  }
  return { now: values[0]!, answers };
}
