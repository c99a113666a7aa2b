/**
 * The campaign-statistics script: joins one report into a contact's state and moves the campaign's
 * counts by the difference between the contact's old and new classification, atomically, so any
 * order or duplication of reports from any instances gives the counts of src/events/campaign-stats.ts.
 * The join and the classification are those of `admitContact` / `contactStatus` / `classifyContact`
 * there (bits of src/events/status-merge.ts); test/redis/campaign-stats-store.test.ts compares
 * them with the in-process aggregator on random report sequences.
 *
 * KEYS:
 *   KEYS[1]  contact states `<prefix>{camp:<id>}:contacts`: field contact id -> "admissions,attempt,progress"
 *   KEYS[2]  counts `<prefix>{camp:<id>}:counts`: field count name -> value
 *   KEYS[3]  dirty marker `<prefix>{camp:<id>}:dirty` (set to 1 when the counts changed)
 * ARGV:
 *   ARGV[1]  contact id
 *   ARGV[2]  'a' (admission) or 's' (status)
 *   ARGV[3]  for 'a': the admission bit; for 's': the attempt (-1 first try, k retry index k)
 *   ARGV[4]  for 's': the observation's progress bits (`observe(NO_PROGRESS, o)`)
 *   ARGV[5]  how long a finished campaign keeps its contacts' states, in ms (`retainContactsMs`)
 * Returns: 1 when the contact's state changed, else 0.
 *
 * Settling, as the in-process aggregator does it: while nothing of the campaign remains, its
 * contact states expire ARGV[5] ms after its last change (each change moves the expiry; a change
 * that leaves something remaining removes it). Once they are gone the counts are final: a report
 * for a contact the campaign no longer knows cannot be told from a new contact, so it changes
 * nothing and is counted in the counts hash's `lateIgnored` field.
 */
export const CAMPAIGN_SCRIPT = `
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw and redis.call('EXISTS', KEYS[1]) == 0 and (tonumber(redis.call('HGET', KEYS[2], 'total')) or 0) > 0 then
  redis.call('HINCRBY', KEYS[2], 'lateIgnored', 1)
  return 0
end
local adm, att, prog = 0, -1, 0
if raw then
  local a, b, c = string.match(raw, '^(-?%d+),(-?%d+),(-?%d+)$')
  adm, att, prog = tonumber(a), tonumber(b), tonumber(c)
end
local nadm, natt, nprog = adm, att, prog
if ARGV[2] == 'a' then
  nadm = bit.bor(adm, tonumber(ARGV[3]))
else
  local attempt = tonumber(ARGV[3])
  local obs = tonumber(ARGV[4])
  if attempt < att then return 0 end
  local base = prog
  if attempt > att then base = 0 end
  natt = attempt
  nprog = bit.bor(base, obs)
end
if nadm == adm and natt == att and nprog == prog then return 0 end

local function has(p, b) return bit.band(p, b) ~= 0 end
local REJECTIONS = { {1, 'invalidPhone'}, {2, 'duplicated'}, {4, 'blocked'}, {8, 'alreadySent'}, {16, 'doesNotExist'} }
local function classify(a, p)
  local c = { total = 1 }
  for _, r in ipairs(REJECTIONS) do
    if has(a, r[1]) then
      c.processed = 1
      c[r[2]] = 1
      return c
    end
  end
  local status
  if has(p, 32) then status = 'REPLIED'
  elseif has(p, 128) then status = 'FAILED'
  elseif has(p, 64) then status = 'EXPIRED'
  elseif has(p, 16) then status = 'READ'
  elseif has(p, 8) then status = 'DEVICE'
  elseif has(p, 4) then status = 'SERVER'
  elseif has(p, 2) then status = 'SENT'
  elseif has(p, 1) then status = 'ENQUEUED'
  end
  if status == nil or status == 'ENQUEUED' then
    c.remaining = 1
    return c
  end
  c.processed = 1
  if status == 'FAILED' then
    if has(p, 256) then c.doesNotExist = 1 else c.failed = 1 end
    return c
  end
  if status == 'EXPIRED' then c.expired = 1 else c.sent = 1 end
  if has(p, 8 + 16 + 32) then c.delivered = 1 end
  if has(p, 16 + 32) then c.read = 1 end
  if has(p, 32) then
    c.replied = 1
    if has(p, 512) then c.blocklistResponse = 1 end
  end
  return c
end
local delta = {}
if raw then
  for k, v in pairs(classify(adm, prog)) do delta[k] = (delta[k] or 0) - v end
end
for k, v in pairs(classify(nadm, nprog)) do delta[k] = (delta[k] or 0) + v end
for k, v in pairs(delta) do
  if v ~= 0 then redis.call('HINCRBY', KEYS[2], k, v) end
end
redis.call('HSET', KEYS[1], ARGV[1], nadm .. ',' .. natt .. ',' .. nprog)
redis.call('SET', KEYS[3], 1)
if (tonumber(redis.call('HGET', KEYS[2], 'remaining')) or 0) == 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
else
  redis.call('PERSIST', KEYS[1])
end
return 1
`;

/**
 * Claims the fleet's next statistics batch, atomically: refused (nil) while `now` is within the
 * interval of the last batch, else records `now` as the last batch time and returns the previous
 * one ('' for none), for {@link BATCH_RELEASE_SCRIPT} should the claimant find nothing to send.
 *
 * KEYS[1] `<prefix>campaigns:lastBatchAt`; ARGV[1] now (ms, host clock); ARGV[2] interval (ms).
 */
export const BATCH_CLAIM_SCRIPT = `
local last = redis.call('GET', KEYS[1])
if last and tonumber(ARGV[1]) < tonumber(last) + tonumber(ARGV[2]) then return false end
redis.call('SET', KEYS[1], ARGV[1])
return last or ''
`;

/**
 * Gives a claim back when it produced no batch: restores the previous last batch time (ARGV[2],
 * '' for none) if the claim (ARGV[1]) is still the latest. KEYS[1] as for the claim.
 */
export const BATCH_RELEASE_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  if ARGV[2] == '' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], ARGV[2]) end
end
return 1
`;
