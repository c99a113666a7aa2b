/**
 * The blocklist of the server on Redis, shared by every instance: an opt-out received by one
 * instance, or a phone an operator added on another, refuses the phone at every instance's intake.
 *
 * Intake checks each contact in the turn of its request, so each instance keeps a replica in memory
 * (blocklist.ts, through ports/blocklist.ts) and Redis keeps the truth and the order of changes:
 * - a hash per company, phone -> entry (JSON), the blocklist as it is;
 * - a log (a stream, the last 100,000 changes) that every instance tails.
 * An instance writes its own changes (an operator's before the 200; an opt-out within a second)
 * with one script, the hash and the log together (scripts/blocklist-write.ts), then applies the log in order, its own changes
 * included, so every replica converges on the log's order. A replica that fell behind the log's
 * trimmed start loads the hashes again. Another instance's change is seen within a renewal period
 * (a second at most): a contact accepted in that second is sent (docs/scaling.md).
 */
import type { RedisScriptClient } from '../../../redis/script-runner.js';
import type { BlockEntry, BlocklistChange, BlocklistReplica } from '../../ports/blocklist.js';
import { streamsOf } from './queue.js';
import { BLOCKLIST_WRITE } from './scripts/blocklist-write.js';
import { callScript } from './scripts/codec.js';

/** The commands the shared blocklist uses (an ioredis `Redis` or `Cluster`). */
export interface SharedBlocklistClient extends RedisScriptClient {
  hgetall(key: string): Promise<Record<string, string>>;
  smembers(key: string): Promise<string[]>;
  call(command: string, ...args: (string | number)[]): Promise<unknown>;
}

/** Changes kept in the log: a replica further behind loads the hashes again. */
const LOG_LENGTH = 100_000;

export class SharedBlocklist {
  readonly #client: SharedBlocklistClient;
  readonly #prefix: string;
  readonly #local: BlocklistReplica;
  /** Local changes not written yet (written again after a failure). */
  #pending: BlocklistChange[] = [];
  /** The last log entry applied; undefined before the first load. */
  #last: string | undefined;
  #running: Promise<void> | undefined;
  #again = false;
  readonly #loaded: Promise<void>;
  #markLoaded!: () => void;

  /** @param prefix the configuration's prefix with its hash tag, e.g. `sendpool:{config}:` */
  constructor(client: SharedBlocklistClient, prefix: string, local: BlocklistReplica) {
    this.#client = client;
    this.#prefix = prefix;
    this.#local = local;
    this.#loaded = new Promise((resolve) => (this.#markLoaded = resolve));
  }

  /** Resolves once the replica was loaded from Redis (intake waits for it). */
  ready(): Promise<void> {
    return this.#loaded;
  }

  /**
   * Writes this instance's changes and applies the log's: an operator's change is answered once it
   * resolves. Calls coalesce: one runs at a time, and a call during it runs once more after.
   */
  sync(): Promise<void> {
    if (this.#running) {
      this.#again = true;
      return this.#running;
    }
    this.#running = (async () => {
      try {
        do {
          this.#again = false;
          await this.#write();
          await this.#tail();
        } while (this.#again);
      } finally {
        this.#running = undefined;
      }
    })();
    return this.#running;
  }

  async #write(): Promise<void> {
    this.#pending.push(...this.#local.takeChanges());
    if (this.#pending.length === 0) return;
    const changes = this.#pending;
    await callScript(this.#client, BLOCKLIST_WRITE, { log: this.#log, companies: this.#companies, hashPrefix: `${this.#prefix}bl:c`, logLength: LOG_LENGTH, changes });
    this.#pending = this.#pending.slice(changes.length);
  }

  get #log(): string {
    return `${this.#prefix}blocklist-log`;
  }

  get #companies(): string {
    return `${this.#prefix}bl:companies`;
  }

  async #tail(): Promise<void> {
    if (this.#last === undefined) return this.#load();
    for (let last: string = this.#last; ; last = this.#last) {
      const entries: [string, string[]][] = streamsOf(await this.#client.call('XREAD', 'COUNT', 1000, 'STREAMS', this.#log, last))[0]?.[1] ?? [];
      if (entries.length === 0) return;
      // Entries trimmed away before this replica read them: the log no longer says everything.
      const info = fieldsOf(((await this.#client.call('XINFO', 'STREAM', this.#log)) as unknown[]).map(String));
      const trimmed = info['max-deleted-entry-id'];
      if (trimmed !== undefined && compareIds(trimmed, last) > 0) return this.#load();
      for (const [id, fields] of entries) {
        const f = fieldsOf(fields);
        const companyId = Number(f['c']);
        const phone = f['p'] ?? '';
        this.#local.replay({ companyId, phone, entry: f['e'] ? (JSON.parse(f['e']) as BlockEntry) : null });
        this.#last = id;
      }
      if (entries.length < 1000) return;
    }
  }

  /** Loads every company's blocklist from the hashes, after noting where the log stands. */
  async #load(): Promise<void> {
    const newest = (await this.#client.call('XREVRANGE', this.#log, '+', '-', 'COUNT', 1)) as [string, string[]][];
    const companies = (await this.#client.smembers(this.#companies)).map(Number);
    for (const companyId of companies) {
      const hash = await this.#client.hgetall(`${this.#prefix}bl:c${companyId}`);
      this.#local.replaceCompany(
        companyId,
        Object.values(hash).map((json) => JSON.parse(json) as BlockEntry),
      );
    }
    this.#last = newest[0]?.[0] ?? '0-0';
    this.#markLoaded();
  }
}

function fieldsOf(flat: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i]!] = flat[i + 1]!;
  return out;
}

/** Orders two stream ids (`ms-seq`). */
function compareIds(a: string, b: string): number {
  const [am, as] = a.split('-').map(Number) as [number, number];
  const [bm, bs] = b.split('-').map(Number) as [number, number];
  return am !== bm ? am - bm : as - bs;
}
