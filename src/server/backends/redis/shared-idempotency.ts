/**
 * Idempotency keys of the server on Redis (idempotency.ts), shared by every instance: a retry with
 * the key posted to another instance finds the first answer.
 *
 * A key's record is a hash under the queue's hash tag, `<p>idem:c<company>:<SHA-256 of the key>`:
 * `fp` the body's fingerprint, `req` the request that holds it, `inst` its instance, `ans` the 202
 * (JSON), written by the step script with the request's chunks and commit mark (scripts/step.ts),
 * so a crash after the commit still replays it. Kept {@link IDEMPOTENCY_TTL_MS}.
 *
 * A record without an answer belongs to a request still running, or to one whose instance died:
 * a retry takes it over once that request is voided (the fence of shared-phones.ts: its step will
 * never commit it), which happens when its instance looks dead (`deadInstances`); while its
 * instance lives the retry is answered 409.
 */
import { createHash } from 'node:crypto';
import { runScript, script } from '../../../redis/script-runner.js';
import { IDEMPOTENCY_TTL_MS, type IdempotencyBegin, type KeptAnswer } from '../../ports/backend.js';
import { COMMIT_TTL_MS, deadInstances, type PhonesClient } from './shared-phones.js';

/**
 * KEYS: [1] the record. ARGV: [1] fingerprint, [2] request, [3] instance, [4] the queue prefix,
 * [5] the record's TTL (ms), [6] a void mark's TTL (ms).
 * Returns { 'new' }, { 'replay', answer }, { 'mismatch' } or { 'progress', request, instance }.
 */
const BEGIN = script(`
local rec = redis.call('HMGET', KEYS[1], 'fp', 'req', 'inst', 'ans')
if rec[1] == false then
  redis.call('HSET', KEYS[1], 'fp', ARGV[1], 'req', ARGV[2], 'inst', ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
  return { 'new' }
end
if rec[1] ~= ARGV[1] then return { 'mismatch' } end
if rec[4] ~= false then return { 'replay', rec[4] } end
if rec[2] == ARGV[2] then return { 'new' } end
local mark = redis.call('GET', ARGV[4] .. 'req:' .. rec[2])
if mark == false and redis.call('EXISTS', ARGV[4] .. 'alive:' .. rec[3]) == 0 then
  -- Its instance's heartbeat lapsed: the request is voided (never committed), the key taken over.
  redis.call('SET', ARGV[4] .. 'req:' .. rec[2], 'void', 'NX', 'PX', ARGV[6])
  mark = 'void'
end
if mark == 'void' then
  redis.call('HSET', KEYS[1], 'req', ARGV[2], 'inst', ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
  return { 'new' }
end
return { 'progress', rec[2], rec[3] }
`);

/** KEYS: [1] the record. ARGV: [1] request. Frees the key if this request holds it without an answer. */
const END = script(`
if redis.call('HGET', KEYS[1], 'req') == ARGV[1] and redis.call('HEXISTS', KEYS[1], 'ans') == 0 then
  redis.call('DEL', KEYS[1])
end
return 1
`);

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
      const r = (await runScript(this.#client, BEGIN, [record], [fingerprint, requestId, this.#instance, this.#prefix, IDEMPOTENCY_TTL_MS, COMMIT_TTL_MS])) as string[];
      if (r[0] === 'new') return { kind: 'new' };
      if (r[0] === 'mismatch') return { kind: 'mismatch' };
      if (r[0] === 'replay') return { kind: 'replay', answer: JSON.parse(r[1]!) as KeptAnswer };
      // Running elsewhere: taken over only if its instance looks dead (voided first).
      const [owner, instance] = [r[1]!, r[2]!];
      if (attempt > 0 || !(await deadInstances(this.#client, this.#prefix, [instance])).has(instance)) return { kind: 'in-progress' };
      await this.#void([owner]);
    }
  }

  /** The request ends without a 202: the key is free again. Best effort (a dead holder is taken over). */
  async end(companyId: number, key: string, requestId: string): Promise<void> {
    await runScript(this.#client, END, [this.recordKey(companyId, key)], [requestId]);
  }
}
