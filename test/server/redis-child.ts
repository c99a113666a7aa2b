/**
 * Child process of the multi-instance test: one instance of the server on Redis, with a channel
 * that appends every attempt (with its charge time and its instance) to a shared log before
 * answering — the independent record of what a provider received. Contacts whose ref ends in 3 are
 * undeliverable (131026, final); in 7 fail their first attempt (131000, a retry). Prints nothing;
 * writes its address to `<log>.<name>.address` once listening.
 */
import { openSync, writeFileSync, writeSync } from 'node:fs';
import { runServer, type Channel } from '../../src/server/index.js';

const cfg = JSON.parse(process.env['SENDPOOL_REDIS_CHILD']!) as {
  fleetFile: string;
  redisUrl: string;
  prefix: string;
  log: string;
  key: string;
  name: string;
  secret: string;
  leaseMs: number;
  prefetch?: number;
};
const log = openSync(cfg.log, 'a');
const channel: Channel = {
  async send(m) {
    const ref = String(m.contact.data?.['ref']);
    const code = ref.endsWith('3') ? 131026 : m.retryIndex === null && ref.endsWith('7') ? 131000 : undefined;
    writeSync(log, `${JSON.stringify({ at: m.handedOutAt, phone: m.phone, ref, id: m.messageId, by: cfg.name, ok: code === undefined, ...(code === undefined ? {} : { code }) })}\n`);
    return code === undefined ? { status: 'sent' } : { status: 'failed', code };
  },
  async sendSms() {
    return { status: 'sent' };
  },
  attach() {},
};
const running = await runServer({
  fleetFile: cfg.fleetFile,
  port: 0,
  redis: { url: cfg.redisUrl, prefix: cfg.prefix, consumer: cfg.name, leaseMs: cfg.leaseMs, prefetchContacts: cfg.prefetch ?? 1000 },
  apiKeys: [{ key: cfg.key, companyId: 1 }],
  webhookSecrets: { 1: cfg.secret },
  // Statistics batches every half second, fleet-wide (the interval is claimed in Redis).
  campaignBatchIntervalMs: 500,
  // A sent contact counts as sent once this window passes (the batch claim settles it, fleet-wide).
  failureWindowMs: 1_000,
  channel,
  logger: { level: 'error' },
  handleSignals: false,
  metrics: false,
  allowPrivateWebhookTargets: true,
  outbox: { initialDelayMs: 50, backoffFactor: 2, maxDelayMs: 500, attemptTimeoutMs: 5000 },
  delivery: { concurrencyPerTarget: 64, maxInFlight: 256 },
});
writeFileSync(`${cfg.log}.${cfg.name}.address`, running.address);
