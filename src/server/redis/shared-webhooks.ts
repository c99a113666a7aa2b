/**
 * Webhook configurations and signing secrets shared by every instance of the server on Redis: a
 * company configures its webhooks on one instance, and every instance's notifications for it go to
 * those URLs, signed with one secret.
 *
 * - Configurations: a hash, company -> JSON. A change is written before its 200 and read by the
 *   others within `refreshMs` (and at once before an instance uses a company it has not loaded:
 *   `ensure`).
 * - Secrets: a hash, company -> secret, written once with `HSETNX`: two instances creating a
 *   company's secret at the same moment agree on the first one written.
 */
import type { WebhookConfig } from '../../contract/config-schema.js';
import type { Notifier } from '../notifier.js';

/** The commands the shared configurations use (an ioredis `Redis` or `Cluster`). */
export interface SharedWebhooksClient {
  hgetall(key: string): Promise<Record<string, string>>;
  hget(key: string, field: string): Promise<string | null>;
  hset(key: string, field: string, value: string): Promise<number>;
  hsetnx(key: string, field: string, value: string): Promise<number>;
}

export class SharedWebhooks {
  readonly #client: SharedWebhooksClient;
  readonly #configs: string;
  readonly #secrets: string;
  readonly #notifier: Notifier;
  /** Companies whose configuration and secret this instance has from Redis. */
  readonly #known = new Set<number>();
  /** Secrets given by the host (`webhookSecrets`): they win over Redis. */
  readonly #given: Readonly<Record<number, string>>;

  constructor(client: SharedWebhooksClient, prefix: string, notifier: Notifier, given: Readonly<Record<number, string>> = {}) {
    this.#client = client;
    this.#configs = `${prefix}webhooks`;
    this.#secrets = `${prefix}secrets`;
    this.#notifier = notifier;
    this.#given = given;
  }

  /** Reads every company's configuration and secret (at start, and every `refreshMs`). */
  async refresh(): Promise<void> {
    const [configs, secrets] = await Promise.all([this.#client.hgetall(this.#configs), this.#client.hgetall(this.#secrets)]);
    const companies = new Set([...Object.keys(configs), ...Object.keys(secrets)].map(Number));
    this.#notifier.loadWebhooks(
      [...companies].map((companyId) => ({
        companyId,
        config: configs[companyId] !== undefined ? (JSON.parse(configs[companyId]) as WebhookConfig) : this.#notifier.config(companyId),
        secret: this.#given[companyId] ?? secrets[companyId] ?? this.#notifier.secretOf(companyId),
      })),
    );
    for (const c of companies) if (secrets[c] !== undefined) this.#known.add(c);
  }

  /**
   * Makes sure the companies' configurations and secrets are Redis's before this instance notifies
   * or signs for them: a secret none has yet is created (this instance's candidate, unless another
   * wrote one first). `fresh`: read them again even if loaded (a client reading or changing its
   * configuration sees the fleet's latest, not this instance's copy of up to `refreshMs` ago).
   */
  async ensure(companyIds: Iterable<number>, fresh = false): Promise<void> {
    const missing = [...new Set(companyIds)].filter((c) => fresh || !this.#known.has(c));
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

  /** Writes a company's configuration (before its 200; `ensure` it before changing it). */
  async save(companyId: number): Promise<void> {
    await this.#client.hset(this.#configs, String(companyId), JSON.stringify(this.#notifier.config(companyId)));
  }
}
