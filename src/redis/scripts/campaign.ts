/**
 * The join and classification as Lua functions, shared by {@link CAMPAIGN_SCRIPT} (one report) and
 * the server's step script (src/server/backends/redis/scripts/step.ts: every report of a step, applied with
 * the step, so a report is counted exactly when what it reports is written).
 *
 * `campaign_report(acc, contacts, counts, dirty, live, ranges, window, contact, op, a3, a4, known)`
 * joins one report; the counts' moves gather in `acc` (one table per campaign) and
 * `campaign_finish(acc, retain)` writes them, so a step of many reports moves each count once.
 *   op 'a': admission bit a3; op 's': status of attempt a3, a4 being "bits:at:window" (the
 *   observation's progress bits, 1024 added for a FAILED with `retrying`; when the server recorded
 *   it, ms; the failure window, ms); op 'r': a range of a3 contacts admitted as accepted, `contact`
 *   naming the range (applied once per name), its contacts without a state of their own until a
 *   report comes.
 *   A contact's state is "admissions,attempt,progress,stage,settleAt" (stage and settle time as
 *   src/events/campaign-counts.ts's `ContactState`); contacts in their failure window are in the
 *   sorted set `window` by its end, and `campaign_settle(acc, …, window, now)` settles the due ones.
 *   known '1': a contact without a state is one of an admitted range (accepted, remaining), and a
 *   campaign whose `live` marker expired is settled; '0': as the in-process aggregator's unknown
 *   contact (a new one), the campaign settled once its contact states expired.
 */
export const CAMPAIGN_LUA = `
local function campaign_acc()
  return { delta = {}, changed = false, keys = nil, live = nil }
end
local function has(p, b) return bit.band(p, b) ~= 0 end
-- Admission bits (ADMISSION_BITS), in precedence order; 64 is invalid-data.
local REJECTIONS = { {1, 'invalidPhone'}, {64, 'invalidData'}, {2, 'duplicated'}, {4, 'blocked'}, {8, 'alreadySent'}, {16, 'doesNotExist'} }
local REJECTED = 1 + 2 + 4 + 8 + 16 + 64
-- Stages (STAGE): 0 open, 1 sent, 2 failed, 3 does not exist, 4 expired.
local STAGE_COUNT = { 'sent', 'failed', 'doesNotExist', 'expired' }
local RETRYING = 1024
local function classify(a, p, stage)
  local c = { total = 1 }
  if stage == 0 then
    for _, r in ipairs(REJECTIONS) do
      if has(a, r[1]) then
        c.processed = 1
        c[r[2]] = 1
        return c
      end
    end
    c.remaining = 1
    return c
  end
  c.processed = 1
  c[STAGE_COUNT[stage]] = 1
  if stage == 1 then
    if has(p, 8 + 16 + 32) then c.delivered = 1 end
    if has(p, 16 + 32) then c.read = 1 end
    if has(p, 32) then
      c.replied = 1
      if has(p, 512) then c.blocklistResponse = 1 end
    end
  end
  return c
end
-- A state kept before stages were: the stage its old classification counted (legacyStage).
local function legacy_stage(a, p)
  if has(a, REJECTED) then return 0 end
  if has(p, 32) then return 1 end
  if has(p, 128) then
    if has(p, 256) then return 3 end
    return 2
  end
  if has(p, 64) then return 4 end
  if has(p, 2 + 4 + 8 + 16) then return 1 end
  return 0
end
-- "admissions,attempt,progress,stage,settleAt" (the last two absent in an older version's state).
local function campaign_parse(raw)
  local a, b, c, rest = string.match(raw, '^(-?%d+),(-?%d+),(-?%d+)(.*)$')
  local adm, att, prog = tonumber(a), tonumber(b), tonumber(c)
  local st, sa = string.match(rest, '^,(%d+),(%d+)$')
  if st then return adm, att, prog, tonumber(st), tonumber(sa) end
  return adm, att, prog, legacy_stage(adm, prog), 0
end
local function campaign_encode(adm, att, prog, stage, settle)
  return string.format('%d,%d,%d,%d,%.0f', adm, att, prog, stage, settle)
end
-- contactStatus of campaign-counts.ts: status bits (with RETRYING) of attempt att2 recorded at 'at'.
local function campaign_status(adm, att, prog, stage, settle, att2, bits, at, window)
  if stage == 0 and settle ~= 0 and settle <= at then
    stage = 1
    settle = 0
  end
  local obs = bit.band(bits, RETRYING - 1)
  if stage ~= 0 then
    if stage == 1 and att2 == att then prog = bit.bor(prog, obs) end
    return att, prog, stage, settle
  end
  if att2 < att then return att, prog, stage, settle end
  if att2 > att then
    att = att2
    prog = 0
    settle = 0
  end
  prog = bit.bor(prog, obs)
  if has(adm, REJECTED) then return att, prog, stage, settle end
  if has(obs, 8 + 16 + 32) then
    stage = 1
    settle = 0
  elseif has(obs, 2 + 4) then
    if window == 0 then
      stage = 1
      settle = 0
    elseif settle == 0 then
      settle = at + window
    end
  elseif has(obs, 64) then
    stage = 4
    settle = 0
  elseif has(obs, 128) then
    settle = 0
    if has(bits, RETRYING) then prog = 0
    elseif has(obs, 256) then stage = 3
    else stage = 2 end
  end
  return att, prog, stage, settle
end
local function campaign_move(acc, c, sign)
  for k, v in pairs(c) do acc.delta[k] = (acc.delta[k] or 0) + sign * v end
end
local function campaign_report(acc, contacts, counts, dirty, live, ranges, window, contact, op, a3, a4, known)
  acc.keys = { contacts = contacts, counts = counts, dirty = dirty, live = live, ranges = ranges, window = window }
  if op == 'r' then
    if redis.call('HSETNX', ranges, contact, a3) == 0 then return 0 end
    local n = tonumber(a3)
    acc.delta.total = (acc.delta.total or 0) + n
    acc.delta.remaining = (acc.delta.remaining or 0) + n
    redis.call('SET', live, 1)
    acc.live = true
    acc.changed = true
    return 1
  end
  local raw = redis.call('HGET', contacts, contact)
  if not raw then
    local settled
    if known == '1' then
      -- Once per campaign and script: the marker does not change within one.
      if acc.live == nil then acc.live = redis.call('EXISTS', live) == 1 end
      settled = not acc.live
    else
      settled = redis.call('EXISTS', contacts) == 0 and (tonumber(redis.call('HGET', counts, 'total')) or 0) + (acc.delta.total or 0) > 0
    end
    if settled then
      redis.call('HINCRBY', counts, 'lateIgnored', 1)
      return 0
    end
  end
  local adm, att, prog, stage, settle = 0, -1, 0, 0, 0
  if raw then adm, att, prog, stage, settle = campaign_parse(raw) end
  local nadm, natt, nprog, nstage, nsettle = adm, att, prog, stage, settle
  if op == 'a' then
    nadm = bit.bor(adm, tonumber(a3))
    -- A rejection of a contact in its failure window: it is not sent again.
    if has(nadm, REJECTED) then nsettle = 0 end
  else
    -- a4: "bits:at:window"; an older version's plain bits: a SENT settles at once.
    local b, at, w = string.match(a4, '^(%d+):(%d+):(%d+)$')
    if b == nil then b, at, w = a4, 0, 0 end
    natt, nprog, nstage, nsettle = campaign_status(adm, att, prog, stage, settle, tonumber(a3), tonumber(b), tonumber(at), tonumber(w))
  end
  -- Unchanged: nothing to write; but a new contact (unknown, not of a range) still gets its entry.
  if nadm == adm and natt == att and nprog == prog and nstage == stage and nsettle == settle and (raw or known == '1') then return 0 end
  if raw or known == '1' then campaign_move(acc, classify(adm, prog, stage), -1) end
  campaign_move(acc, classify(nadm, nprog, nstage), 1)
  redis.call('HSET', contacts, contact, campaign_encode(nadm, natt, nprog, nstage, nsettle))
  if nsettle ~= 0 and nsettle ~= settle then redis.call('ZADD', window, nsettle, contact) end
  acc.changed = true
  return 1
end
-- Settles as sent the contacts whose failure window ended at or before 'now' (settleDue).
local function campaign_settle(acc, contacts, counts, dirty, live, ranges, window, now)
  acc.keys = { contacts = contacts, counts = counts, dirty = dirty, live = live, ranges = ranges, window = window }
  local t = tonumber(now)
  local due = redis.call('ZRANGEBYSCORE', window, '-inf', t)
  if #due == 0 then return 0 end
  redis.call('ZREMRANGEBYSCORE', window, '-inf', t)
  local n = 0
  for _, id in ipairs(due) do
    local raw = redis.call('HGET', contacts, id)
    if raw then
      local adm, att, prog, stage, settle = campaign_parse(raw)
      -- Stale: the contact left that window another way (a failure, a delivery, a new attempt).
      if stage == 0 and settle ~= 0 and settle <= t then
        campaign_move(acc, classify(adm, prog, 0), -1)
        campaign_move(acc, classify(adm, prog, 1), 1)
        redis.call('HSET', contacts, id, campaign_encode(adm, att, prog, 1, 0))
        acc.changed = true
        n = n + 1
      end
    end
  end
  return n
end
local function campaign_finish(acc, retain)
  if not acc.changed then return end
  local k = acc.keys
  local remaining = nil
  for name, v in pairs(acc.delta) do
    if v ~= 0 then
      local now = redis.call('HINCRBY', k.counts, name, v)
      if name == 'remaining' then remaining = now end
    end
  end
  if remaining == nil then remaining = tonumber(redis.call('HGET', k.counts, 'remaining')) or 0 end
  redis.call('INCR', k.dirty)
  for _, key in ipairs({ k.contacts, k.live, k.ranges, k.window }) do
    if remaining == 0 then redis.call('PEXPIRE', key, retain) else redis.call('PERSIST', key) end
  end
end
`;

/**
 * The campaign-statistics script: joins one report into a contact's state and moves the campaign's
 * counts by the difference between the contact's old and new classification, atomically, so any
 * order or duplication of reports from any instances gives the counts of src/events/campaign-stats.ts.
 * The join and the classification are those of `admitContact` / `contactStatus` / `classifyContact`
 * there (bits of src/events/status-merge.ts); test/redis/campaign-stats-store.test.ts compares
 * them with the in-process aggregator on random report sequences.
 *
 * KEYS:
 *   KEYS[1]  contact states `<prefix>{camp:<id>}:contacts`: field contact id ->
 *            "admissions,attempt,progress,stage,settleAt" (`…:contacts:window`: those in their
 *            failure window by its end)
 *   KEYS[2]  counts `<prefix>{camp:<id>}:counts`: field count name -> value
 *   KEYS[3]  dirty marker `<prefix>{camp:<id>}:dirty` (a counter moved when the counts changed: a
 *            batch deletes it only if it did not move since it was read)
 * ARGV:
 *   ARGV[1]  contact id
 *   ARGV[2]  'a' (admission) or 's' (status)
 *   ARGV[3]  for 'a': the admission bit; for 's': the attempt (-1 first try, k retry index k)
 *   ARGV[4]  for 's': "bits:at:window": the observation's progress bits (`observe(NO_PROGRESS, o)`,
 *            plus 1024 for a FAILED with `retrying`), when it was recorded (ms), the failure window (ms)
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
${CAMPAIGN_LUA}
local acc = campaign_acc()
local changed = campaign_report(acc, KEYS[1], KEYS[2], KEYS[3], KEYS[1] .. ':live', KEYS[1] .. ':ranges', KEYS[1] .. ':window', ARGV[1], ARGV[2], ARGV[3], ARGV[4], '0')
campaign_finish(acc, ARGV[5])
return changed
`;

/**
 * Settles as sent, atomically, the contacts of a campaign whose failure window ended at or before
 * ARGV[1] (ms), moving its counts; ARGV[2] as the campaign script's ARGV[5].
 * KEYS: [1] contact states, [2] counts, [3] dirty marker, [4] live marker, [5] ranges, [6] window.
 * Returns how many contacts settled.
 */
export const SETTLE_SCRIPT = `
${CAMPAIGN_LUA}
local acc = campaign_acc()
local n = campaign_settle(acc, KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], ARGV[1])
campaign_finish(acc, ARGV[2])
return n
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

/**
 * Confirms a campaign's part of a statistics batch once the batch is kept: its dirty marker is
 * deleted only if no report moved it since the batch read it (a report meanwhile keeps it for the
 * next batch), and the payload sent is remembered (an unchanged campaign is not sent again).
 * KEYS: [1] dirty marker, [2] meta hash. ARGV: [1] the marker's value read, [2] the payload's key
 * ('' to leave the remembered payload as it is).
 */
export const BATCH_CONFIRM_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
if ARGV[2] ~= '' then redis.call('HSET', KEYS[2], 'lastSent', ARGV[2]) end
return 1
`;
