/**
 * The live instances of the queue: `<p>instances`, each instance's consumer scored with when its
 * heartbeat lapses (Redis TIME, ms). Adds this one (or removes it: an orderly stop), drops the
 * lapsed, answers how many remain (what a fair share of the backlog divides by).
 * KEYS: [1] the sorted set `<p>instances`.
 * ARGV: [1] this consumer, [2] the lease (ms), [3] '1' to remove it, else '0'.
 * Reply: the instances left.
 */
import { defineScript } from './codec.js';

export interface InstancesArgs {
  readonly key: string;
  readonly consumer: string;
  readonly leaseMs: number;
  /** Removes this instance instead of renewing it. */
  readonly stop: boolean;
}

export const INSTANCES = defineScript<InstancesArgs, number>({
  name: 'instances',
  body: `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if ARGV[3] == '1' then
  redis.call('ZREM', KEYS[1], ARGV[1])
else
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return redis.call('ZCARD', KEYS[1])
`,
  encode: (a) => ({ keys: [a.key], argv: [a.consumer, a.leaseMs, a.stop ? '1' : '0'] }),
  decode: (reply, read) => read.int(reply, 'instances'),
});
