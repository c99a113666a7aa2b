/**
 * The backend port: what the server's features ask of the place its state lives, whatever that is.
 * One backend is chosen at start (build-server.ts) and never asked which it is:
 *
 * - memory (backends/memory): one process, nothing kept across a restart but a snapshot file;
 * - sqlite (backends/sqlite): one process, every step written to the embedded database;
 * - redis (backends/redis): instances of a fleet sharing the queue, ids, configuration and phones.
 *
 * The routes and the intake see only this interface (`ctx.backend`); a feature that needs a new
 * difference between them adds a method here and one implementation per backend, never a branch.
 * The contract every backend keeps is test/server/backend-contract.test.ts.
 */
import type { PhoneSet } from '../../contract/rejection.js';
import type { Submission } from '../../core/submission.js';
import type { OutgoingSms } from './channel.js';
import type { ContactIds } from './contact-ids.js';
import type { Persistence } from './persistence.js';

/** The name of a backend, for logs and answers that describe the server (never branched on). */
export type BackendName = 'memory' | 'sqlite' | 'redis';

/** A 202 kept for its idempotency key: status and body as answered. */
export interface KeptAnswer {
  readonly status: number;
  readonly body: unknown;
}

/** How long a key's first answer is kept: a retry within it is answered the same (every backend). */
export const IDEMPOTENCY_TTL_MS = 86_400_000;

/** What an idempotency key finds when a request begins. */
export type IdempotencyBegin =
  /** The key is this request's now (no answer kept, nobody running with it). */
  | { readonly kind: 'new' }
  /** The first request was answered 202: that answer again. */
  | { readonly kind: 'replay'; readonly answer: KeptAnswer }
  /** The key was used with another body. */
  | { readonly kind: 'mismatch' }
  /** The first request with the key is still running (an instance alive). */
  | { readonly kind: 'in-progress' };

/** Why intake is refused before a request is read: Redis came back without its queue, or does not answer. */
export type IntakeRefusal = 'reset' | 'down';

/** How the write of an accepted request came out; only `written` may be answered 202. */
export type RequestWrite =
  | { readonly kind: 'written' }
  /** Another request took this one over before it was written (a retry sent to another instance). */
  | { readonly kind: 'voided' }
  /** The write failed: nothing of the request was accepted. */
  | { readonly kind: 'failed'; readonly error: unknown };

/** The answer a request keeps under its idempotency key (scoped), written with its contacts. */
export interface KeyedAnswer {
  readonly companyId: number;
  readonly key: string;
  readonly answer: KeptAnswer;
}

/** A send request as the backend sees it before its intake: who sends what to which phones. */
export interface SendIntent {
  readonly companyId: number;
  readonly requestId: string;
  readonly businessId: number;
  readonly typeId: number;
  readonly campaignId: number;
  /** Contacts posted (ids are taken for each, accepted or not). */
  readonly contactCount: number;
  /** Phones of the contacts that may be accepted (not blocked). */
  readonly phones: readonly string[];
}

/**
 * What a send request holds before its intake: the campaign's phones other requests took, and the
 * phones its business took for the type (`already_sent`); undefined: the sets of this process.
 */
export interface SendHold {
  readonly taken: PhoneSet | undefined;
  readonly sent: PhoneSet | undefined;
  /** Gives back what the request held, when it got no 202. Never rejects (a failure is logged). */
  release(): Promise<void>;
}

/** The accepted contacts of a request, queued in the intake's one piece. */
export interface QueuedRequest {
  readonly submission: Submission;
  readonly requestId: string;
  readonly companyId: number;
  readonly campaignId: number;
  /** The accepted contacts' phones, remembered for the campaign and for `already_sent`. */
  readonly phones: readonly string[];
  readonly now: number;
}

export interface Backend {
  readonly name: BackendName;
  /** The group commit: what must be kept before something leaves waits for `commit()`. */
  readonly persistence: Persistence;
  /** Where accepted contacts' ids come from. */
  readonly contactIds: ContactIds;
  /** Whether campaigns' statistics and phones are this process's (the dashboard lists them), not a fleet's. */
  readonly campaignsHere: boolean;
  /** Intake refused now, and why; undefined while intake is open. */
  refusal(): IntakeRefusal | undefined;
  /** Contacts waiting to be sent, for the intake bound (a fleet's: its shared queue's backlog). */
  backlog(): number;
  /**
   * Whether a send request is screened against this process's sets while it is parsed. False: its
   * phones are held in shared state first (`hold`), and screening waits for the hold.
   */
  readonly screensWhileParsing: boolean;
  /** Makes what a send request's intake reads ready (contact ids, configuration, blocklist), and holds its phones. */
  hold(intent: SendIntent): Promise<SendHold>;
  /** In the intake's one piece: the request's accepted contacts queued and their phones remembered. */
  queue(request: QueuedRequest): void;
  /**
   * Runs a send request's intake (`run`, in one piece) and, when it answers 202, writes what it did,
   * with the answer under its key (`keyed`), before the answer may leave.
   */
  writeRequest<A extends { readonly answer: KeptAnswer }>(requestId: string, run: () => A, keyed: (out: A) => KeyedAnswer | undefined): Promise<{ readonly out: A; readonly write: RequestWrite }>;
  /** SMS accepted: written (with the answer under its key) and queued for the gateway. */
  writeSms(requestId: string, items: readonly OutgoingSms[], keyed: KeyedAnswer | undefined): Promise<RequestWrite>;
  /** An idempotency key taken by a request that begins (see IdempotencyBegin). */
  beginKey(companyId: number, key: string, fingerprint: string, requestId: string, now: number): Promise<IdempotencyBegin>;
  /** A request without a 202 frees its key. Never rejects (a key not freed is taken over later; logged). */
  endKey(companyId: number, key: string, requestId: string): Promise<void>;
  /** Resolves once the companies' webhook configurations are read (`fresh`: read again now). */
  readConfigs(companyIds: readonly number[], fresh?: boolean): Promise<void>;
  /** Writes a company's changed configuration; false when it could not be. */
  writeConfig(companyId: number): Promise<boolean>;
  /** Resolves once the blocklist is loaded (a fleet's: read once at start). */
  blocklistReady(): Promise<void>;
  /** The blocklist changed here: written (for every instance of a fleet). */
  blocklistChanged(): void;
  /** Resolves true once the blocklist's changes are written; false when they could not be (they stay pending). */
  blocklistWritten(): Promise<boolean>;
  /** Resolves true once everything done before is written (configuration, secrets, reports); false when it could not be. */
  written(): Promise<boolean>;
}
