/**
 * Frees an idempotency key (shared-idempotency.ts): its record goes if this request holds it
 * without an answer (the request ended without a 202).
 * KEYS: [1] the record.
 * ARGV: [1] the request.
 * Reply: 1.
 */
import { defineScript } from './codec.js';

export interface IdempotencyEndArgs {
  readonly record: string;
  readonly requestId: string;
}

export const IDEMPOTENCY_END = defineScript<IdempotencyEndArgs, void>({
  name: 'idempotency-end',
  body: `
if redis.call('HGET', KEYS[1], 'req') == ARGV[1] and redis.call('HEXISTS', KEYS[1], 'ans') == 0 then
  redis.call('DEL', KEYS[1])
end
return 1
`,
  encode: (a) => ({ keys: [a.record], argv: [a.requestId] }),
  decode: (reply, read) => void read.int(reply, 'reply'),
});
