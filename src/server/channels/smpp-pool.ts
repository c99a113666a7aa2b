/**
 * The SMPP channel's bind pool: every bind of every SMSC account (smpp-smscs.ts), which of them
 * sends now, and each account's rate cap.
 *
 * - Failover by priority: parts go to the accounts of the lowest priority that has a transmitting
 *   bind up; an account of a higher number sends only while none of a lower one can. Every bind
 *   stays connected whatever its priority, so taking over costs no bind and receipts and replies
 *   keep coming on every receiving bind.
 * - Within the accounts that send, each bind has its own window; the channel fills them in turn,
 *   starting one further each time, so a backlog is spread and a trickle does not always land on
 *   the first bind.
 * - TPS: an account's `tps` is a token bucket (GCRA, core/limits/gcra.ts) charged before a
 *   `submit_sm` is written, on the channel's clock, holding about a tenth of a second's worth.
 *
 * Separate from the link (one connection's life) and the channel (what is sent and answered):
 * which bind carries the next part is a question of its own.
 */
import { gcraAvailable, gcraAvailableAt, gcraTake } from '../../core/limits/gcra.js';
import { SmppLink, type SmppLinkHost } from './smpp-link.js';
import type { SmppModule } from './smpp-package.js';
import type { ResolvedSmsc } from './smpp-smscs.js';
import type { SmppConnection } from './smpp-connection.js';

/** An account's binds and its rate state. */
interface Account {
  readonly smsc: ResolvedSmsc;
  /** Binds that send: transceivers, or transmitters. */
  readonly senders: readonly SmppLink[];
  /** The token bucket when the account has a `tps`: capacity and period (ms) for GCRA. */
  readonly capacity: number;
  readonly period: number;
  /** GCRA state: [tat, rem]. */
  readonly state: Float64Array;
}

/** Counters of one account, for the channel's stats. */
export interface SmscStats {
  readonly name: string;
  readonly priority: number;
  /** Binds up, of those kept. */
  readonly bound: number;
  readonly binds: number;
  /** Sends now (the lowest priority with a transmitting bind up). */
  readonly sending: boolean;
  /** `submit_sm` unanswered on its binds. */
  readonly outstanding: number;
}

/** A bind that may take parts now. */
export interface SendSlot {
  readonly link: SmppLink;
  readonly connection: SmppConnection;
  /** Its window's room. */
  room: number;
  /** Its account (opaque): the key of its tokens in {@link SendPlan.tokens}. */
  readonly account: object;
}

/** What may be written now ({@link SmppPool.sendable}). */
export interface SendPlan {
  readonly slots: SendSlot[];
  /** Tokens left of each account that sends (Infinity: no cap), shared by its binds. */
  readonly tokens: Map<object, number>;
  /** When the next token of an account that has none comes. */
  readonly tokenAt: number | undefined;
}

/**
 * A bucket for `tps` a second with whole-millisecond arithmetic: `capacity` tokens, a tenth of
 * `tps` (at least one), refilling over `period` ms rounded up, so the rate is never above `tps`.
 */
export function tpsBucket(tps: number): { capacity: number; period: number } {
  const capacity = Math.max(1, Math.round(tps / 10));
  return { capacity, period: Math.ceil((capacity * 1000) / tps) };
}

export class SmppPool {
  /** Every bind, senders and receivers. */
  readonly links: readonly SmppLink[];
  /** Accounts by priority, lowest first (the order given among equals). */
  readonly #accounts: readonly Account[];
  #turn = 0;
  #sendingAt: number | undefined;
  #sendingNames: string | null = null;
  /** Some account has sent: from then on, losing all or taking over is a failover. */
  #hasSent = false;
  /** Told once a bind that sends is up. */
  #boundWaiters: (() => void)[] = [];
  readonly #onFailover: (from: string | null, to: string | null) => void;

  constructor(channel: SmppLinkHost, onFailover: (from: string | null, to: string | null) => void) {
    this.#onFailover = onFailover;
    // A bind up: the pool's waiters are told before the channel sends.
    const host: SmppLinkHost = {
      ...channel,
      bound: () => {
        if (this.bound) for (const w of this.#boundWaiters.splice(0)) w();
        channel.bound();
      },
    };
    const links: SmppLink[] = [];
    const accounts: Account[] = [];
    for (const smsc of host.options.smscs) {
      const senders: SmppLink[] = [];
      const sendKind = smsc.bindMode === 'split' ? 'transmitter' : 'transceiver';
      for (let n = 1; n <= smsc.binds; n++) senders.push(new SmppLink(host, smsc, sendKind, n));
      links.push(...senders);
      if (smsc.bindMode === 'split') for (let n = 1; n <= smsc.receiverBinds; n++) links.push(new SmppLink(host, smsc, 'receiver', n));
      const bucket = smsc.tps > 0 ? tpsBucket(smsc.tps) : { capacity: 0, period: 0 };
      accounts.push({ smsc, senders, ...bucket, state: new Float64Array(2) });
    }
    this.links = links;
    this.#accounts = accounts.sort((a, b) => a.smsc.priority - b.smsc.priority);
  }

  start(smpp: SmppModule): void {
    for (const link of this.links) link.start(smpp);
  }

  /** Some bind that sends is up. */
  get bound(): boolean {
    return this.#accounts.some((a) => a.senders.some((l) => l.bound));
  }

  /** Resolves once a bind that sends is up. */
  whenBound(): Promise<void> {
    if (this.bound) return Promise.resolve();
    return new Promise((resolve) => this.#boundWaiters.push(resolve));
  }

  /** Whether `connection` is one of the pool's now (an answer goes only on the one a PDU came on). */
  isCurrent(connection: SmppConnection): boolean {
    return this.links.some((l) => l.connection === connection);
  }

  /** `submit_sm` unanswered on every bind. */
  get outstanding(): number {
    let n = 0;
    for (const l of this.links) n += l.outstanding.size;
    return n;
  }

  /**
   * What may be written now: the binds that send, each with its window's room, starting one
   * further each call; the tokens each account has (Infinity without a cap), to be shared by its
   * binds; and when the next token comes if an account has none.
   */
  sendable(now: number): SendPlan {
    const priority = this.#sendingPriority();
    const slots: SendSlot[] = [];
    const tokens = new Map<object, number>();
    let tokenAt: number | undefined;
    if (priority === undefined) return { slots, tokens, tokenAt };
    for (const a of this.#accounts) {
      if (a.smsc.priority !== priority) continue;
      const available = a.capacity > 0 ? gcraAvailable(a.state[0]!, a.state[1]!, a.capacity, a.period, now) : Infinity;
      if (available === 0) {
        const at = gcraAvailableAt(a.state[0]!, a.state[1]!, a.capacity, a.period, now, 1);
        tokenAt = tokenAt === undefined ? at : Math.min(tokenAt, at);
        continue;
      }
      tokens.set(a, available);
      for (const link of a.senders) {
        const room = a.smsc.window - link.outstanding.size;
        if (link.bound && link.connection && room > 0) slots.push({ link, connection: link.connection, room, account: a });
      }
    }
    // Start one further each time: a trickle is spread over the binds too.
    if (slots.length > 1) slots.push(...slots.splice(0, this.#turn++ % slots.length));
    return { slots, tokens, tokenAt };
  }

  /** Charges `count` parts written at `now` to an account's bucket (`SendSlot.account`). */
  charge(account: object, count: number, now: number): void {
    const a = account as Account;
    if (a.capacity > 0 && count > 0) gcraTake(a.state[0]!, a.state[1]!, a.capacity, a.period, now, count, a.state, 0);
  }

  /** Counters of each account. */
  stats(): SmscStats[] {
    const sending = this.#sendingPriority();
    return this.#accounts.map((a) => {
      const mine = this.links.filter((l) => l.smsc === a.smsc);
      return {
        name: a.smsc.name,
        priority: a.smsc.priority,
        bound: mine.filter((l) => l.bound).length,
        binds: mine.length,
        sending: a.smsc.priority === sending && a.senders.some((l) => l.bound),
        outstanding: mine.reduce((n, l) => n + l.outstanding.size, 0),
      };
    });
  }

  /** On the channel's tick: each bind checks its connection. */
  check(now: number): void {
    for (const l of this.links) l.check(now);
  }

  async close(): Promise<void> {
    await Promise.all(this.links.map((l) => l.close()));
  }

  /** The lowest priority with a sending bind up (undefined: none is up); tells a change once. */
  #sendingPriority(): number | undefined {
    let priority: number | undefined;
    for (const a of this.#accounts) {
      if (a.senders.some((l) => l.bound)) {
        priority = a.smsc.priority;
        break;
      }
    }
    if (priority !== this.#sendingAt) {
      const from = this.#sendingNames;
      const to =
        priority === undefined
          ? null
          : this.#accounts
              .filter((a) => a.smsc.priority === priority && a.senders.some((l) => l.bound))
              .map((a) => a.smsc.name)
              .join(', ');
      this.#sendingAt = priority;
      this.#sendingNames = to;
      // The first bind is not a failover; a change of priority is, losing every account, and
      // sending again after that.
      if (this.#hasSent) this.#onFailover(from, to);
      if (to !== null) this.#hasSent = true;
    }
    return priority;
  }
}
