/**
 * "A phone goes once per campaign" on the server on Redis: requests of one campaign posted to
 * different instances must not both take a phone. Before its intake runs, a request reserves its
 * phones in the campaign's hash (one script: a phone held by another request is answered taken);
 * the 202's step marks the request committed. A request that ends without a 202 gives its phones
 * back. One whose instance died between the two leaves a reservation that is not committed: a
 * later request takes it over once that instance's heartbeat has lapsed (the lease: it renews it
 * every third of it) or the reservation is older than {@link ORPHAN_MS}, so a client's retry of a
 * request that never got its answer is refused as duplicated only within the lease.
 *
 * Keys, under the queue's hash tag: `<p>ph:c<company>.<campaign>` phone ->
 * `<request>@<ms>@<instance>`, kept {@link PHONES_TTL_MS} after the campaign's last request;
 * `<p>req:<request>` the commit mark (written by the step script), kept {@link COMMIT_TTL_MS};
 * `<p>alive:<instance>` the instance's heartbeat (redis-persistence.ts).
 */
import type { PhoneSet } from '../../contract/rejection.js';
import { runScript, script, type RedisScriptClient } from '../../redis/script-runner.js';

/** A reservation not committed for this long belongs to a request that died before its 202. */
export const ORPHAN_MS = 60_000;
/** How long a campaign's phones are remembered after its last request (as a settled campaign's). */
export const PHONES_TTL_MS = 7 * 86_400_000;
/** How long a request's commit mark is kept. */
export const COMMIT_TTL_MS = 30 * 86_400_000;

/**
 * KEYS: [1] the campaign's phones. ARGV: [1] request id, [2] orphan age (ms), [3] TTL (ms), [4] the
 * queue prefix (for commit marks and heartbeats), [5] this instance, then the phones. Returns the
 * phones other requests hold.
 */
const RESERVE = script(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local mine = ARGV[1] .. '@' .. now .. '@' .. ARGV[5]
local taken = {}
for i = 6, #ARGV do
  -- A new phone (the common case) costs one command.
  if redis.call('HSETNX', KEYS[1], ARGV[i], mine) == 0 then
    local v = redis.call('HGET', KEYS[1], ARGV[i])
    local at = string.find(v, '@', 1, true)
    local owner = string.sub(v, 1, at - 1)
    if owner ~= ARGV[1] then
      local rest = string.sub(v, at + 1)
      local at2 = string.find(rest, '@', 1, true)
      local stamp = tonumber(string.sub(rest, 1, at2 - 1))
      local alive = redis.call('EXISTS', ARGV[4] .. 'alive:' .. string.sub(rest, at2 + 1)) == 1
      if redis.call('EXISTS', ARGV[4] .. 'req:' .. owner) == 1 or (alive and now - stamp < tonumber(ARGV[2])) then
        taken[#taken + 1] = ARGV[i]
      else
        redis.call('HSET', KEYS[1], ARGV[i], mine)
      end
    end
  end
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return taken
`);

/** KEYS: [1] the campaign's phones. ARGV: [1] request id, then phones: those it holds are given back. */
const RELEASE = script(`
local prefix = ARGV[1] .. '@'
for i = 2, #ARGV do
  local v = redis.call('HGET', KEYS[1], ARGV[i])
  if v and string.sub(v, 1, string.len(prefix)) == prefix then redis.call('HDEL', KEYS[1], ARGV[i]) end
end
return 1
`);

export class SharedPhones {
  readonly #client: RedisScriptClient;
  readonly #prefix: string;
  readonly #instance: string;

  /**
   * @param prefix the queue's prefix with its hash tag, e.g. `sendpool:{queue}:`
   * @param instance this instance's consumer name (its heartbeat's)
   */
  constructor(client: RedisScriptClient, prefix: string, instance: string) {
    this.#client = client;
    this.#prefix = prefix;
    this.#instance = instance;
  }

  #key(companyId: number, campaignId: number): string {
    return `${this.#prefix}ph:c${companyId}.${campaignId}`;
  }

  /** Reserves the phones for the request; answers the set of those other requests of the campaign hold. */
  async reserve(companyId: number, campaignId: number, requestId: string, phones: readonly string[]): Promise<PhoneSet> {
    if (phones.length === 0) return { has: () => false };
    const taken = (await runScript(this.#client, RESERVE, [this.#key(companyId, campaignId)], [requestId, ORPHAN_MS, PHONES_TTL_MS, this.#prefix, this.#instance, ...phones])) as string[];
    const set = new Set(taken);
    return { has: (phone) => set.has(phone) };
  }

  /** Gives back what the request holds (it ended without a 202). Best effort: an orphan is taken over later. */
  async release(companyId: number, campaignId: number, requestId: string, phones: readonly string[]): Promise<void> {
    if (phones.length === 0) return;
    await runScript(this.#client, RELEASE, [this.#key(companyId, campaignId)], [requestId, ...phones]);
  }
}
