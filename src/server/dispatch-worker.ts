/**
 * The dispatch worker: the host loop of docs/dispatch-loop.md with real timers. It polls the
 * engine for the messages that may go now, hands each to the channel (at most `maxInFlight` at
 * once), reports what the channel said, and sleeps until `engine.nextWakeAt()`. The engine decides
 * pace, fairness, retries and failover; the worker only moves messages and turns results into
 * notifications.
 */
import type { Clock } from '../core/clock.js';
import type { Engine } from '../core/engine.js';
import type { ContactOutcome, OutgoingMessage, ReportResult, SendOutcome } from '../core/dispatch/types.js';
import type { Channel } from './ports/channel.js';
import { PassLoop } from './pass-loop.js';
import { SendPacer } from './send-pacer.js';

/** Options of the dispatch worker. */
export interface DispatchOptions {
  /** Most messages taken from the engine by one poll. @default 1000 */
  readonly pollLimit?: number;
  /** Sends waiting for the channel's answer at once (bounds memory and sockets). @default 1000 */
  readonly maxInFlight?: number;
}

export interface DispatchDeps {
  readonly engine: Engine;
  readonly channel: Channel;
  readonly clock: Clock;
  /** Called with each send's result, in the order results arrive. */
  readonly onResult: (message: OutgoingMessage, outcome: SendOutcome, result: ReportResult) => void;
  /** Called with terminal outcomes taken from the engine. */
  readonly onOutcomes: (outcomes: readonly ContactOutcome[]) => void;
  readonly onHandOut?: (messages: readonly OutgoingMessage[]) => void;
  /**
   * Resolves when the hand-outs (and the numbers' charges) are written durably; messages go to the
   * channel only then, and never when it rejects (the durable server). @default none: send at once
   */
  readonly beforeSend?: () => Promise<void>;
  /**
   * The message as the channel sees it (the server on Redis names it by its global contact id), or
   * undefined when it must not be sent from this instance any more (its work was taken over): the
   * engine is then told it went, and nothing else is. `onResult` gets the channel's message.
   * @default the engine's message
   */
  readonly messageForChannel?: (message: OutgoingMessage) => OutgoingMessage | undefined;
  /**
   * Where the channel's answers are handled: in turns of the event loop with the provider's other
   * reports (turns.ts), so a burst of answers does not hold it. @default at once, as they come
   */
  readonly later?: (work: () => void) => void;
  /**
   * A number's per-second rate (0: none): its sends leave no faster than that window allows, so
   * hand-outs the engine paced and the shell held for different times (their write, a restart's
   * catch-up) do not reach the provider together (send-pacer.ts). @default none: sent as they come
   */
  readonly rateOf?: (phone: string) => number;
}

/** Longest a timer is set for: time may be changed under the engine (a paused number resumed by an operator). */
const MAX_SLEEP_MS = 1000;

export class DispatchWorker {
  readonly #deps: DispatchDeps;
  readonly #pollLimit: number;
  readonly #maxInFlight: number;
  readonly #later: (work: () => void) => void;
  /**
   * Messages handed out and not yet reported (waiting for their write, or for the channel). A
   * count, not a set of promises: a send costs two callbacks and no bookkeeping object (this is
   * the per-message path of the whole server).
   */
  #inFlight = 0;
  /** Told when nothing is in flight any more (a shutdown draining). */
  #drained: (() => void)[] = [];
  readonly #loop: PassLoop;
  readonly #pacer: SendPacer | undefined;

  constructor(deps: DispatchDeps, options: DispatchOptions = {}) {
    this.#deps = deps;
    this.#pollLimit = options.pollLimit ?? 1000;
    this.#maxInFlight = options.maxInFlight ?? 1000;
    this.#later = deps.later ?? ((work) => work());
    this.#pacer = deps.rateOf ? new SendPacer({ rateOf: deps.rateOf, now: () => deps.clock.now() }) : undefined;
    this.#loop = new PassLoop(
      () => this.#pass(),
      () => deps.clock.now(),
      MAX_SLEEP_MS,
    );
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /** Asks for a pass soon (after a submit, a status change, a finished send); passes coalesce. */
  kick(): void {
    this.#loop.kick();
  }

  #pass(): void {
    const { engine } = this.#deps;
    const room = this.#maxInFlight - this.#inFlight;
    let handed = 0;
    // The durable server writes each poll's hand-outs before sending them (a step, with its sync):
    // with sends in flight, it polls once a quarter of the room is free rather than for every few
    // answers, so a step carries many hand-outs (measured: fewer, larger steps send more per second).
    const batch = this.#deps.beforeSend && this.#inFlight > 0 ? Math.min(this.#pollLimit, Math.ceil(this.#maxInFlight / 4)) : 1;
    if (room >= batch) {
      const messages = engine.poll({ limit: Math.min(room, this.#pollLimit) });
      handed = messages.length;
      if (handed > 0) this.#deps.onHandOut?.(messages);
      if (handed > 0 && this.#deps.beforeSend) this.#hold(messages, this.#deps.beforeSend());
      else for (const m of messages) this.#send(m);
    }
    this.#takeOutcomes();
    this.#arm(handed, room);
  }

  /** Messages wait for their write; counted in flight meanwhile, so the next pass does not over-poll. */
  #hold(messages: readonly OutgoingMessage[], written: Promise<void>): void {
    this.#inFlight += messages.length;
    written.then(
      () => {
        // Still counted in flight until answered, so a shutdown drains them like any send.
        for (const m of messages) this.#sendCounted(m);
      },
      () => {
        // Not written: never sent. The server has failed closed; a restart resumes from the rows.
        this.#inFlight -= messages.length;
        this.#checkDrained();
      },
    );
  }

  /** Handles the outcomes the engine has now (the durable server takes them before each write). */
  takeOutcomes(): void {
    this.#takeOutcomes();
  }

  #send(m: OutgoingMessage): void {
    this.#inFlight++;
    this.#sendCounted(m);
  }

  /** Hands `m` to the channel; it is already counted in flight. */
  #sendCounted(m: OutgoingMessage): void {
    const out = this.#deps.messageForChannel ? this.#deps.messageForChannel(m) : m;
    if (out === undefined) {
      // Taken over by another instance: the engine is told it went, nothing else is.
      this.#answered(m, m, { status: 'sent' }, false);
      return;
    }
    if (this.#pacer) this.#pacer.offer(out.phone, () => this.#transmit(m, out));
    else this.#transmit(m, out);
  }

  /** Sends `out` (the engine's `m` as the channel sees it) now. */
  #transmit(m: OutgoingMessage, out: OutgoingMessage): void {
    let sending: Promise<SendOutcome>;
    try {
      sending = this.#deps.channel.send(out);
    } catch (e) {
      sending = Promise.reject(e instanceof Error ? e : new Error(String(e)));
    }
    sending.then(
      (outcome) => this.#later(() => this.#answered(m, out, outcome, true)),
      // An unknown failure is a contact retry (the engine's table), never a lost message.
      (e: unknown) => this.#later(() => this.#answered(m, out, { status: 'failed', reason: e instanceof Error ? e.message.slice(0, 200) : 'channel error' }, true)),
    );
  }

  /** The channel answered `out` (the engine's `m` as the channel saw it). */
  #answered(m: OutgoingMessage, out: OutgoingMessage, outcome: SendOutcome, sent: boolean): void {
    try {
      const result = this.#deps.engine.report(m.messageId, outcome);
      if (sent) this.#deps.onResult(out, outcome, result);
    } finally {
      this.#inFlight--;
      this.kick();
      this.#checkDrained();
    }
  }

  #checkDrained(): void {
    if (this.#inFlight > 0 || this.#drained.length === 0) return;
    const drained = this.#drained;
    this.#drained = [];
    for (const done of drained) done();
  }

  #takeOutcomes(): void {
    const outcomes = this.#deps.engine.takeOutcomes();
    if (outcomes.length > 0) this.#deps.onOutcomes(outcomes);
  }

  #arm(handed: number, room: number): void {
    if (this.#loop.stopped) return;
    const wake = this.#deps.engine.nextWakeAt();
    if (wake === null) return this.#loop.wakeAt(null); // idle: the next submit kicks
    const now = this.#deps.clock.now();
    if (wake > now) return this.#loop.wakeAt(wake);
    // More may go now: at once if this pass was full, else when a send finishes (it kicks).
    this.#loop.wakeAt(null);
    if (handed > 0 && handed >= Math.min(room, this.#pollLimit)) this.#loop.kick();
    else if (this.#inFlight === 0) this.#loop.wakeAt(now + 5);
  }

  /** Stops polling and waits up to `drainMs` for the sends in flight to be answered and reported. */
  async stop(drainMs: number): Promise<void> {
    this.#loop.stop();
    if (this.#inFlight > 0) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.#drained.push(resolve);
        timer = setTimeout(resolve, drainMs);
      });
      clearTimeout(timer);
    }
    this.#takeOutcomes();
  }
}
