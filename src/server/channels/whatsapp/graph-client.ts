/**
 * The Graph API's side of a send: keep-alive connections shared by every number (an undici Pool:
 * its request API is several times cheaper per call than `fetch`, which is what lets one instance
 * push tens of thousands of messages a second), one POST per message, answered with its status, its
 * `Retry-After` and its body text. The access token is one header object every POST shares, so
 * replacing it changes the next sends and none already at the platform.
 */
import { Pool } from 'undici';
import { secretProblem } from '../../lib/option-checks.js';
import { WhatsAppChannelError } from './options.js';

/** The platform's answer to one POST. */
export interface GraphAnswer {
  readonly statusCode: number;
  /** The `Retry-After` header of a refusal, when it has one. */
  readonly retryAfter: string | undefined;
  text(): string;
}

/** Where sends go: the sender's view of the Graph API (a fake in tests). */
export interface GraphApi {
  post(path: string, body: string): Promise<GraphAnswer>;
}

export interface GraphClientOptions {
  /** Scheme, host and port of the Graph API. */
  readonly origin: string;
  readonly accessToken: string;
  readonly connections: number;
  readonly requestTimeoutMs: number;
  readonly connectTimeoutMs: number;
}

const RETRY_AFTER = 'retry-after';

/** The handler of one exchange (undici's dispatch handler): a class, so a send allocates one object, not five closures. */
class Exchange implements GraphAnswer {
  statusCode = 0;
  retryAfter: string | undefined;
  #first: Buffer | undefined;
  #more: Buffer[] | undefined;

  readonly #resolve: (exchange: Exchange) => void;
  readonly #reject: (error: Error) => void;

  constructor(resolve: (exchange: Exchange) => void, reject: (error: Error) => void) {
    this.#resolve = resolve;
    this.#reject = reject;
  }

  onConnect(): void {}

  onComplete(): void {
    this.#resolve(this);
  }

  onError(error: Error): void {
    this.#reject(error);
  }

  onHeaders(statusCode: number, headers: Buffer[] | string[] | null): boolean {
    this.statusCode = statusCode;
    // Only a refusal may carry a Retry-After worth reading; an acceptance's headers are not looked at.
    if (statusCode >= 400 && headers) {
      for (let i = 0; i + 1 < headers.length; i += 2) {
        const name = headers[i]!;
        if (name.length === RETRY_AFTER.length && name.toString().toLowerCase() === RETRY_AFTER) this.retryAfter = headers[i + 1]!.toString();
      }
    }
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.#first === undefined) this.#first = chunk;
    else (this.#more ??= [this.#first]).push(chunk);
    return true;
  }

  text(): string {
    if (this.#more) return Buffer.concat(this.#more).toString('utf8');
    return this.#first === undefined ? '' : this.#first.toString('utf8');
  }
}

export class GraphClient implements GraphApi {
  readonly #pool: Pool;
  /** One object for every send; replacing the token replaces its authorization. */
  readonly #headers: { authorization: string; 'content-type': string };

  constructor(o: GraphClientOptions) {
    this.#pool = new Pool(o.origin, {
      connections: o.connections,
      keepAliveTimeout: 30_000,
      headersTimeout: o.requestTimeoutMs,
      bodyTimeout: o.requestTimeoutMs,
      connect: { timeout: o.connectTimeoutMs },
    });
    this.#headers = { authorization: `Bearer ${o.accessToken}`, 'content-type': 'application/json' };
  }

  /**
   * One POST. Through the pool's `dispatch` with a bare handler rather than `request`: no stream
   * per answer, which is most of a send's cost.
   */
  post(path: string, body: string): Promise<GraphAnswer> {
    return new Promise<Exchange>((resolve, reject) => {
      this.#pool.dispatch({ path, method: 'POST', headers: this.#headers, body }, new Exchange(resolve, reject));
    });
  }

  /** Throws `WhatsAppChannelError` for a token that cannot be one (as the option). */
  setAccessToken(token: string): void {
    const found = secretProblem('accessToken', token, 16);
    if (found) throw new WhatsAppChannelError([found]);
    this.#headers.authorization = `Bearer ${token}`;
  }

  close(): Promise<void> {
    return this.#pool.close();
  }
}
