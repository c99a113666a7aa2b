/**
 * What the server remembers of the messages it sent, shared by every instance on Redis: the
 * tracked messages and SMS a later status is built from (tracked-messages.ts, keys
 * `m:<message id>` and `s:<SMS id>`) and the channel's provider ids (channels/memory.ts, keys
 * `c:<key>`). The provider reports a delivery, a read or a reply to whichever instance its
 * webhook reaches, and the sender may have died: so each write goes to Redis with the step that
 * made it, and an instance that does not hold a key asks Redis before it gives up on an event
 * (`recall`).
 *
 * Bounded as the embedded database's copy is: two generations of hashes, `<p>mem:<g>`, where g
 * counts the entries the fleet wrote (`<p>mem:n`) in generations of `generation` entries; a write
 * that starts a generation drops the one two back, so at least the last `generation` entries and
 * at most twice that are kept. A delete is an empty value, read as absent (the newer generation is
 * read first). All keys carry the queue's hash tag: the step script writes them in its own slot.
 */
import { runScript, script, type RedisScriptClient } from '../../redis/script-runner.js';
import type { ServerContact } from '../contacts.js';
import type { TrackedMessage } from '../notifier.js';

/** Lua for the step script: `memory_write(root, generation, at, m)` writes ARGV[at..at+2m-1]. */
export const MEMORY_WRITE_LUA = `
local function memory_write(root, generation, first, count)
  local n = redis.call('INCRBY', root .. 'n', count)
  local g = math.floor(n / generation)
  local old = math.floor((n - count) / generation)
  -- Generations that fell two behind are dropped (a large step may pass more than one).
  for d = math.max(old - 1, g - 3), g - 2 do
    if d >= 0 then redis.call('DEL', root .. d) end
  end
  local fields = {}
  for j = first, first + 2 * count - 1 do
    fields[#fields + 1] = ARGV[j]
    -- HSET in slices: Lua's unpack has a limit on the values it spreads.
    if #fields == 1000 then redis.call('HSET', root .. g, unpack(fields)); fields = {} end
  end
  if #fields > 0 then redis.call('HSET', root .. g, unpack(fields)) end
end
`;

/**
 * Reads keys, the newest generation first. KEYS: [1] the entry counter `<p>mem:n`, [2] the
 * generation prefix `<p>mem:`; ARGV: [1] the entries a generation holds, then the keys.
 * Returns one value per key ('' for absent or deleted).
 */
export const MEMORY_READ_SCRIPT = `
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
`;

const READ = script(MEMORY_READ_SCRIPT);

/**
 * One HSCAN of a generation. KEYS: [1] the entry counter `<p>mem:n`, [2] the generation prefix
 * `<p>mem:`; ARGV: [1] the entries a generation holds, [2] the generation (-1: the newest),
 * [3] the cursor, [4] the MATCH pattern, [5] the COUNT. Returns `{ generation, cursor, fields }`
 * (fields and values alternating).
 */
export const MEMORY_SCAN_SCRIPT = `
local g = tonumber(ARGV[2])
if g < 0 then g = math.floor((tonumber(redis.call('GET', KEYS[1])) or 0) / tonumber(ARGV[1])) end
local r = redis.call('HSCAN', KEYS[2] .. g, ARGV[3], 'MATCH', ARGV[4], 'COUNT', ARGV[5])
return { g, r[1], r[2] }
`;

const SCAN = script(MEMORY_SCAN_SCRIPT);

/** Fields an HSCAN step looks at. */
const SCAN_COUNT = 1000;

/** `text` as a literal in a Redis glob pattern. */
function globLiteral(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}

/** Most keys one read carries. */
const READ_SLICE = 500;

/** The shared memory's reads and what a step writes of it. */
export class SharedMemory {
  readonly #client: RedisScriptClient;
  readonly #root: string;
  /** Entries a generation holds. */
  readonly generation: number;

  /**
   * @param prefix the queue's prefix, with its hash tag (`sendpool:{queue}:`)
   * @param generation entries a generation holds: at least this many of the latest are kept
   */
  constructor(client: RedisScriptClient, prefix: string, generation: number) {
    this.#client = client;
    this.#root = `${prefix}mem:`;
    this.generation = Math.max(1, Math.floor(generation));
  }

  /** The values the fleet keeps for these keys (absent ones are not in the map). */
  async read(keys: readonly string[]): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    for (let i = 0; i < keys.length; i += READ_SLICE) {
      const slice = keys.slice(i, i + READ_SLICE);
      const values = (await runScript(this.#client, READ, [`${this.#root}n`, this.#root], [this.generation, ...slice])) as string[];
      slice.forEach((key, k) => {
        const value = values[k];
        if (typeof value === 'string' && value !== '') found.set(key, value);
      });
    }
    return found;
  }

  /**
   * Every entry whose key starts with `prefix`, in the two generations kept (the newer one wins;
   * a delete hides the older value). Walks both hashes with HSCAN, a thousand fields a call: meant
   * for once at start. Entries written while it walks may be missed (their writer holds them).
   */
  async scan(prefix: string): Promise<Map<string, string>> {
    const seen = new Map<string, string>();
    const match = `${globLiteral(prefix)}*`;
    let newest: number | undefined;
    for (const back of [0, 1]) {
      if (newest !== undefined && newest - back < 0) break;
      let cursor = '0';
      let generation = newest === undefined ? -1 : newest - back;
      do {
        const [g, next, fields] = (await runScript(this.#client, SCAN, [`${this.#root}n`, this.#root], [this.generation, generation, cursor, match, SCAN_COUNT])) as [number, string, string[]];
        newest ??= g;
        generation = g;
        cursor = String(next);
        for (let i = 0; i + 1 < fields.length; i += 2) if (!seen.has(fields[i]!)) seen.set(fields[i]!, fields[i + 1]!);
      } while (cursor !== '0');
    }
    const found = new Map<string, string>();
    for (const [key, value] of seen) if (value !== '') found.set(key, value);
    return found;
  }
}

/**
 * The step's share of the memory: the notifier's tracked messages and SMS (`m:`/`s:` keys, their
 * rows as JSON) and the channel's entries (`c:` + key). Deletes are empty values; the channel
 * memory's generation markers are its own bookkeeping and stay out.
 */
/**
 * A tracked message as the shared memory keeps it: a JSON array without field names, and without
 * what later statuses do not use (the template's variables: the text is already rendered). Sending
 * is the hot path of the server on Redis, and each row rides the step a 202 may wait for.
 */
function packTracked(t: TrackedMessage): string {
  const c = t.contact;
  const row: unknown[] = [c.id, c.requestId, c.companyId, c.costCenterId, c.phone, t.campaignId, t.from, t.text, t.retryIndex, t.sentAt, c.document ?? null, c.contract ?? null, c.data ?? null];
  // The merged statuses reported so far, once a later status came (null at the send).
  row.push(t.progress ?? null);
  // What sending the contact again needs, should the provider report it FAILED later: the values too.
  const a = t.again;
  if (a !== undefined) row.push([a.businessId, a.typeId, a.templateId, a.campaignId, a.maxRetries, a.retryInterval, a.followUps, c.variables ?? []]);
  return JSON.stringify(row);
}

function unpackTracked(text: string): TrackedMessage {
  const [id, requestId, companyId, costCenterId, phone, campaignId, from, body, retryIndex, sentAt, document, contract, data, progress, again] = JSON.parse(text) as [
    number,
    string,
    number,
    number,
    string,
    number,
    string,
    string,
    number | null,
    number,
    string | null,
    string | null,
    Record<string, string> | null,
    number | null | undefined,
    [number, number, number, number | null, number, number, number, string[]] | undefined,
  ];
  const contact: ServerContact = {
    id,
    requestId,
    companyId,
    costCenterId,
    phone,
    ...(document !== null ? { document } : {}),
    ...(contract !== null ? { contract } : {}),
    ...(data !== null ? { data } : {}),
    ...(again !== undefined ? { variables: again[7] } : {}),
  };
  return {
    contact,
    campaignId,
    from,
    text: body,
    retryIndex,
    sentAt,
    ...(progress !== undefined && progress !== null ? { progress } : {}),
    ...(again !== undefined
      ? { again: { businessId: again[0], typeId: again[1], templateId: again[2], campaignId: again[3], maxRetries: again[4], retryInterval: again[5], followUps: again[6] } }
      : {}),
  };
}

/** A row of the notifier's (`m:` tracked message, `s:` SMS) as the shared memory keeps it. */
export function encodeRow(key: string, row: unknown): string {
  return key.startsWith('m:') ? packTracked(row as TrackedMessage) : JSON.stringify(row);
}

/** A row read back from the shared memory. */
export function decodeRow(key: string, text: string): unknown {
  return key.startsWith('m:') ? unpackTracked(text) : JSON.parse(text);
}

export function memoryPairs(
  tracked: { readonly trackedPut: readonly (readonly [string, unknown])[]; readonly trackedDelete: readonly string[] },
  channel: { readonly keys: readonly string[]; readonly values: readonly (string | null)[] } | undefined,
): string[] {
  const pairs: string[] = [];
  for (const [key, row] of tracked.trackedPut) pairs.push(key, encodeRow(key, row));
  for (const key of tracked.trackedDelete) pairs.push(key, '');
  if (channel) {
    channel.keys.forEach((key, i) => {
      if (key !== '') pairs.push(`c:${key}`, channel.values[i] ?? '');
    });
  }
  return pairs;
}
