/**
 * The fence (shared-phones.ts): voids requests that have no commit mark (`<p>req:<request>` =
 * `void`): their phones are free, and the step script refuses to commit them (they answer an
 * error, never a 202). A request committed meanwhile is not voided.
 * KEYS: the requests' marks, `<p>req:<request>` (one Cluster slot: the queue's tag).
 * ARGV: [1] how long a void mark is kept (ms), then the request ids (ARGV[i + 1] is KEYS[i]'s).
 * Reply: the requests voided.
 */
import { defineScript } from './codec.js';

export interface RequestsVoidArgs {
  /** The queue's prefix, with its hash tag: a request's mark is `<prefix>req:<request>`. */
  readonly prefix: string;
  readonly requests: readonly string[];
  /** How long a void mark is kept (ms). */
  readonly voidTtlMs: number;
}

export const REQUESTS_VOID = defineScript<RequestsVoidArgs, string[]>({
  name: 'requests-void',
  body: `
local out = {}
for i = 1, #KEYS do
  redis.call('SET', KEYS[i], 'void', 'NX', 'PX', ARGV[1])
  if redis.call('GET', KEYS[i]) == 'void' then out[#out + 1] = ARGV[i + 1] end
end
return out
`,
  encode: (a) => ({ keys: a.requests.map((r) => `${a.prefix}req:${r}`), argv: [a.voidTtlMs, ...a.requests] }),
  decode: (reply, read) => read.texts(reply, 'requests voided'),
});
