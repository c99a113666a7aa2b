/**
 * One HSCAN of a generation of the shared memory (shared-memory.ts).
 * KEYS: [1] the entry counter `<p>mem:n`, [2] the generation prefix `<p>mem:`.
 * ARGV: [1] the entries a generation holds, [2] the generation (-1: the newest), [3] the cursor,
 *       [4] the MATCH pattern, [5] the COUNT.
 * Reply: { the generation scanned, the next cursor, fields and values alternating }.
 */
import { defineScript } from './codec.js';
import type { Pair } from './sections.js';

export interface MemoryScanArgs {
  readonly counter: string;
  /** `<p>mem:`: a generation's hash is it and the generation's number. */
  readonly generations: string;
  /** Entries a generation holds. */
  readonly generationSize: number;
  /** The generation to scan; 'newest': the one written now. */
  readonly generation: number | 'newest';
  /** '0' to start. */
  readonly cursor: string;
  /** A Redis glob pattern of the keys. */
  readonly match: string;
  /** Fields the scan looks at. */
  readonly count: number;
}

export interface MemoryScanResult {
  readonly generation: number;
  /** '0' when the generation was scanned to its end. */
  readonly cursor: string;
  readonly entries: readonly Pair[];
}

export const MEMORY_SCAN = defineScript<MemoryScanArgs, MemoryScanResult>({
  name: 'memory-scan',
  body: `
local g = tonumber(ARGV[2])
if g < 0 then g = math.floor((tonumber(redis.call('GET', KEYS[1])) or 0) / tonumber(ARGV[1])) end
local r = redis.call('HSCAN', KEYS[2] .. g, ARGV[3], 'MATCH', ARGV[4], 'COUNT', ARGV[5])
return { g, r[1], r[2] }
`,
  encode: (a) => ({ keys: [a.counter, a.generations], argv: [a.generationSize, a.generation === 'newest' ? -1 : a.generation, a.cursor, a.match, a.count] }),
  decode: (reply, read) => {
    const [generation, cursor, entries] = read.list(reply, 'reply');
    return { generation: read.int(generation, 'generation'), cursor: read.text(cursor, 'cursor'), entries: read.pairs(entries, 'entries') };
  },
});
