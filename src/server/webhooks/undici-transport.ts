/**
 * Webhook POSTs over undici, when the optional package is installed: a keep-alive `Pool` per
 * target and its `dispatch` with one handler object per attempt. Measured against `http.request`
 * on the same receiver (docs/benchmarks.md, "Webhook delivery"), a delivery costs about half the
 * CPU, which is what bounds a worker's events per second; without undici the worker uses Node's
 * `http`/`https` (delivery-worker.ts), same semantics.
 *
 * The same guarantees as the `http` path: the connect-time address check (`lookup`), a whole-attempt
 * deadline (a receiver that trickles its answer does not hold a slot past it), the body of a 2xx
 * answer drained, not kept; of a failing answer, the first {@link ANSWER_BYTES} bytes for its error.
 */
import type { Dispatcher, Pool } from 'undici';
import type { safeLookup } from './safe-lookup.js';
import { ANSWER_BYTES, type Answer, WebhookAttemptError } from './answer.js';

type Undici = typeof import('undici');
/** The connect-time address check (safe-lookup.ts), as `net.connect` takes it. */
type Lookup = ReturnType<typeof safeLookup>;

/** Targets with a pool of their own at most. */
const MAX_POOLS = 256;

/** undici's import once it settled: the module, or not installed. */
export type UndiciImported = { readonly state: 'installed'; readonly undici: Undici } | { readonly state: 'missing' };
/** undici's import: under way, or settled. */
export type UndiciImport = { readonly state: 'importing' } | UndiciImported;

let imported: UndiciImport = { state: 'importing' };
/** Loaded once, when the server is. */
const loading: Promise<UndiciImported> = import('undici').then(
  (m: Undici) => (imported = { state: 'installed', undici: m }),
  () => (imported = { state: 'missing' }),
);

/** undici's import, once it settled. */
export function loadUndici(): Promise<UndiciImported> {
  return loading;
}

/** undici's import as it stands now. */
export function undiciImport(): UndiciImport {
  return imported;
}

/** What one attempt needs of its target (delivery-worker.ts parses it once per URL). */
export interface UndiciTarget {
  readonly origin: string;
  readonly path: string;
  /** `Basic …` for a URL with user information. */
  readonly authorization: string | undefined;
}

/** The handler of one attempt: a class, so an attempt allocates one object, not a closure per callback. */
class Attempt implements Dispatcher.DispatchHandler {
  #status = 0;
  /** The start of a failing answer's body (a 2xx answer's is not kept). */
  #body: Buffer[] | undefined;
  #bodyBytes = 0;
  #abort: ((reason?: Error) => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #timedOut = false;
  readonly #resolve: (answer: Answer) => void;
  readonly #reject: (error: Error) => void;

  constructor(resolve: (answer: Answer) => void, reject: (error: Error) => void, timeoutMs: number) {
    this.#resolve = resolve;
    this.#reject = reject;
    this.#timer = setTimeout(() => {
      this.#timedOut = true;
      this.#abort?.(new WebhookAttemptError('timeout', 'ETIMEDOUT'));
    }, timeoutMs);
    // An attempt does not keep the process alive: the server's sockets and workers do.
    this.#timer.unref();
  }

  /** The request never started (undici refused it at once). */
  refused(error: unknown): void {
    clearTimeout(this.#timer);
    this.#reject(error instanceof Error ? error : new Error(String(error)));
  }

  onConnect(abort: (reason?: Error) => void): void {
    this.#abort = abort;
  }

  onHeaders(statusCode: number): boolean {
    this.#status = statusCode;
    this.#body = statusCode >= 200 && statusCode <= 299 ? undefined : [];
    return true;
  }

  onData(chunk: Buffer): boolean {
    // A 2xx body is not needed, a failing one only its start; reading on keeps the connection reusable.
    if (this.#body !== undefined && this.#bodyBytes < ANSWER_BYTES) {
      const part = chunk.subarray(0, ANSWER_BYTES - this.#bodyBytes);
      this.#body.push(part);
      this.#bodyBytes += part.length;
    }
    return true;
  }

  onComplete(): void {
    clearTimeout(this.#timer);
    this.#resolve(this.#answer());
  }

  onError(error: Error): void {
    clearTimeout(this.#timer);
    // A body the receiver cut short after its status is still an answer, as on the `http` path;
    // an answer not finished by the deadline is not.
    if (this.#status !== 0 && !this.#timedOut) this.#resolve(this.#answer());
    else this.#reject(error);
  }

  #answer(): Answer {
    return this.#body === undefined ? { status: this.#status } : { status: this.#status, body: Buffer.concat(this.#body).toString('utf8') };
  }
}

export class UndiciTransport {
  readonly #undici: Undici;
  readonly #pools = new Map<string, Pool>();
  readonly #perTarget: number;
  readonly #timeoutMs: number;
  readonly #userAgent: string;
  readonly #lookup: Lookup;

  constructor(u: Undici, options: { perTarget: number; timeoutMs: number; userAgent: string; lookup: Lookup }) {
    this.#undici = u;
    this.#perTarget = options.perTarget;
    this.#timeoutMs = options.timeoutMs;
    this.#userAgent = options.userAgent;
    this.#lookup = options.lookup;
  }

  /** POSTs `body` with the signature headers; answers the status code (and the start of a failing answer's body). */
  post(target: UndiciTarget, body: string, signature: Record<string, string>): Promise<Answer> {
    let pool = this.#pools.get(target.origin);
    if (!pool) {
      // Callback URLs are chosen per SMS item: the oldest pool goes (after its requests) past the bound.
      if (this.#pools.size >= MAX_POOLS) {
        const [origin, oldest] = this.#pools.entries().next().value as [string, Pool];
        this.#pools.delete(origin);
        // Closing lets its requests finish; one that fails then reports to its own delivery (retried
        // by the outbox), so the close itself has nothing left to tell.
        void oldest.close().catch(() => {});
      }
      pool = new this.#undici.Pool(target.origin, {
        connections: this.#perTarget,
        keepAliveTimeout: 30_000,
        headersTimeout: this.#timeoutMs,
        bodyTimeout: this.#timeoutMs,
        connect: { timeout: this.#timeoutMs, lookup: this.#lookup },
      });
      this.#pools.set(target.origin, pool);
    }
    const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': this.#userAgent, ...signature };
    if (target.authorization !== undefined) headers['authorization'] = target.authorization;
    const p = pool;
    return new Promise((resolve, reject) => {
      const attempt = new Attempt(resolve, reject, this.#timeoutMs);
      try {
        p.dispatch({ path: target.path, method: 'POST', headers, body }, attempt);
      } catch (e) {
        attempt.refused(e);
      }
    });
  }

  /** Closes every connection. */
  async close(): Promise<void> {
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    // At shutdown: a pool that fails to destroy has its sockets closed with the process; the
    // deliveries it held stay in the outbox and go again after the restart.
    await Promise.all(pools.map((p) => p.destroy().catch(() => {})));
  }
}
