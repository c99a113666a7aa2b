/**
 * Child process of the damaged-store tests: the reference server on a durable store with a channel
 * that appends every send it answers as sent (the contact's ref and id) to a log file: the
 * independent record of what a provider received. With `hold`, sends are held unanswered (queued
 * work stays in the store) until SIGTERM, which answers them as sent and closes the server
 * gracefully. Writes `<log>.address` once listening (and `<log>.recovery`, the recovery report, if
 * any), or `<log>.error` with the message and exits 3 when the server refuses to start.
 */
import { openSync, writeFileSync, writeSync } from 'node:fs';
import { runServer, type Channel } from '../../src/server/index.js';

const cfg = JSON.parse(process.env['SENDPOOL_STORE_CHECK']!) as { fleetFile: string; dataDir: string; log: string; key: string; hold: boolean; recover: boolean };
const log = openSync(cfg.log, 'a');
let holding = cfg.hold;
const held: (() => void)[] = [];
const channel: Channel = {
  async send(m) {
    const line = `${JSON.stringify({ ref: String(m.contact.data?.['ref']), cid: (m.contact as { id?: number }).id })}\n`;
    if (holding) await new Promise<void>((resolve) => held.push(resolve));
    writeSync(log, line);
    return { status: 'sent' };
  },
  async sendSms() {
    return { status: 'sent' };
  },
  attach() {},
};
let running: Awaited<ReturnType<typeof runServer>>;
try {
  running = await runServer({
    fleetFile: cfg.fleetFile,
    port: 0,
    dataDir: cfg.dataDir,
    recover: cfg.recover,
    apiKeys: [{ key: cfg.key, companyId: 1 }],
    channel,
    logger: { level: 'error' },
    handleSignals: false,
    // The webhook receiver is the test's, on 127.0.0.1; campaign batches often, to see the counts.
    allowPrivateWebhookTargets: true,
    campaignBatchIntervalMs: 100,
  });
} catch (e) {
  writeFileSync(`${cfg.log}.error`, e instanceof Error ? e.message : String(e));
  process.exit(3);
}
process.once('SIGTERM', () => {
  holding = false;
  for (const release of held.splice(0)) release();
  void running.close().then(() => process.exit(0));
});
if (running.recovery) writeFileSync(`${cfg.log}.recovery`, JSON.stringify(running.recovery));
writeFileSync(`${cfg.log}.address`, running.address);
