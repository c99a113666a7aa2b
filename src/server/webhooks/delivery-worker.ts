/**
 * The delivery worker: drives the events' {@link Outbox} over real HTTP. It takes due attempts,
 * signs each (Standard Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature`, signed at
 * every attempt), POSTs the JSON with a timeout, and settles the result; the outbox decides the
 * backoff, the dead letters and what is due next. Concurrency is bounded per target (origin) and
 * overall, so a slow receiver cannot take every connection and memory stays bounded.
 *
 * A failed attempt is reported with what the outbox needs to tell a receiver that is down from one
 * event's broken path: `connect` when no connection could be opened (answer.ts), and for an HTTP
 * error status the first 256 bytes of the answer (`HTTP 413: payload too large`), which the dead
 * letter carries. A 2xx answer's body is drained, never read into memory.
 */
import http from 'node:http';
import https from 'node:https';
import type { Clock } from '../../core/clock.js';
import type { AttemptResult, DeliveryAttempt, DeliveryOutcome, Outbox } from '../../events/outbox.js';
import { httpAttemptResult } from '../../events/outbox.js';
import { MissingPeerError } from '../../runtime/peers.js';
import { signWebhook } from '../../events/signing.js';
import { PassLoop, settleWithin } from '../pass-loop.js';
import { ANSWER_BYTES, type Answer, attemptFailure, WebhookAttemptError } from './answer.js';
import { safeLookup } from './safe-lookup.js';
import { loadUndici, undiciImport, UndiciTransport, type UndiciImport, type UndiciTarget } from './undici-transport.js';

/** Options of the delivery worker. */
export interface DeliveryOptions {
  /**
   * Time an attempt may take before it is abandoned as failed. Keep it below the outbox's
   * `attemptTimeoutMs` so the outbox never re-sends an attempt that is still running.
   * @default 10_000
   */
  readonly requestTimeoutMs?: number;
  /** Attempts in flight to one target (scheme, host and port). @default 8 */
  readonly concurrencyPerTarget?: number;
  /** Attempts in flight overall. @default 256 */
  readonly maxInFlight?: number;
  /**
   * How POSTs go out: undici's pools (about half the CPU a delivery, docs/benchmarks.md), or
   * Node's `http`/`https`. `'auto'` takes undici when the optional package is installed.
   * @default 'auto'
   */
  readonly transport?: 'auto' | 'undici' | 'node';
}

interface Deps {
  readonly outbox: Outbox;
  readonly clock: Clock;
  /** The signing secret(s) of a company. */
  readonly secretOf: (companyId: number) => string;
  readonly allowPrivateTargets: boolean;
  readonly onAttempt?: (family: string, result: 'success' | 'failure') => void;
  readonly onOutcomes?: (outcomes: readonly DeliveryOutcome[]) => void;
  /**
   * Called at each pass before the due attempts are taken: a host that keeps events outside the
   * outbox until a receiver has room (a request's ENQUEUED notifications) builds them in now.
   * @default none
   */
  readonly feed?: (now: number) => void;
  readonly userAgent: string;
}

interface Target {
  inFlight: number;
  readonly waiting: DeliveryAttempt[];
  /** The target's URLs (paths) with attempts running or waiting, or whose last attempt failed. */
  readonly paths: Map<string, Path>;
}

/**
 * How the worker's POSTs go out: Node's `http`/`https` agents; undici's pools; or not decided yet
 * (transport 'auto' or 'undici' while undici's import is under way: decided at the first POST).
 */
type Transport = { readonly kind: 'node' } | { readonly kind: 'undici'; readonly pools: UndiciTransport } | { readonly kind: 'awaiting-undici' };

const NODE: Transport = Object.freeze({ kind: 'node' });
const AWAITING_UNDICI: Transport = Object.freeze({ kind: 'awaiting-undici' });

/** One URL of a target: what runs, what waits for it, and how its last attempt ended. */
interface Path {
  inFlight: number;
  /** Its last attempt succeeded. Until then (a new path, or one that failed) one attempt at a time. */
  proven: boolean;
  /** Attempts taken that wait for the path's own limit (not for the target's). */
  readonly parked: DeliveryAttempt[];
}

export class DeliveryWorker {
  readonly #deps: Deps;
  readonly #timeoutMs: number;
  readonly #perTarget: number;
  readonly #maxInFlight: number;
  readonly #targets = new Map<string, Target>();
  readonly #http: http.Agent;
  readonly #https: https.Agent;
  readonly #lookup: ReturnType<typeof safeLookup>;
  #transport: Transport;
  /** The `transport` option. */
  readonly #asked: 'auto' | 'undici' | 'node';
  readonly #running = new Set<Promise<void>>();
  readonly #parsed = new Map<string, ParsedTarget>();
  #inFlight = 0;
  #queued = 0;
  readonly #loop: PassLoop;

  constructor(deps: Deps, options: DeliveryOptions = {}) {
    this.#deps = deps;
    this.#timeoutMs = options.requestTimeoutMs ?? 10_000;
    this.#perTarget = options.concurrencyPerTarget ?? 8;
    this.#maxInFlight = options.maxInFlight ?? 256;
    this.#http = new http.Agent({ keepAlive: true, maxSockets: this.#perTarget });
    this.#https = new https.Agent({ keepAlive: true, maxSockets: this.#perTarget });
    this.#lookup = safeLookup(deps.allowPrivateTargets);
    this.#asked = options.transport ?? 'auto';
    this.#transport = this.#asked === 'node' ? NODE : this.#choose(undiciImport());
    this.#loop = new PassLoop(
      () => this.#pass(),
      () => deps.clock.now(),
    );
  }

  /** Attempts running now. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Asks for a pass soon (after an enqueue); passes coalesce. */
  kick(): void {
    this.#loop.kick();
  }

  #pass(): void {
    const { outbox, clock } = this.#deps;
    const now = clock.now();
    const room = this.#maxInFlight - this.#inFlight - this.#queued;
    if (room > 0) {
      this.#deps.feed?.(now);
      // One batch of due attempts per pass, spread over the targets' own slots.
      for (const attempt of outbox.take(now, room)) {
        const key = this.#request(attempt.event.url).origin;
        let target = this.#targets.get(key);
        if (!target) this.#targets.set(key, (target = { inFlight: 0, waiting: [], paths: new Map() }));
        target.waiting.push(attempt);
        this.#queued++;
        this.#drain(key, target);
      }
    }
    const outcomes = outbox.takeOutcomes();
    if (outcomes.length > 0) {
      this.#deps.onOutcomes?.(outcomes);
      // Events ended in this pass (dead letters, time-outs) left room the feed could fill: another
      // pass, which the outbox's own wake-up would not bring when it has nothing left.
      if (this.#deps.feed) this.kick();
    }
    this.#arm();
  }

  /**
   * Starts waiting attempts of a target while it has free slots; forgets an idle target. One URL
   * (path) of a target takes all its slots but one once it answered, and a path whose last attempt
   * failed (or that has not answered yet) one slot:
   * a path that hangs or fails cannot hold the connections its target's other paths need
   * (docs/server.md, "Webhook delivery"). Attempts over their path's limit are parked there, outside
   * the worker's bound, and start as the path's own attempts end.
   */
  #drain(key: string, target: Target): void {
    // After stop() nothing starts: what waits stays in the outbox, which the snapshot keeps.
    while (!this.#loop.stopped && target.inFlight < this.#perTarget && target.waiting.length > 0) {
      const attempt = target.waiting.shift()!;
      this.#queued--;
      const url = attempt.event.url;
      let path = target.paths.get(url);
      if (path === undefined) target.paths.set(url, (path = { inFlight: 0, proven: false, parked: [] }));
      if (path.inFlight >= this.#pathLimit(path)) {
        path.parked.push(attempt);
        continue;
      }
      this.#start(key, target, path, attempt);
    }
    this.#forgetIdle(key, target);
  }

  /**
   * The most attempts a path may have running: all the target's slots but one once its last
   * attempt succeeded; one before (a path that hangs holds one connection until its first answer,
   * not every connection its events find free).
   */
  #pathLimit(path: Path): number {
    return path.proven ? Math.max(1, this.#perTarget - 1) : 1;
  }

  #start(key: string, target: Target, path: Path, attempt: DeliveryAttempt): void {
    // An attempt that waited past its deadline has timed out in the outbox and will be offered
    // again: sending it now would only make a duplicate.
    if (this.#deps.clock.now() >= attempt.deadline) return;
    target.inFlight++;
    path.inFlight++;
    this.#inFlight++;
    const run = this.#attempt(attempt).then(
      (ok) => this.#ended(key, target, attempt.event.url, path, ok),
      () => this.#ended(key, target, attempt.event.url, path, false),
    );
    this.#running.add(run);
    void run.finally(() => this.#running.delete(run));
  }

  #ended(key: string, target: Target, url: string, path: Path, ok: boolean): void {
    target.inFlight--;
    path.inFlight--;
    this.#inFlight--;
    path.proven = ok;
    // The path's parked attempts start as its limit allows (all of them again once it succeeds).
    while (!this.#loop.stopped && path.parked.length > 0 && path.inFlight < this.#pathLimit(path) && target.inFlight < this.#perTarget) {
      this.#start(key, target, path, path.parked.shift()!);
    }
    if (path.inFlight === 0 && path.parked.length === 0 && path.proven) target.paths.delete(url);
    else if (target.paths.size > PATHS_KEPT) this.#forgetHealthyPaths(target);
    this.#drain(key, target);
    this.kick();
  }

  /** Drops the idle paths of a target that has too many (SMS callback URLs are chosen per item). */
  #forgetHealthyPaths(target: Target): void {
    for (const [url, p] of target.paths) if (p.inFlight === 0 && p.parked.length === 0) target.paths.delete(url);
  }

  /** Callback URLs are chosen per SMS item: a map of every origin ever seen would only grow. */
  #forgetIdle(key: string, target: Target): void {
    if (target.inFlight > 0 || target.waiting.length > 0 || this.#targets.get(key) !== target) return;
    for (const p of target.paths.values()) if (p.parked.length > 0 || !p.proven) return;
    this.#targets.delete(key);
  }

  /** One POST of an attempt, settled in the outbox; true when the receiver took it. */
  async #attempt(a: DeliveryAttempt): Promise<boolean> {
    const { outbox, clock, secretOf } = this.#deps;
    let result: AttemptResult;
    try {
      const headers = signWebhook({ id: a.event.id, now: clock.now(), body: a.event.body, secret: secretOf(a.event.companyId) });
      const answer = await this.#post(a.event.url, a.event.body, headers);
      result = httpAttemptResult(answer.status, answer.body);
    } catch (e) {
      result = attemptFailure(e);
    }
    this.#deps.onAttempt?.(a.event.family, result.ok ? 'success' : 'failure');
    outbox.settle(a.event.id, a.attempt, result, clock.now());
    return result.ok;
  }

  /**
   * A URL as a request needs it, parsed once: events of one configuration share a URL, and parsing
   * it for every attempt (twice: its target, its request) was a visible share of a delivery's cost.
   * Bounded, since SMS callback URLs are chosen per item.
   */
  #request(url: string): ParsedTarget {
    let parsed = this.#parsed.get(url);
    if (parsed === undefined) {
      parsed = parseTarget(url);
      if (this.#parsed.size >= PARSED_KEPT) this.#parsed.clear();
      this.#parsed.set(url, parsed);
    }
    return parsed;
  }

  /** The transport for undici's import as it stands (transport 'auto' or 'undici'). */
  #choose(undici: UndiciImport): Transport {
    switch (undici.state) {
      case 'importing':
        return AWAITING_UNDICI;
      case 'missing':
        if (this.#asked === 'undici') throw new MissingPeerError('undici', "The webhooks' transport 'undici'", { hint: "or transport 'auto' or 'node'" });
        return NODE;
      case 'installed':
        return { kind: 'undici', pools: new UndiciTransport(undici.undici, { perTarget: this.#perTarget, timeoutMs: this.#timeoutMs, userAgent: this.#deps.userAgent, lookup: this.#lookup }) };
    }
  }

  #post(url: string, body: string, signature: Record<string, string>): Promise<Answer> {
    const transport = this.#transport;
    if (transport.kind === 'awaiting-undici') {
      // undici's import has not settled yet (a worker built as the server's modules load).
      return loadUndici().then((undici) => {
        if (this.#transport.kind === 'awaiting-undici') this.#transport = this.#choose(undici);
        return this.#post(url, body, signature);
      });
    }
    const target = this.#request(url);
    if (transport.kind === 'undici' && target.options !== undefined) return transport.pools.post(target.undici, body, signature);
    return new Promise((resolve, reject) => {
      if (target.options === undefined) throw new TypeError(`Invalid URL: ${url}`);
      const secure = target.secure;
      /** Whether the request got a connection (TLS handshake done): a timeout before it is a connect timeout. */
      let connected = false;
      const req = (secure ? https : http).request(
        {
          ...target.options,
          method: 'POST',
          agent: secure ? this.#https : this.#http,
          lookup: this.#lookup,
          timeout: this.#timeoutMs,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            'user-agent': this.#deps.userAgent,
            ...signature,
          },
        },
        (res) => {
          const status = res.statusCode ?? 0;
          let answer = (): Answer => ({ status });
          if (status >= 200 && status <= 299)
            res.resume(); // the body is not needed; drain it so the socket is reused
          else {
            // A failing answer: its first bytes go into the error, the rest is drained.
            const kept: Buffer[] = [];
            let bytes = 0;
            res.on('data', (chunk: Buffer) => {
              if (bytes >= ANSWER_BYTES) return;
              const part = chunk.subarray(0, ANSWER_BYTES - bytes);
              kept.push(part);
              bytes += part.length;
            });
            answer = () => ({ status, body: Buffer.concat(kept).toString('utf8') });
          }
          res.on('end', () => resolve(answer()));
          res.on('error', reject);
          res.on('close', () => resolve(answer())); // a body cut short still answered
        },
      );
      req.on('socket', (socket) => {
        if (req.reusedSocket || (!socket.connecting && !secure)) connected = true;
        else socket.once(secure ? 'secureConnect' : 'connect', () => (connected = true));
      });
      // Our own timeouts, told apart like Node's: before a connection, a connect timeout.
      const timedOut = (): Error => (connected ? new WebhookAttemptError('timeout') : new WebhookAttemptError('connect timeout', 'ETIMEDOUT', 'connect'));
      // `timeout` above is the socket's idle time; this bounds the whole attempt (a receiver that
      // trickles its answer would otherwise hold a slot past the outbox's own deadline).
      const deadline = setTimeout(() => req.destroy(timedOut()), this.#timeoutMs);
      const settle = (): void => clearTimeout(deadline);
      req.on('close', settle);
      req.on('timeout', () => req.destroy(timedOut()));
      req.on('error', reject);
      req.end(body);
    });
  }

  /** One timer for the outbox's next due time; an earlier one already armed stays. */
  #arm(): void {
    const at = this.#deps.outbox.nextWakeAt();
    if (at !== null && at < this.#loop.wakeTime) this.#loop.wakeAt(at);
  }

  /**
   * Stops taking attempts and waits up to `drainMs` for those running; the rest stay in the
   * outbox (its snapshot keeps them; attempts in flight time out and go again after a restart).
   */
  async stop(drainMs: number): Promise<void> {
    this.#loop.stop();
    for (const target of this.#targets.values()) {
      target.waiting.length = 0;
      for (const p of target.paths.values()) p.parked.length = 0;
    }
    this.#targets.clear();
    this.#queued = 0;
    await settleWithin(this.#running, drainMs);
    const outcomes = this.#deps.outbox.takeOutcomes();
    if (outcomes.length > 0) this.#deps.onOutcomes?.(outcomes);
    this.#http.destroy();
    this.#https.destroy();
    if (this.#transport.kind === 'undici') await this.#transport.pools.close();
  }
}

/** Paths of one target remembered at most before the idle ones are forgotten. */
const PATHS_KEPT = 1_000;

/** URLs parsed at most (the cache starts over when full). */
const PARSED_KEPT = 1_000;

interface ParsedTarget {
  /** Where concurrency is counted: scheme, host and port (the URL itself when it does not parse). */
  readonly origin: string;
  readonly secure: boolean;
  /** The request's address, or undefined when the URL does not parse (the attempt then fails). */
  readonly options: { readonly protocol: string; readonly hostname: string; readonly port: string; readonly path: string; readonly auth?: string } | undefined;
  /** The same for undici's pools. */
  readonly undici: UndiciTarget;
}

function parseTarget(url: string): ParsedTarget {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { origin: url, secure: false, options: undefined, undici: { origin: url, path: '/', authorization: undefined } };
  }
  // IPv6 literals come bracketed from URL; the request wants them bare.
  const hostname = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
  const auth = u.username === '' ? {} : { auth: `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}` };
  const path = `${u.pathname}${u.search}`;
  const authorization = auth.auth === undefined ? undefined : `Basic ${Buffer.from(auth.auth).toString('base64')}`;
  return { origin: u.origin, secure: u.protocol === 'https:', options: { protocol: u.protocol, hostname, port: u.port, path, ...auth }, undici: { origin: u.origin, path, authorization } };
}
