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
 *
 * "Already sent" (`alreadySentWindowMs`) is reserved in the same script, the same way: the phones a
 * business took for a template type, in a hash per time bucket (`<p>sent:b<business>.t<type>.<start>`,
 * 1/24 of the window each, kept for the window and two buckets), phone -> `<request>@<ms>@<instance>`.
 * A phone another request holds in a live bucket is answered already sent; a free one is written
 * to the current bucket. The buckets are chosen by the server's clock, so every instance of a fleet
 * reads the same keys.
 */
import type { PhoneSet } from '../../../contract/rejection.js';
import { runScript, script, type RedisScriptClient } from '../../../redis/script-runner.js';
import { liveSentBuckets, sentBucketMs } from '../../lib/sent-buckets.js';

/** A reservation not committed for this long belongs to a request that died before its 202. */
export const ORPHAN_MS = 60_000;
/**
 * How long a reservation waits for requests in progress (of live instances) that hold some of its
 * phones to be answered, before it calls them taken (duplicated).
 */
export const PENDING_WAIT_MS = 3_000;
/** How long a campaign's phones are remembered after its last request (as a settled campaign's). */
export const PHONES_TTL_MS = 7 * 86_400_000;
/** How long a request's commit mark is kept. */
export const COMMIT_TTL_MS = 30 * 86_400_000;

/**
 * KEYS: [1] the campaign's phones, then (with `already_sent` on) the business's phones for the type
 * in the live buckets, newest first ([2] is the bucket new phones go to). ARGV: [1] request id,
 * [2] orphan age (ms), [3] TTL (ms), [4] the queue prefix (for commit marks and heartbeats), [5]
 * this instance, [6] the buckets' TTL (ms), [7] how long a void mark is kept (ms), then the phones.
 * Returns the phones other requests of the campaign hold, the phones other requests of the
 * business and type hold (already sent), and the requests not committed whose instance's
 * heartbeat lives that hold some of them (request, instance, …).
 * A phone already sent is not the campaign's: its reservation there is given back.
 */
const RESERVE = script(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local mine = ARGV[1] .. '@' .. now .. '@' .. ARGV[5]
local pending = {}
-- Whether another request holds an entry: committed (its 202 left), or alive and recent and not
-- voided. One neither is taken over, and its request voided first (a fence: its step will refuse
-- to commit it, so it can never answer 202 with phones given to another). An alive owner is
-- answered in pending, for the caller to void it if its instance looks dead (VOID).
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
`);

/**
 * The fence: voids requests that have no commit mark (`<p>req:<request>` = `void`): their phones
 * are free, and the step script refuses to commit them (they answer an error, never a 202).
 * KEYS: the requests' marks (one Cluster slot: the queue's tag). ARGV: [1] how long the mark is
 * kept (ms), then the request ids. Returns those voided (a request committed meanwhile is not).
 */
const VOID = script(`
local out = {}
for i = 1, #KEYS do
  redis.call('SET', KEYS[i], 'void', 'NX', 'PX', ARGV[1])
  if redis.call('GET', KEYS[i]) == 'void' then out[#out + 1] = ARGV[i + 1] end
end
return out
`);

/** KEYS: hashes of phones. ARGV: [1] request id, then phones: those it holds in any of them are given back. */
const RELEASE = script(`
local prefix = ARGV[1] .. '@'
for k = 1, #KEYS do
  for i = 2, #ARGV do
    local v = redis.call('HGET', KEYS[k], ARGV[i])
    if v and string.sub(v, 1, string.len(prefix)) == prefix then redis.call('HDEL', KEYS[k], ARGV[i]) end
  end
end
return 1
`);

/** What a request's reservation found: the campaign's phones other requests hold, and the business's for the type. */
export interface Reserved {
  readonly taken: PhoneSet;
  /** Phones other requests of the business took for the type within the window (`already_sent`). */
  readonly sent: PhoneSet;
  /** Requests not committed, of instances whose heartbeat lives, that hold some of the phones. */
  readonly pending: readonly PendingOwner[];
}

/** A request that holds phones without a commit mark, and its instance. */
export interface PendingOwner {
  readonly request: string;
  readonly instance: string;
}

/** The commands besides scripts the fence's look at instances needs (an ioredis `Redis` or `Cluster`). */
export interface PhonesClient extends RedisScriptClient {
  call(command: string, ...args: (string | number)[]): Promise<unknown>;
}

/** The business and type of a request, and the clock time buckets are chosen by. */
export interface SentScope {
  readonly businessId: number;
  readonly typeId: number;
  readonly now: number;
}

const NONE: PhoneSet = { has: () => false };

export class SharedPhones {
  readonly #client: PhonesClient;
  readonly #prefix: string;
  readonly #instance: string;
  readonly #windowMs: number;

  /**
   * @param prefix the queue's prefix with its hash tag, e.g. `sendpool:{queue}:`
   * @param instance this instance's consumer name (its heartbeat's)
   * @param alreadySentWindowMs how long a business's phones per type are kept (0: the check is off)
   */
  constructor(client: PhonesClient, prefix: string, instance: string, alreadySentWindowMs = 0) {
    this.#client = client;
    this.#prefix = prefix;
    this.#instance = instance;
    this.#windowMs = alreadySentWindowMs;
  }

  #key(companyId: number, campaignId: number): string {
    return `${this.#prefix}ph:c${companyId}.${campaignId}`;
  }

  /**
   * The keys of a business's phones for a type in the buckets live at `now`, newest first:
   * `<p>sent:b<business>.t<type>.<bucket start>`, each kept for the window and a bucket past its start.
   */
  #sentKeys(scope: SentScope | undefined): string[] {
    if (scope === undefined || this.#windowMs <= 0) return [];
    return liveSentBuckets(this.#windowMs, scope.now)
      .reverse()
      .map((start) => `${this.#prefix}sent:b${scope.businessId}.t${scope.typeId}.${start}`);
  }

  /**
   * Reserves the phones for the request, in the campaign and (with `scope`, the check on) for the
   * business and type: answers those other requests hold in each.
   */
  async reserve(companyId: number, campaignId: number, requestId: string, phones: readonly string[], scope?: SentScope): Promise<Reserved> {
    if (phones.length === 0) return { taken: NONE, sent: NONE, pending: [] };
    const sentKeys = this.#sentKeys(scope);
    const ttl = this.#windowMs + 2 * sentBucketMs(this.#windowMs);
    const [taken, sent, owners] = (await runScript(
      this.#client,
      RESERVE,
      [this.#key(companyId, campaignId), ...sentKeys],
      [requestId, ORPHAN_MS, PHONES_TTL_MS, this.#prefix, this.#instance, ttl, COMMIT_TTL_MS, ...phones],
    )) as [string[], string[], string[]];
    const pending: PendingOwner[] = [];
    for (let i = 0; i + 1 < owners.length; i += 2) pending.push({ request: owners[i]!, instance: owners[i + 1]! });
    return { taken: setOf(taken), sent: setOf(sent), pending };
  }

  /**
   * Reserves as {@link reserve}; phones held by requests not committed whose instance looks dead
   * (its connection to Redis is gone: {@link deadInstances}) are taken over
   * at once, their requests voided first (they can never be answered 202 then). Phones of a
   * request alive and in progress stay its own: they are reserved again until it is answered (a
   * 202 commits them: taken, duplicated; anything else frees them), for {@link PENDING_WAIT_MS}
   * at most, then answered taken.
   */
  async reserveTakingOver(companyId: number, campaignId: number, requestId: string, phones: readonly string[], scope?: SentScope): Promise<Reserved> {
    const started = Date.now();
    for (let round = 0; ; round++) {
      const reserved = await this.reserve(companyId, campaignId, requestId, phones, scope);
      if (reserved.pending.length === 0) return reserved;
      if ((await this.voidDead(reserved.pending)).length > 0) continue;
      // Alive and in progress: its answer is near (a 202 commits them, anything else gives them
      // back), so wait for it a little rather than call its phones duplicated while it may fail.
      if (Date.now() - started >= PENDING_WAIT_MS) return reserved;
      await new Promise((resolve) => setTimeout(resolve, Math.min(250, 25 * 2 ** round)));
    }
  }

  /** Voids the requests of `owners` whose instance looks dead; answers those voided. */
  async voidDead(owners: readonly PendingOwner[]): Promise<string[]> {
    const dead = await deadInstances(this.#client, this.#prefix, [...new Set(owners.map((o) => o.instance))]);
    const requests = owners.filter((o) => dead.has(o.instance)).map((o) => o.request);
    return requests.length === 0 ? [] : this.void(requests);
  }

  /** Voids requests that have no commit mark (the fence); answers those voided. */
  async void(requests: readonly string[]): Promise<string[]> {
    if (requests.length === 0) return [];
    return (await runScript(
      this.#client,
      VOID,
      requests.map((r) => `${this.#prefix}req:${r}`),
      [COMMIT_TTL_MS, ...requests],
    )) as string[];
  }

  /** Gives back what the request holds (it ended without a 202). Best effort: an orphan is taken over later. */
  async release(companyId: number, campaignId: number, requestId: string, phones: readonly string[], scope?: SentScope): Promise<void> {
    if (phones.length === 0) return;
    await runScript(this.#client, RELEASE, [this.#key(companyId, campaignId), ...this.#sentKeys(scope)], [requestId, ...phones]);
  }

  /**
   * Gives back a phone the request's contact took for its business and type (the contact ended
   * FAILED or EXPIRED without reaching the recipient); only the request's own hold goes.
   */
  async releaseSent(businessId: number, typeId: number, requestId: string, phone: string, now: number): Promise<void> {
    const keys = this.#sentKeys({ businessId, typeId, now });
    if (keys.length === 0) return;
    await runScript(this.#client, RELEASE, keys, [requestId, phone]);
  }
}

/**
 * The instances among `instances` that look dead: their heartbeat (`<p>alive:<instance>`) lapsed,
 * or it names a connection (on one Redis the heartbeat carries its connection's `CLIENT ID`) that
 * Redis no longer has: the process died and its socket closed, or it lost Redis (a partition; the
 * fence keeps that safe: its request is voided and never answered 202). A heartbeat without one (a
 * Redis Cluster: a connection per node) is alive until it lapses; so is every instance with a
 * heartbeat when `CLIENT LIST` is refused (a managed Redis).
 */
export async function deadInstances(client: PhonesClient, prefix: string, instances: readonly string[]): Promise<Set<string>> {
  const dead = new Set<string>();
  const connections = new Map<string, string>();
  for (const instance of instances) {
    const beat = (await client.call('GET', `${prefix}alive:${instance}`)) as string | null;
    if (beat === null) dead.add(instance);
    else if (beat.startsWith('id:')) connections.set(instance, beat.slice(3));
  }
  if (connections.size === 0) return dead;
  let list: string;
  try {
    list = String(await client.call('CLIENT', 'LIST', 'ID', ...new Set(connections.values())));
  } catch {
    // CLIENT LIST refused (a managed Redis): a holder with a live heartbeat counts as alive.
    return dead;
  }
  const live = new Set<string>();
  for (const m of list.matchAll(/(?:^|\s)id=(\d+)/g)) live.add(m[1]!);
  for (const [instance, id] of connections) if (!live.has(id)) dead.add(instance);
  return dead;
}

function setOf(phones: readonly string[]): PhoneSet {
  if (phones.length === 0) return NONE;
  const set = new Set(phones);
  return { has: (phone) => set.has(phone) };
}
