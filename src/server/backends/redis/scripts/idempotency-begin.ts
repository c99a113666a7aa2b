/**
 * Begins a request with an idempotency key (shared-idempotency.ts): the key's record is this
 * request's now, or it answers what the first request left. A record held by a request that has no
 * commit mark and whose instance's heartbeat lapsed is taken over, its request voided first (the
 * fence, shared-phones.ts).
 * KEYS: [1] the record (`<p>idem:c<company>:<hash of the key>`).
 * ARGV: [1] the body's fingerprint, [2] the request, [3] its instance, [4] the queue's prefix (for
 *       commit marks and heartbeats), [5] the record's TTL (ms), [6] a void mark's TTL (ms).
 * Reply: { 'new' }, { 'replay', answer }, { 'mismatch' } or { 'progress', request, instance }.
 */
import { defineScript } from './codec.js';

export interface IdempotencyBeginArgs {
  readonly record: string;
  readonly fingerprint: string;
  readonly requestId: string;
  readonly instance: string;
  /** The queue's prefix, with its hash tag. */
  readonly prefix: string;
  readonly ttlMs: number;
  /** How long a void mark is kept (ms). */
  readonly voidTtlMs: number;
}

export type IdempotencyBeginResult =
  /** The key is this request's now. */
  | { readonly outcome: 'new' }
  /** The first request was answered: its answer (JSON). */
  | { readonly outcome: 'replay'; readonly answer: string }
  /** The key was used with another body. */
  | { readonly outcome: 'mismatch' }
  /** Another request holds the key, not answered yet, its instance's heartbeat alive. */
  | { readonly outcome: 'progress'; readonly request: string; readonly instance: string };

export const IDEMPOTENCY_BEGIN = defineScript<IdempotencyBeginArgs, IdempotencyBeginResult>({
  name: 'idempotency-begin',
  body: `
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
`,
  encode: (a) => ({ keys: [a.record], argv: [a.fingerprint, a.requestId, a.instance, a.prefix, a.ttlMs, a.voidTtlMs] }),
  decode: (reply, read) => {
    const [outcome, ...rest] = read.list(reply, 'reply');
    switch (read.text(outcome, 'outcome')) {
      case 'new':
        return { outcome: 'new' };
      case 'replay':
        return { outcome: 'replay', answer: read.text(rest[0], 'answer') };
      case 'mismatch':
        return { outcome: 'mismatch' };
      case 'progress':
        return { outcome: 'progress', request: read.text(rest[0], 'request'), instance: read.text(rest[1], 'instance') };
      default:
        return read.unexpected(outcome, 'outcome');
    }
  },
});
