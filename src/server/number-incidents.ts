/**
 * Numbers blocked for everything they send: the provider refuses the credentials (an expired or
 * revoked token, a permission removed: 0, 3, 10, 190, 200) or cannot be reached at all. The engine
 * keeps such messages for a bounded time (transport failures, `MAX_TRANSPORT_ATTEMPTS`); this book
 * makes the incident loud, because only an operator can end it: an error log line naming the number
 * and the code when it starts (and again every `repeatMs` while it lasts, with the failures since),
 * the `sendpool_numbers_blocked` gauge, the dashboard's number marked blocked with the reason, and a
 * warning when the number sends again.
 */
import type { FastifyBaseLogger } from 'fastify';
import { type BlockingCause, TRANSPORT_FAILURES, blockingCause, channelError } from '../core/channel-errors.js';
import type { Clock } from '../core/clock.js';
import type { SendOutcome } from '../core/dispatch/types.js';

/** A number blocked now. */
export interface NumberIncident {
  readonly phone: string;
  readonly cause: BlockingCause;
  /** The provider's code of the last failure, when it gave one. */
  readonly code: number | undefined;
  /** The last failure's reason, as the provider or the transport gave it. */
  readonly reason: string;
  /** Clock time of the first failure of the incident. */
  readonly since: number;
  /** Clock time of the last failure. */
  readonly lastAt: number;
  /** Sends failed for this cause since the incident started. */
  readonly failures: number;
}

interface Open {
  cause: BlockingCause;
  code: number | undefined;
  reason: string;
  since: number;
  lastAt: number;
  failures: number;
  /** Failures already logged (the repeat line gives those since). */
  logged: number;
  loggedAt: number;
}

/** Why a send's outcome blocks its number, when it does. */
export function blockingOf(outcome: SendOutcome): BlockingCause | undefined {
  if (outcome.status !== 'failed') return undefined;
  if (outcome.code !== undefined) return blockingCause(outcome.code);
  // A transport failure that never reached the provider (the channel says so by refusing it).
  return outcome.refused === true && outcome.action?.kind === 'transport' ? TRANSPORT_FAILURES['not-sent'].blocks : undefined;
}

export class NumberIncidents {
  readonly #open = new Map<string, Open>();
  readonly #log: FastifyBaseLogger;
  readonly #clock: Clock;
  readonly #repeatMs: number;

  /** @param repeatMs how often a lasting incident is logged again */
  constructor(log: FastifyBaseLogger, clock: Clock, repeatMs = 60_000) {
    this.#log = log;
    this.#clock = clock;
    this.#repeatMs = repeatMs;
  }

  /** Numbers blocked now. */
  get size(): number {
    return this.#open.size;
  }

  /** A send's result on `phone`: opens, feeds or closes its incident. */
  result(phone: string, outcome: SendOutcome): void {
    const cause = blockingOf(outcome);
    if (cause === undefined) {
      if (outcome.status === 'sent') this.#close(phone);
      return;
    }
    const code = outcome.status === 'failed' ? outcome.code : undefined;
    const reason = (outcome.status === 'failed' ? outcome.reason : undefined) ?? (code !== undefined ? (channelError(code)?.description ?? 'refused') : 'not sent');
    const now = this.#clock.now();
    const open = this.#open.get(phone);
    if (open === undefined) {
      this.#open.set(phone, { cause, code, reason, since: now, lastAt: now, failures: 1, logged: 1, loggedAt: now });
      this.#log.error(
        { number: phone, cause, code: code ?? null, reason },
        cause === 'credentials'
          ? `number ${phone} is blocked: the provider refuses its credentials (code ${code ?? 'none'}); renew the access token or the permission. Its messages wait and end FAILED after their transport tries`
          : `number ${phone} is blocked: the provider cannot be reached (${reason}). Its messages wait and end FAILED after their transport tries`,
      );
      return;
    }
    open.cause = cause;
    open.code = code;
    open.reason = reason;
    open.lastAt = now;
    open.failures++;
    if (now - open.loggedAt >= this.#repeatMs) {
      this.#log.error(
        { number: phone, cause, code: code ?? null, reason, since: open.since, failures: open.failures, failuresSinceLastLine: open.failures - open.logged },
        `number ${phone} is still blocked (${cause}, code ${code ?? 'none'}) for ${Math.round((now - open.since) / 1000)} s`,
      );
      open.logged = open.failures;
      open.loggedAt = now;
    }
  }

  /** The number's incident, when it has one. */
  get(phone: string): NumberIncident | undefined {
    const o = this.#open.get(phone);
    return o === undefined ? undefined : { phone, cause: o.cause, code: o.code, reason: o.reason, since: o.since, lastAt: o.lastAt, failures: o.failures };
  }

  /** Every number blocked now. */
  list(): NumberIncident[] {
    return [...this.#open.keys()].map((phone) => this.get(phone)!);
  }

  #close(phone: string): void {
    const o = this.#open.get(phone);
    if (o === undefined) return;
    this.#open.delete(phone);
    this.#log.warn(
      { number: phone, cause: o.cause, since: o.since, failures: o.failures },
      `number ${phone} sends again after ${Math.round((this.#clock.now() - o.since) / 1000)} s blocked (${o.cause})`,
    );
  }
}
