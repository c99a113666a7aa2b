/**
 * What an instance on Redis takes from the fleet and keeps (redis-persistence.ts writes its steps):
 * chunks into the engine (SharedDispatch.feed), webhook events from the shared outbox into the local
 * delivery queue, SMS into the SMS worker; and, every third of the lease, the renewals of what it
 * holds, its heartbeat, the fleet's backlog and the takeover of a dead instance's events and SMS
 * (its chunks about once a second). Feeds coalesce; one that fails (Redis away) is counted, and the
 * next tries again.
 */
import type { OutgoingSms } from '../../ports/channel.js';
import { writtenId, type WrittenEvent } from '../../ports/persistence.js';
import type { ClaimedEvent, ContactQueue, WorkKind } from './queue.js';
import type { ResetGuard } from './reset.js';
import { fairHold, type SharedDispatch } from './shared-dispatch.js';

export interface InstanceFeedDeps {
  readonly queue: ContactQueue;
  readonly shared: SharedDispatch;
  /** Readies what notifying and signing for these companies needs (before their chunks and events are taken). */
  readonly prepare?: (companyIds: readonly number[]) => Promise<void>;
  /** Runs with the renewals, every third of the lease (at most every second). */
  readonly periodic?: () => Promise<void>;
  /** Events (and runs of ENQUEUED notifications) claimed from the shared outbox: deliver them. */
  readonly deliver: (events: readonly WrittenEvent[]) => void;
  /** SMS claimed from the shared queue: send them. */
  readonly sendSms: (items: readonly OutgoingSms[]) => void;
  /** SMS this instance may take now (its SMS queue's room). */
  readonly smsRoom: () => number;
  /** Work was taken into the engine: dispatch it. */
  readonly onFed: () => void;
  /** A feed failed (Redis away): the next tries again. */
  readonly onError: (error: unknown) => void;
  /**
   * Most webhook events this instance holds for delivery at once.
   * @default 1_000
   */
  readonly maxHeldEvents?: number;
  /** The reset path (reset.ts), once made. @default none */
  readonly reset?: () => ResetGuard | undefined;
}

/** Longest wait of a release for the feed under way (ms). */
const RELEASE_FEED_WAIT_MS = 5_000;

export class InstanceFeed {
  readonly #deps: InstanceFeedDeps;
  /** Webhook events and SMS held: event id (SMS id) -> stream entry id. */
  readonly #held: Record<WorkKind, Map<string, string>> = { events: new Map(), sms: new Map() };
  /** The fleet's backlog as last read (every renewal period), plus what this instance staged since. */
  #backlog = 0;
  #timer: NodeJS.Timeout | undefined;
  #feeding = false;
  /** The feed under way: a release waits for it, so chunks it claimed are released too. */
  #feedDone: Promise<void> | undefined;
  #again = false;
  #closed = false;
  #lastRenew = 0;
  /** Feeds that failed in a row (Redis away). */
  #failures = 0;
  #lastReclaim = 0;

  constructor(deps: InstanceFeedDeps) {
    this.#deps = deps;
  }

  /** Feeds that failed in a row (0 while Redis answers). */
  get failures(): number {
    return this.#failures;
  }

  /**
   * Contacts accepted by every instance and not finished, as last read from Redis (at most one
   * renewal period old) plus what this instance accepted since.
   */
  get backlog(): number {
    return this.#backlog;
  }

  /** Contacts this instance staged since the backlog was read (negative: taken out again). */
  counted(contacts: number): void {
    this.#backlog += contacts;
  }

  /** Webhook events and SMS held here. */
  get held(): number {
    return this.#held.events.size + this.#held.sms.size;
  }

  /** The old streams' entries held here are gone with Redis: forgotten. */
  forgetHeld(): void {
    this.#held.events.clear();
    this.#held.sms.clear();
  }

  /** An event delivered (an SMS answered): no longer held; answers its stream entry, undefined when not held here. */
  done(kind: WorkKind, id: string): string | undefined {
    const held = this.#held[kind];
    const entry = held.get(id);
    if (entry !== undefined) held.delete(id);
    return entry;
  }

  /** Feeds now (after a step with events, a finished send, room in the engine). Feeds coalesce. */
  kick(): void {
    if (this.#closed) return;
    if (this.#feeding) {
      this.#again = true;
      return;
    }
    this.#feeding = true;
    this.#again = false;
    this.#feedDone = this.#feed().finally(() => {
      this.#feeding = false;
      if (this.#closed) return;
      // Asked again while feeding: feed again at once.
      if (this.#again) return this.kick();
      if (this.#timer) clearTimeout(this.#timer);
      // Renewals and takeovers run every third of the lease; a feed also looks for new work then.
      this.#timer = setTimeout(() => this.kick(), Math.max(10, Math.min(1000, Math.floor(this.#deps.queue.leaseMs / 3))));
      this.#timer.unref();
    });
  }

  async #feed(): Promise<void> {
    const { queue, shared } = this.#deps;
    try {
      const now = Date.now();
      // Renewals and takeovers once a renewal period; new work at every feed.
      const periodic = now - this.#lastRenew >= queue.leaseMs / 3;
      if (periodic) {
        this.#lastRenew = now;
        // Redis lost the queue: handled before anything is renewed or claimed.
        const reset = this.#deps.reset?.();
        if (reset) {
          await reset.tick();
          if (reset.handling) return;
        }
        await queue.heartbeat();
        await shared.renew();
        await this.#deps.periodic?.();
        this.#backlog = await queue.backlog();
        for (const kind of ['events', 'sms'] as const) {
          const held = this.#held[kind];
          const lost = new Set(await queue.renewWork(kind, [...held.values()]));
          if (lost.size > 0) for (const [id, entry] of held) if (lost.has(entry)) held.delete(id);
          await this.#take(kind, await queue.reclaimWork(kind, this.#room(kind)));
        }
      }
      // A dead instance's chunks are looked for about once a second (a third of the lease when that
      // is shorter), not once a renewal period: taken over at most that long after its lease lapses.
      const reclaim = now - this.#lastReclaim >= Math.min(1000, queue.leaseMs / 3);
      if (reclaim) this.#lastReclaim = now;
      // No more than an even part of the fleet's backlog: the other instances take the rest, and
      // so ask their share of the numbers for it.
      if ((await shared.feed(this.#deps.prepare, reclaim, fairHold(this.#backlog, queue.instances))) > 0) this.#deps.onFed();
      for (const kind of ['events', 'sms'] as const) {
        const room = this.#room(kind);
        if (room > 0) await this.#take(kind, await queue.claimWork(kind, room));
      }
      this.#failures = 0;
    } catch (e) {
      // A renewal refused with RESET: the reset is handled, and the next feed renews under the new epoch.
      if (
        await this.#deps
          .reset?.()
          ?.recover(e)
          .catch(() => false)
      ) {
        this.#lastRenew = 0;
        return;
      }
      // Redis away: the next feed tries again.
      this.#failures++;
      this.#deps.onError(e);
    }
  }

  #room(kind: WorkKind): number {
    return kind === 'events' ? (this.#deps.maxHeldEvents ?? 1000) - this.#held.events.size : this.#deps.smsRoom();
  }

  async #take(kind: WorkKind, claimed: readonly ClaimedEvent[]): Promise<void> {
    if (claimed.length === 0) return;
    const held = this.#held[kind];
    const items: (WrittenEvent | OutgoingSms)[] = [];
    for (const c of claimed) {
      const item = JSON.parse(c.json) as WrittenEvent | OutgoingSms;
      const id = 'smsId' in item ? item.smsId : writtenId(item);
      if (held.has(id)) continue;
      held.set(id, c.entryId);
      items.push(item);
    }
    if (items.length === 0) return;
    // Their notifications and callbacks are signed with the companies' shared secrets.
    await this.#deps.prepare?.(items.map((e) => ('run' in e ? e.run.companyId : 'replay' in e ? e.replay.companyId : e.companyId)));
    if (kind === 'events') this.#deps.deliver(items as WrittenEvent[]);
    else this.#deps.sendSms(items as OutgoingSms[]);
  }

  /** Stops feeding. */
  stop(): void {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
  }

  /**
   * Gives up what this instance still holds (contacts not sent yet, events not delivered, SMS not
   * sent) so the others take it at once rather than after the lease. Best effort: if Redis does not
   * answer, the lease hands them over.
   */
  async release(): Promise<void> {
    // A feed under way may have claimed chunks in Redis that it has not added to what is held yet:
    // they are released too once it ends (at most RELEASE_FEED_WAIT_MS; the lease does the rest).
    if (this.#feeding && this.#feedDone) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([this.#feedDone, new Promise<void>((r) => (timer = setTimeout(r, RELEASE_FEED_WAIT_MS)))]);
      clearTimeout(timer);
    }
    try {
      await this.#deps.shared.renew(true);
      await this.#deps.queue.heartbeat(true);
      for (const kind of ['events', 'sms'] as const) await this.#deps.queue.renewWork(kind, [...this.#held[kind].values()], true);
    } catch {
      // The lease does it.
    }
  }
}
