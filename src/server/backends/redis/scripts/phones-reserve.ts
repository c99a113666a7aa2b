/**
 * Reserves a request's phones (shared-phones.ts): in the campaign's hash, and (with `already_sent`
 * on) in the business's hashes for the template type. A phone another request holds is answered
 * taken (the campaign's) or sent (the business's); one whose holder neither committed nor lives is
 * taken over, its request voided first (the fence: its step will refuse to commit it). A phone
 * already sent is not the campaign's: its reservation there is given back.
 * KEYS: [1] the campaign's phones, then (with `already_sent` on) the business's phones for the type
 *       in the live buckets, newest first ([2] is the bucket new phones go to).
 * ARGV: [1] the request, [2] the orphan age (ms), [3] the campaign hash's TTL (ms), [4] the queue's
 *       prefix (for commit marks and heartbeats), [5] this instance, [6] the buckets' TTL (ms),
 *       [7] how long a void mark is kept (ms), then the phones.
 * Reply: { phones other requests of the campaign hold, phones other requests of the business and
 *        type hold (already sent), the requests not committed whose instance's heartbeat lives that
 *        hold some of them (request, instance, …) }.
 */
import { defineScript } from './codec.js';

export interface PhonesReserveArgs {
  /** `<p>ph:c<company>.<campaign>`. */
  readonly campaignPhones: string;
  /** `<p>sent:b<business>.t<type>.<bucket start>` of the live buckets, newest first; none: the check is off. */
  readonly sentBuckets: readonly string[];
  readonly requestId: string;
  /** A reservation not committed for this long belongs to a request that died before its 202. */
  readonly orphanMs: number;
  /** How long the campaign's phones are kept after its last request (ms). */
  readonly campaignTtlMs: number;
  /** The queue's prefix, with its hash tag. */
  readonly prefix: string;
  readonly instance: string;
  /** How long a bucket is kept (ms). */
  readonly bucketTtlMs: number;
  /** How long a void mark is kept (ms). */
  readonly voidTtlMs: number;
  readonly phones: readonly string[];
}

/** A request that holds phones without a commit mark, and its instance. */
export interface PendingOwner {
  readonly request: string;
  readonly instance: string;
}

export interface PhonesReserveResult {
  /** Phones other requests of the campaign hold. */
  readonly taken: readonly string[];
  /** Phones other requests of the business took for the type within the window. */
  readonly sent: readonly string[];
  /** Requests not committed, of instances whose heartbeat lives, that hold some of the phones. */
  readonly pending: readonly PendingOwner[];
}

export const PHONES_RESERVE = defineScript<PhonesReserveArgs, PhonesReserveResult>({
  name: 'phones-reserve',
  body: `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local mine = ARGV[1] .. '@' .. now .. '@' .. ARGV[5]
local pending = {}
-- Whether another request holds an entry: committed (its 202 left), or alive and recent and not
-- voided. One neither is taken over, and its request voided first (a fence: its step will refuse
-- to commit it, so it can never answer 202 with phones given to another). An alive owner is
-- answered in pending, for the caller to void it if its instance looks dead (requests-void.ts).
local function held(v)
  local at = string.find(v, '@', 1, true)
  local owner = string.sub(v, 1, at - 1)
  if owner == ARGV[1] then return false end
  local mark = redis.call('GET', ARGV[4] .. 'req:' .. owner)
  if mark then return mark ~= 'void' end
  local rest = string.sub(v, at + 1)
  local at2 = string.find(rest, '@', 1, true)
  local stamp = tonumber(string.sub(rest, 1, at2 - 1))
  local instance = string.sub(rest, at2 + 1)
  if redis.call('EXISTS', ARGV[4] .. 'alive:' .. instance) == 1 and now - stamp < tonumber(ARGV[2]) then
    pending[owner] = instance
    return true
  end
  redis.call('SET', ARGV[4] .. 'req:' .. owner, 'void', 'NX', 'PX', ARGV[7])
  return false
end
local taken = {}
local sent = {}
for i = 8, #ARGV do
  local phone = ARGV[i]
  local free = true
  -- A new phone (the common case) costs one command.
  if redis.call('HSETNX', KEYS[1], phone, mine) == 0 then
    if held(redis.call('HGET', KEYS[1], phone)) then
      taken[#taken + 1] = phone
      free = false
    else
      redis.call('HSET', KEYS[1], phone, mine)
    end
  end
  if free and #KEYS > 1 then
    local before = false
    for k = 2, #KEYS do
      local v = redis.call('HGET', KEYS[k], phone)
      if v and held(v) then
        before = true
        break
      end
    end
    if before then
      sent[#sent + 1] = phone
      redis.call('HDEL', KEYS[1], phone)
    else
      redis.call('HSET', KEYS[2], phone, mine)
    end
  end
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
if #KEYS > 1 then redis.call('PEXPIRE', KEYS[2], ARGV[6]) end
local owners = {}
for owner, instance in pairs(pending) do
  owners[#owners + 1] = owner
  owners[#owners + 1] = instance
end
return { taken, sent, owners }
`,
  encode: (a) => ({
    keys: [a.campaignPhones, ...a.sentBuckets],
    argv: [a.requestId, a.orphanMs, a.campaignTtlMs, a.prefix, a.instance, a.bucketTtlMs, a.voidTtlMs, ...a.phones],
  }),
  decode: (reply, read) => {
    const [taken, sent, owners] = read.list(reply, 'reply');
    return {
      taken: read.texts(taken, 'taken'),
      sent: read.texts(sent, 'sent'),
      pending: read.pairs(owners, 'pending').map(([request, instance]) => ({ request, instance })),
    };
  },
});
