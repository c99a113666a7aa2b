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
import type { RedisScriptClient } from '../../../redis/script-runner.js';
import { liveSentBuckets, sentBucketMs } from '../../lib/sent-buckets.js';
import { callScript } from './scripts/codec.js';
import { PHONES_RELEASE } from './scripts/phones-release.js';
import { PHONES_RESERVE, type PendingOwner } from './scripts/phones-reserve.js';
import { REQUESTS_VOID } from './scripts/requests-void.js';

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

/** What a request's reservation found: the campaign's phones other requests hold, and the business's for the type. */
export interface Reserved {
  readonly taken: PhoneSet;
  /** Phones other requests of the business took for the type within the window (`already_sent`). */
  readonly sent: PhoneSet;
  /** Requests not committed, of instances whose heartbeat lives, that hold some of the phones. */
  readonly pending: readonly PendingOwner[];
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
    const { taken, sent, pending } = await callScript(this.#client, PHONES_RESERVE, {
      campaignPhones: this.#key(companyId, campaignId),
      sentBuckets: sentKeys,
      requestId,
      orphanMs: ORPHAN_MS,
      campaignTtlMs: PHONES_TTL_MS,
      prefix: this.#prefix,
      instance: this.#instance,
      bucketTtlMs: ttl,
      voidTtlMs: COMMIT_TTL_MS,
      phones,
    });
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
    return callScript(this.#client, REQUESTS_VOID, { prefix: this.#prefix, requests, voidTtlMs: COMMIT_TTL_MS });
  }

  /** Gives back what the request holds (it ended without a 202). Best effort: an orphan is taken over later. */
  async release(companyId: number, campaignId: number, requestId: string, phones: readonly string[], scope?: SentScope): Promise<void> {
    if (phones.length === 0) return;
    await callScript(this.#client, PHONES_RELEASE, { hashes: [this.#key(companyId, campaignId), ...this.#sentKeys(scope)], requestId, phones });
  }

  /**
   * Gives back a phone the request's contact took for its business and type (the contact ended
   * FAILED or EXPIRED without reaching the recipient); only the request's own hold goes.
   */
  async releaseSent(businessId: number, typeId: number, requestId: string, phone: string, now: number): Promise<void> {
    const keys = this.#sentKeys({ businessId, typeId, now });
    if (keys.length === 0) return;
    await callScript(this.#client, PHONES_RELEASE, { hashes: keys, requestId, phones: [phone] });
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
