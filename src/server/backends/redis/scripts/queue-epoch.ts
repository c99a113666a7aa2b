/**
 * Reads the queue's epoch marker (reset.ts), creating it when missing.
 * KEYS: [1] the marker `<p>epoch`.
 * ARGV: [1] the id to create it with.
 * Reply: { the marker's id, 1 when this call created it else 0 }.
 */
import { defineScript } from './codec.js';

export interface QueueEpochArgs {
  readonly key: string;
  /** The id the marker is created with when missing. */
  readonly candidate: string;
}

export interface QueueEpochResult {
  readonly id: string;
  /** The marker was missing: this call created it with the candidate. */
  readonly created: boolean;
}

export const QUEUE_EPOCH = defineScript<QueueEpochArgs, QueueEpochResult>({
  name: 'queue-epoch',
  body: `
local id = redis.call('GET', KEYS[1])
if id then return { id, 0 } end
redis.call('SET', KEYS[1], ARGV[1])
return { ARGV[1], 1 }
`,
  encode: (a) => ({ keys: [a.key], argv: [a.candidate] }),
  decode: (reply, read) => {
    const [id, created] = read.list(reply, 'reply');
    return { id: read.text(id, 'id'), created: read.int(created, 'created') === 1 };
  },
});
