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
 * Returns: 1 when the contact's state changed, else 0.
 */
export const CAMPAIGN_SCRIPT = `
local raw = redis.call('HGET', KEYS[1], ARGV[1])
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
return 1
`;
