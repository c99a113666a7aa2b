/**
 * Webhook configurations and signing secrets shared by every instance of the server on Redis: a
 * company configures its webhooks on one instance, and every instance's notifications for it go to
 * those URLs, signed with one secret.
 *
 * - Configurations: a hash, company -> JSON, and a version per company counting its writes. A
 *   change is written before its 200; an instance reads it again before it next takes a request or
 *   claims work of the company (`ensure` compares the versions), and every `refreshMs` anyway.
 * - Secrets: a hash, company -> secret, written once with `HSETNX`: two instances creating a
 *   company's secret at the same moment agree on the first one written.
 */
import { EMPTY_WEBHOOK_CONFIG, type WebhookConfig } from '../../../contract/config-schema.js';
import type { CompanyWebhooks, WebhookConfigs } from '../../ports/server-parts.js';

/** The commands the shared configurations use (an ioredis `Redis` or `Cluster`). */
export interface SharedWebhooksClient {
  hgetall(key: string): Promise<Record<string, string>>;
  hget(key: string, field: string): Promise<string | null>;
  hset(key: string, field: string, value: string): Promise<number>;
  hsetnx(key: string, field: string, value: string): Promise<number>;
  hmget(key: string, ...fields: string[]): Promise<(string | null)[]>;
  hincrby(key: string, field: string, increment: number): Promise<number>;
}

export class SharedWebhooks {
  readonly #client: SharedWebhooksClient;
  readonly #configs: string;
  readonly #secrets: string;
  /** company -> how many times its configuration was written: an instance with an older one reads it again. */
  readonly #versionsKey: string;
  /** The version of each company's configuration this instance has. */
  readonly #versions = new Map<number, number>();
  readonly #notifier: WebhookConfigs;
  /** Companies whose configuration and secret this instance has from Redis. */
  readonly #known = new Set<number>();
  /** Secrets given by the host (`webhookSecrets`): they win over Redis. */
  readonly #given: Readonly<Record<number, string>>;

  constructor(client: SharedWebhooksClient, prefix: string, notifier: WebhookConfigs, given: Readonly<Record<number, string>> = {}) {
    this.#client = client;
    this.#configs = `${prefix}webhooks`;
    this.#secrets = `${prefix}secrets`;
    this.#versionsKey = `${prefix}webhook-versions`;
    this.#notifier = notifier;
    this.#given = given;
  }

  /** Whether every company's configuration was read from Redis at least once (`refresh`). */
  loaded = false;

  /** Reads every company's configuration and secret (at start, and every `refreshMs`). */
  async refresh(): Promise<void> {
    const [versions, configs, secrets] = await Promise.all([this.#client.hgetall(this.#versionsKey), this.#client.hgetall(this.#configs), this.#client.hgetall(this.#secrets)]);
    // The versions are read first: a configuration read after its version is at least that recent.
    for (const [c, v] of Object.entries(versions)) this.#versions.set(Number(c), Number(v));
    const companies = new Set([...Object.keys(configs), ...Object.keys(secrets)].map(Number));
    this.#notifier.loadWebhooks(
      [...companies].map((companyId) => ({
        companyId,
        config: configs[companyId] !== undefined ? (JSON.parse(configs[companyId]) as WebhookConfig) : this.#notifier.config(companyId),
        secret: this.#given[companyId] ?? secrets[companyId] ?? this.#notifier.secretOf(companyId),
      })),
    );
    for (const c of companies) if (secrets[c] !== undefined) this.#known.add(c);
    this.loaded = true;
  }

  /**
   * Makes sure the companies' configurations and secrets are Redis's before this instance notifies
   * or signs for them: a secret none has yet is created (this instance's candidate, unless another
   * wrote one first). `fresh`: read them again even if loaded (a client reading or changing its
   * configuration sees the fleet's latest, not this instance's copy of up to `refreshMs` ago).
   * A company whose configuration another instance wrote since this one read it is read again: one
   * `HMGET` of the versions per call, so a contact sent right after a configuration change, by any
   * instance, is notified to the new URLs (not to none, or the old ones, until the next refresh).
   */
  async ensure(companyIds: Iterable<number>, fresh = false): Promise<void> {
    const ids = [...new Set(companyIds)];
    if (ids.length === 0) return;
    const versions = (await this.#client.hmget(this.#versionsKey, ...ids.map(String))).map((v) => (v === null ? 0 : Number(v)));
    const missing = ids.filter((c, i) => fresh || !this.#known.has(c) || versions[i]! > (this.#versions.get(c) ?? 0));
    for (const [i, c] of ids.entries()) if (versions[i]! > (this.#versions.get(c) ?? 0)) this.#versions.set(c, versions[i]!);
    if (missing.length === 0) return;
    await Promise.all(
      missing.map(async (companyId) => {
        const candidate = this.#given[companyId] ?? this.#notifier.secretOf(companyId);
        await this.#client.hsetnx(this.#secrets, String(companyId), candidate);
        const [secret, config] = await Promise.all([this.#client.hget(this.#secrets, String(companyId)), this.#client.hget(this.#configs, String(companyId))]);
        this.#notifier.loadWebhooks([
          {
            companyId,
            config: config !== null ? (JSON.parse(config) as WebhookConfig) : this.#notifier.config(companyId),
            secret: this.#given[companyId] ?? secret ?? candidate,
          },
        ]);
        this.#known.add(companyId);
      }),
    );
  }

  /** The companies this instance knows a configuration of (not the empty one), with their secrets. */
  configured(): CompanyWebhooks[] {
    const empty = JSON.stringify(EMPTY_WEBHOOK_CONFIG);
    return this.#notifier.webhooks().filter((w) => JSON.stringify(w.config) !== empty);
  }

  /**
   * Redis lost the configurations (reset.ts): writes back those of `list` Redis does not have (a
   * configuration a client wrote since wins, and so does a secret another instance wrote back
   * first), then reads them all again, so every instance ends with the same configuration and
   * secret. Answers the companies whose configuration was written back by this call.
   */
  async restore(list: readonly CompanyWebhooks[]): Promise<number[]> {
    const written: number[] = [];
    for (const w of list) {
      const id = String(w.companyId);
      if ((await this.#client.hsetnx(this.#configs, id, JSON.stringify(w.config))) === 1) {
        written.push(w.companyId);
        // A version, so instances that know nothing of it (restarted) read it at their next ensure.
        await this.#client.hsetnx(this.#versionsKey, id, '1');
      }
      await this.#client.hsetnx(this.#secrets, id, this.#given[w.companyId] ?? w.secret);
    }
    // The versions counted before the reset mean nothing now: read everything again.
    this.#versions.clear();
    this.#known.clear();
    await this.refresh();
    return written;
  }

  /** Writes a company's configuration (before its 200; `ensure` it before changing it). */
  async save(companyId: number): Promise<void> {
    await this.#client.hset(this.#configs, String(companyId), JSON.stringify(this.#notifier.config(companyId)));
    // After the configuration: an instance that sees the new version reads at least this configuration.
    this.#versions.set(companyId, await this.#client.hincrby(this.#versionsKey, String(companyId), 1));
  }
}
