/**
 * The pace at which sends leave the instance. The engine charges a number's windows when it hands a
 * message out; the message leaves after its write (the durable server, Redis) and behind whatever
 * else holds the event loop (a restart's catch-up, a large step). Those delays differ from poll to
 * poll: a hand-out held 400 ms behind a restart's work and the next one held 20 ms leave together,
 * and the provider sees the engine's paced hand-outs as one burst.
 *
 * So each number's sends leave through the window the engine charged them against: its per-second
 * rate as a GCRA over the times they leave. Its burst is the window's (one second's worth,
 * docs/concepts.md "Limits of a number") less `slackMs` worth, kept back for what may still hold a
 * send between here and the provider (the event loop, a socket being opened): a send that reaches
 * the provider within `slackMs` of leaving keeps the number inside its window there. Hand-outs
 * that left the engine in pace pass at once (the check costs a map lookup); only sends bunched by
 * the shell wait, in the order they came. Waiting sends released late (the event loop held, e.g. by
 * a large request's intake) do not catch up on the time lost: the first goes at once, the next an
 * interval apart.
 */

/** Options of {@link SendPacer}. */
export interface SendPacerOptions {
  /** The number's per-second rate (its fleet entry's, or the channel's default), 0 when it has none (not paced). */
  readonly rateOf: (phone: string) => number;
  /** The clock (ms). */
  readonly now: () => number;
  /**
   * How late after leaving a send may reach the provider with the number still inside its window
   * there: the burst at the exit is this much smaller than the window's. @default 250
   */
  readonly slackMs?: number;
}

interface NumberPace {
  /** GCRA's theoretical arrival time of the next send (ms). */
  tat: number;
  /** When the first waiting send's turn comes (ms): a release later than that by an interval was held. */
  due: number;
  /** Sends waiting for their turn, oldest first. */
  readonly waiting: (() => void)[];
  /** Index of the first waiting send not gone yet. */
  head: number;
}

export class SendPacer {
  readonly #rateOf: (phone: string) => number;
  readonly #now: () => number;
  readonly #slackMs: number;
  readonly #numbers = new Map<string, NumberPace>();
  /** Numbers with sends waiting. */
  readonly #behind = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #timerAt = Number.POSITIVE_INFINITY;

  constructor(options: SendPacerOptions) {
    this.#rateOf = options.rateOf;
    this.#now = options.now;
    this.#slackMs = options.slackMs ?? 250;
  }

  /** Sends waiting for their number's pace. */
  get waiting(): number {
    let n = 0;
    for (const phone of this.#behind) {
      const p = this.#numbers.get(phone)!;
      n += p.waiting.length - p.head;
    }
    return n;
  }

  /** Runs `send` now if `phone` may send now, else once its turn comes (after the sends waiting before it). */
  offer(phone: string, send: () => void): void {
    const rate = this.#rateOf(phone);
    if (!(rate > 0)) return send();
    let p = this.#numbers.get(phone);
    if (p === undefined) this.#numbers.set(phone, (p = { tat: Number.NEGATIVE_INFINITY, due: Number.POSITIVE_INFINITY, waiting: [], head: 0 }));
    if (p.head < p.waiting.length) {
      p.waiting.push(send);
      return;
    }
    const now = this.#now();
    const at = this.#turn(p, rate, now);
    if (at <= now) return send();
    p.due = at;
    p.waiting.push(send);
    this.#behind.add(phone);
    this.#arm(at);
  }

  /** When the number may send next, charging the send when that is now. */
  #turn(p: NumberPace, rate: number, now: number): number {
    const interval = 1000 / rate;
    const at = p.tat - this.#tolerance(rate);
    if (at > now) return at;
    p.tat = Math.max(p.tat, now) + interval;
    return now;
  }

  /** GCRA's tolerance: the window's burst (one second's worth) less the slack's worth, then one every interval. */
  #tolerance(rate: number): number {
    const burst = Math.max(1, rate - Math.ceil((this.#slackMs * rate) / 1000));
    return (burst - 1) * (1000 / rate);
  }

  #arm(at: number): void {
    if (at >= this.#timerAt) return;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timerAt = at;
    this.#timer = setTimeout(() => this.#release(), Math.max(0, Math.ceil(at - this.#now())));
    // The server's socket keeps the process alive; a shutdown's drain waits for these sends.
    this.#timer.unref?.();
  }

  /** Lets go the sends whose turn came; arms the timer for the next. */
  #release(): void {
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
    const now = this.#now();
    let next = Number.POSITIVE_INFINITY;
    for (const phone of this.#behind) {
      const p = this.#numbers.get(phone)!;
      const rate = this.#rateOf(phone);
      // Released later than its turn by more than an interval: the event loop was held. The sends
      // that held back do not catch up: the next goes now and the others an interval apart, so they
      // do not reach the provider bunched with those the hold kept between here and the provider.
      if (rate > 0 && now - p.due > 1000 / rate) p.tat = Math.max(p.tat, now + this.#tolerance(rate));
      while (p.head < p.waiting.length) {
        // A number that lost its per-second rate meanwhile: what waits goes now.
        const at = rate > 0 ? this.#turn(p, rate, now) : now;
        if (at > now) {
          p.due = at;
          next = Math.min(next, at);
          break;
        }
        const send = p.waiting[p.head]!;
        p.waiting[p.head++] = noop;
        send();
      }
      if (p.head >= p.waiting.length) {
        p.waiting.length = 0;
        p.head = 0;
        this.#behind.delete(phone);
      } else if (p.head > 1024 && p.head * 2 > p.waiting.length) {
        p.waiting.splice(0, p.head);
        p.head = 0;
      }
    }
    if (next !== Number.POSITIVE_INFINITY) this.#arm(next);
  }
}

function noop(): void {}
