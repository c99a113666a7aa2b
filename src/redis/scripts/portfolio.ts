import { NOW_LUA } from './now.js';
import { RedisStateError } from '../errors.js';

/**
 * The scripts of a portfolio shared by the instances (src/redis/redis-portfolios.ts), with typed
 * encoders of their arguments and decoders of their replies.
 *
 * A portfolio's recipients are a sorted set whose score is the time cov which the member covers
 * sends ("covered cov"). A member counts while its score is after now − 24 h, so a send at `h`
 * is counted for a whole 24 h when a member with a score >= h stands for it. Members are of two
 * kinds: recipients, and slots (`~<leaseId>:<i>`): a slot is room for one new recipient, leased to
 * an instance, scored with the lease's expiry, so it covers whatever the instance hands out with it
 * before that expiry, even if the instance dies before saying to whom.
 *
 * Why that is exact: at every script run the members counting are at most the limit (a lease
 * grants only room: limit − members); between runs members only leave; and a run never adds a
 * member without taking one out (a slot spent on a new recipient becomes that recipient) except in
 * a lease. Moving a counting member's score later adds nothing now, so recipients in the set are
 * extended freely: that is how a recipient already in the 24 h costs no slot.
 *
 * Keys (hash tag `{pf:<id>}`, one slot on Redis Cluster):
 *   `<prefix>{pf:<id>}:r`  the sorted set of recipients and slots
 *   `<prefix>{pf:<id>}:s`  a hash: `t` the latest time seen (the scripts' time never goes back),
 *                          `lim` the limit of the latest lease call (for inspection)
 *   `<prefix>{pf:<id>}:l:<leaseId>`  a lease's record (`g` granted, `a` granted at), kept for
 *                          retries, expiring after the lease's time-to-live and a margin
 */

const DAY_LUA = `local DAY = 86400000
${NOW_LUA}
local seen = tonumber(redis.call('HGET', KEYS[2], 't')) or 0
if seen > now then now = seen end
redis.call('HSET', KEYS[2], 't', now)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - DAY)`;

/**
 * The lease script: grants this instance slots (room for new recipients) and extends recipients it
 * is about to message that already count (they cost no slot).
 *
 * KEYS:
 *   KEYS[1]  the recipients: `<prefix>{pf:<id>}:r`
 *   KEYS[2]  the state hash: `<prefix>{pf:<id>}:s`
 *   KEYS[3]  the lease record: `<prefix>{pf:<id>}:l:<leaseId>`
 * ARGV:
 *   ARGV[1]  time override in ms, or '' to read Redis `TIME`
 *   ARGV[2]  the limit (distinct recipients in 24 h), as the caller's engine has it
 *   ARGV[3]  slots wanted (0: only extend)
 *   ARGV[4]  lease id (unique per call; a retried call sends the same one)
 *   ARGV[5]  lease time-to-live in ms: the slots may be spent cov grantedAt + ttl
 *   ARGV[6]  how long to keep the lease record, in ms
 *   ARGV[7]  cover in ms: a recipient extended is covered cov now + cover
 *   ARGV[8..] recipients to extend, when they count now
 * Returns: { now, granted, grantedAt, retryAt, used, then per recipient of ARGV[8..] the time it is
 *   covered cov (0: it does not count now, a message to it needs a slot) }
 *   retryAt  when a new recipient may fit: now if one does, the time the member that must leave
 *            leaves, -1 never (a limit of 0)
 *   used     members counting after this call (recipients and slots)
 */
export const PORTFOLIO_LEASE_SCRIPT = `
${DAY_LUA}
local limit = tonumber(ARGV[2])
local want = tonumber(ARGV[3])
local leaseId = ARGV[4]
local ttl = tonumber(ARGV[5])
local cover = tonumber(ARGV[7])
redis.call('HSET', KEYS[2], 'lim', limit)
local covered = {}
for i = 8, #ARGV do
  local s = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if s then
    local cov = tonumber(s)
    if now + cover > cov then cov = now + cover; redis.call('ZADD', KEYS[1], cov, ARGV[i]) end
    covered[#covered + 1] = cov
  else
    covered[#covered + 1] = 0
  end
end
local granted = 0
local grantedAt = now
local rec = redis.call('HMGET', KEYS[3], 'g', 'a')
if rec[1] then
  granted = tonumber(rec[1])
  grantedAt = tonumber(rec[2])
elseif want > 0 then
  local room = limit - redis.call('ZCARD', KEYS[1])
  if room > 0 then
    granted = want
    if room < granted then granted = room end
    for i = 1, granted do redis.call('ZADD', KEYS[1], now + ttl, '~' .. leaseId .. ':' .. i) end
  end
  redis.call('HSET', KEYS[3], 'g', granted, 'a', now)
  redis.call('PEXPIRE', KEYS[3], tonumber(ARGV[6]))
end
local used = redis.call('ZCARD', KEYS[1])
local retryAt = now
if limit < 1 then
  retryAt = -1
elseif used >= limit then
  local m = redis.call('ZRANGE', KEYS[1], used - limit, used - limit, 'WITHSCORES')
  retryAt = tonumber(m[2]) + DAY
end
local out = { now, granted, grantedAt, retryAt, used }
for i = 1, #covered do out[#out + 1] = covered[i] end
return out
`;

/**
 * The record script: says to whom this instance handed out slots, and gives back slots it will not
 * spend.
 *
 * KEYS:
 *   KEYS[1]  the recipients: `<prefix>{pf:<id>}:r`
 *   KEYS[2]  the state hash: `<prefix>{pf:<id>}:s`
 * ARGV:
 *   ARGV[1]  time override in ms, or '' to read Redis `TIME`
 *   ARGV[2]  cover in ms: a recipient recorded is covered cov now + cover at least
 *   then pairs (recipient, slot) from ARGV[3]:
 *     recipient '' and a slot: the slot is given back unspent (removed)
 *     a recipient and its slot: a message handed out with that slot. The recipient already counts:
 *       it is extended and the slot is removed (room again); else the slot becomes the recipient,
 *       covered cov the slot's score and now + cover. A slot no longer counting stood for a
 *       message already out of the 24 h: nothing is added.
 * Returns: { now, then per pair the time its recipient is covered cov (0: not covered) }
 * Running a call twice changes nothing more (a removed slot is not found again).
 */
export const PORTFOLIO_RECORD_SCRIPT = `
${DAY_LUA}
local cover = tonumber(ARGV[2])
local out = { now }
for i = 3, #ARGV - 1, 2 do
  local who = ARGV[i]
  local slot = ARGV[i + 1]
  local ss = redis.call('ZSCORE', KEYS[1], slot)
  if ss then redis.call('ZREM', KEYS[1], slot) end
  local cov = 0
  if who ~= '' then
    local rs = redis.call('ZSCORE', KEYS[1], who)
    if rs or ss then
      cov = now + cover
      if rs and tonumber(rs) > cov then cov = tonumber(rs) end
      if ss and tonumber(ss) > cov then cov = tonumber(ss) end
      redis.call('ZADD', KEYS[1], cov, who)
    end
  end
  out[#out + 1] = cov
end
return out
`;

/** The keys of portfolio `id` under `prefix`. */
export function portfolioKeys(prefix: string, id: string): { readonly recipients: string; readonly state: string; lease(leaseId: string): string } {
  const base = `${prefix}{pf:${id}}:`;
  return { recipients: `${base}r`, state: `${base}s`, lease: (leaseId) => `${base}l:${leaseId}` };
}

/** What a lease call asks. */
export interface PortfolioLeaseArgs {
  /** Time override (clock time), or undefined for Redis' own. */
  readonly time: number | undefined;
  readonly limit: number;
  readonly want: number;
  readonly leaseId: string;
  readonly ttl: number;
  readonly keep: number;
  readonly cover: number;
  /** Recipients to extend when they count. */
  readonly extend: readonly string[];
}

export function encodePortfolioLease(a: PortfolioLeaseArgs): (string | number)[] {
  return [a.time ?? '', a.limit, a.want, a.leaseId, a.ttl, a.keep, a.cover, ...a.extend];
}

/** A lease call's answer (Redis times). */
export interface PortfolioLeaseReply {
  readonly now: number;
  readonly granted: number;
  readonly grantedAt: number;
  /** -1: never. */
  readonly retryAt: number;
  readonly used: number;
  /** Per recipient extended: covered cov (0: it needs a slot). */
  readonly covered: readonly number[];
}

export function decodePortfolioLease(reply: unknown): PortfolioLeaseReply {
  const r = numbers(reply, 5, 'portfolio lease');
  return { now: r[0]!, granted: r[1]!, grantedAt: r[2]!, retryAt: r[3]!, used: r[4]!, covered: r.slice(5) };
}

/** One pair of a record call: a recipient ('' to give the slot back) and the slot spent on it. */
export type PortfolioRecordItem = readonly [recipient: string, slot: string];

export function encodePortfolioRecord(time: number | undefined, cover: number, items: readonly PortfolioRecordItem[]): (string | number)[] {
  const out: (string | number)[] = [time ?? '', cover];
  for (const [who, slot] of items) out.push(who, slot);
  return out;
}

/** A record call's answer: Redis' time, and per pair its recipient's cover (0: none). */
export function decodePortfolioRecord(reply: unknown): { readonly now: number; readonly covered: readonly number[] } {
  const r = numbers(reply, 1, 'portfolio record');
  return { now: r[0]!, covered: r.slice(1) };
}

function numbers(reply: unknown, min: number, what: string): number[] {
  if (!Array.isArray(reply) || reply.length < min) throw new RedisStateError(`${what} script`, `an array of at least ${min} numbers`, reply);
  return reply.map((v) => {
    const n = Number(v);
    if (!Number.isFinite(n)) throw new RedisStateError(`${what} script`, 'numbers', reply);
    return n;
  });
}
