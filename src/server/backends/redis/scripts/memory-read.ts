/**
 * Reads keys of the shared memory (shared-memory.ts), the newest generation first.
 * KEYS: [1] the entry counter `<p>mem:n`, [2] the generation prefix `<p>mem:`.
 * ARGV: [1] the entries a generation holds, then the keys.
 * Reply: one value per key ('' for absent or deleted).
 */
import { defineScript } from './codec.js';

export interface MemoryReadArgs {
  readonly counter: string;
  /** `<p>mem:`: a generation's hash is it and the generation's number. */
  readonly generations: string;
  /** Entries a generation holds. */
  readonly generationSize: number;
  readonly keys: readonly string[];
}

/** Per key, its value; undefined when absent or deleted. */
export type MemoryReadResult = readonly (string | undefined)[];

export const MEMORY_READ = defineScript<MemoryReadArgs, MemoryReadResult>({
  name: 'memory-read',
  body: `
local g = math.floor((tonumber(redis.call('GET', KEYS[1])) or 0) / tonumber(ARGV[1]))
local keys = {}
for j = 2, #ARGV do keys[#keys + 1] = ARGV[j] end
local out = redis.call('HMGET', KEYS[2] .. g, unpack(keys))
if g > 0 then
  local older = redis.call('HMGET', KEYS[2] .. (g - 1), unpack(keys))
  for j = 1, #keys do
    if not out[j] then out[j] = older[j] end
  end
end
for j = 1, #keys do
  if not out[j] then out[j] = '' end
end
return out
`,
  encode: (a) => ({ keys: [a.counter, a.generations], argv: [a.generationSize, ...a.keys] }),
  decode: (reply, read) => read.texts(reply, 'values').map((v) => (v === '' ? undefined : v)),
});
