/**
 * Idempotency keys of the server on Redis (idempotency.ts), shared by every instance: a retry with
 * the key posted to another instance finds the first answer.
 *
 * A key's record is a hash under the queue's hash tag, `<p>idem:c<company>:<SHA-256 of the key>`:
 * `fp` the body's fingerprint, `req` the request that holds it, `inst` its instance, `ans` the 202
 * (JSON), written by the step script with the request's chunks and commit mark (scripts/step.ts),
 * so a crash after the commit still replays it (scripts/idempotency-begin.ts, idempotency-end.ts). Kept
 * {@link IDEMPOTENCY_TTL_MS}.
 *
 * A record without an answer belongs to a request still running, or to one whose instance died:
 * a retry takes it over once that request is voided (the fence of shared-phones.ts: its step will
 * never commit it), which happens when its instance looks dead (`deadInstances`); while its
 * instance lives the retry is answered 409.
 */
import { createHash } from 'node:crypto';
import { IDEMPOTENCY_TTL_MS, type IdempotencyBegin, type KeptAnswer } from '../../ports/backend.js';
import { callScript } from './scripts/codec.js';
import { IDEMPOTENCY_BEGIN } from './scripts/idempotency-begin.js';
import { IDEMPOTENCY_END } from './scripts/idempotency-end.js';
import { COMMIT_TTL_MS, deadInstances, type PhonesClient } from './shared-phones.js';

export class SharedIdempotency {
  readonly #client: PhonesClient;
  readonly #prefix: string;
  readonly #instance: string;
  readonly #void: (requests: readonly string[]) => Promise<string[]>;

  /**
   * @param prefix the queue's prefix with its hash tag (the step script writes the answers)
   * @param instance this instance's consumer name
   * @param voidRequests the fence (SharedPhones.void)
   */
  constructor(client: PhonesClient, prefix: string, instance: string, voidRequests: (requests: readonly string[]) => Promise<string[]>) {
    this.#client = client;
    this.#prefix = prefix;
    this.#instance = instance;
    this.#void = voidRequests;
  }

  /** The Redis key of a company's key's record. */
  recordKey(companyId: number, key: string): string {
    return `${this.#prefix}idem:c${companyId}:${createHash('sha256').update(key).digest('base64url')}`;
  }

  /** Begins a request with `key`: it holds the key now, or what the first request left. */
  async begin(companyId: number, key: string, fingerprint: string, requestId: string): Promise<IdempotencyBegin> {
    const record = this.recordKey(companyId, key);
    for (let attempt = 0; ; attempt++) {
      const r = await callScript(this.#client, IDEMPOTENCY_BEGIN, {
        record,
        fingerprint,
        requestId,
        instance: this.#instance,
        prefix: this.#prefix,
        ttlMs: IDEMPOTENCY_TTL_MS,
        voidTtlMs: COMMIT_TTL_MS,
      });
      if (r.outcome === 'new') return { kind: 'new' };
      if (r.outcome === 'mismatch') return { kind: 'mismatch' };
      if (r.outcome === 'replay') return { kind: 'replay', answer: JSON.parse(r.answer) as KeptAnswer };
      // Running elsewhere: taken over only if its instance looks dead (voided first).
      if (attempt > 0 || !(await deadInstances(this.#client, this.#prefix, [r.instance])).has(r.instance)) return { kind: 'in-progress' };
      await this.#void([r.request]);
    }
  }

  /** The request ends without a 202: the key is free again. Best effort (a dead holder is taken over). */
  async end(companyId: number, key: string, requestId: string): Promise<void> {
    await callScript(this.#client, IDEMPOTENCY_END, { record: this.recordKey(companyId, key), requestId });
  }
}
