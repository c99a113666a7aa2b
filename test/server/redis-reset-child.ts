/**
 * Child process of the Redis reset tests (redis-reset.test.ts, redis-reset-journal.test.ts): one
 * instance of the server on Redis with a state directory of its own, /metrics on, its log (warn and
 * above) on standard output, and a channel that appends every attempt to a shared log before
 * answering (the independent record of what a provider received). With `gate`, every send is held
 * until that file exists (a send held when the process is killed was never received). Writes its
 * address to `<log>.<name>.address` once listening.
 */
import { existsSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { runServer, type Channel } from '../../src/server/index.js';

const cfg = JSON.parse(process.env['SENDPOOL_RESET_CHILD']!) as {
  fleetFile: string;
  redisUrl: string;
  log: string;
  key: string;
  name: string;
  secret: string;
  leaseMs: number;
  stateDir?: string;
  gate?: string;
};
const log = openSync(cfg.log, 'a');
/** Resolves once the gate file exists (looked at every 20 ms: the test creates it when sends may go). */
function gateOpen(gate: string): Promise<void> {
  return new Promise((resolve) => {
    const look = () => (existsSync(gate) ? resolve() : setTimeout(look, 20));
    look();
  });
}
const channel: Channel = {
  async send(m) {
    if (cfg.gate !== undefined) await gateOpen(cfg.gate);
    writeSync(log, `${JSON.stringify({ at: m.handedOutAt, phone: m.phone, ref: String(m.contact.data?.['ref']), id: m.messageId, by: cfg.name })}\n`);
    return { status: 'sent' };
  },
  async sendSms() {
    return { status: 'sent' };
  },
  attach() {},
};
const running = await runServer({
  fleetFile: cfg.fleetFile,
  port: 0,
  redis: { url: cfg.redisUrl, consumer: cfg.name, leaseMs: cfg.leaseMs, prefetchContacts: 1000, ...(cfg.stateDir === undefined ? {} : { stateDir: cfg.stateDir }) },
  apiKeys: [{ key: cfg.key, companyId: 1 }],
  webhookSecrets: { 1: cfg.secret },
  channel,
  logger: { level: 'warn' },
  handleSignals: false,
  allowPrivateWebhookTargets: true,
  outbox: { initialDelayMs: 50, backoffFactor: 2, maxDelayMs: 500, attemptTimeoutMs: 5000 },
  delivery: { concurrencyPerTarget: 64, maxInFlight: 256 },
});
writeFileSync(`${cfg.log}.${cfg.name}.address`, running.address);
