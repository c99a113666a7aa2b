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
import type { RedisScriptClient } from '../../../redis/script-runner.js';
import type { ServerContact } from '../../ports/server-contact.js';
import type { TrackedMessage } from '../../ports/tracked-message.js';
import { callScript } from './scripts/codec.js';
import { MEMORY_READ } from './scripts/memory-read.js';
import { MEMORY_SCAN } from './scripts/memory-scan.js';
import type { Pair } from './scripts/sections.js';

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
  /** Where the scripts find the generations (scripts/memory-read.ts, memory-scan.ts). */
  readonly #generations: { readonly counter: string; readonly generations: string; readonly generationSize: number };

  /**
   * @param prefix the queue's prefix, with its hash tag (`sendpool:{queue}:`)
   * @param generation entries a generation holds: at least this many of the latest are kept
   */
  constructor(client: RedisScriptClient, prefix: string, generation: number) {
    this.#client = client;
    this.#root = `${prefix}mem:`;
    this.generation = Math.max(1, Math.floor(generation));
    this.#generations = { counter: `${this.#root}n`, generations: this.#root, generationSize: this.generation };
  }

  /** The values the fleet keeps for these keys (absent ones are not in the map). */
  async read(keys: readonly string[]): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    for (let i = 0; i < keys.length; i += READ_SLICE) {
      const slice = keys.slice(i, i + READ_SLICE);
      const values = await callScript(this.#client, MEMORY_READ, { ...this.#generations, keys: slice });
      slice.forEach((key, k) => {
        const value = values[k];
        if (value !== undefined) found.set(key, value);
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
      let generation: number | 'newest' = newest === undefined ? 'newest' : newest - back;
      do {
        const scanned = await callScript(this.#client, MEMORY_SCAN, { ...this.#generations, generation, cursor, match, count: SCAN_COUNT });
        newest ??= scanned.generation;
        generation = scanned.generation;
        cursor = scanned.cursor;
        for (const [key, value] of scanned.entries) if (!seen.has(key)) seen.set(key, value);
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
): Pair[] {
  const pairs: Pair[] = [];
  for (const [key, row] of tracked.trackedPut) pairs.push([key, encodeRow(key, row)]);
  for (const key of tracked.trackedDelete) pairs.push([key, '']);
  if (channel) {
    channel.keys.forEach((key, i) => {
      if (key !== '') pairs.push([`c:${key}`, channel.values[i] ?? '']);
    });
  }
  return pairs;
}
