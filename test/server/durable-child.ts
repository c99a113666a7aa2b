/**
 * Child process of the kill -9 test: the reference server on a durable store, with a channel that
 * appends every send to a log file before answering "sent" (the independent record the test reads:
 * what a provider would have received). Prints its address once listening.
 */
import { openSync, writeFileSync, writeSync } from 'node:fs';
import { runServer, type Channel } from '../../src/server/index.js';

const cfg = JSON.parse(process.env['SENDPOOL_DURABLE']!) as { fleetFile: string; dataDir: string; log: string; key: string };
const log = openSync(cfg.log, 'a');
const channel: Channel = {
  async send(m) {
    writeSync(log, `${JSON.stringify({ at: Date.now(), phone: m.phone, ref: m.contact.data?.['ref'], id: m.messageId })}\n`);
    return { status: 'sent' };
  },
  async sendSms() {
    return { status: 'sent' } as never;
  },
  attach() {},
};
const running = await runServer({
  fleetFile: cfg.fleetFile,
  port: 0,
  dataDir: cfg.dataDir,
  apiKeys: [{ key: cfg.key, companyId: 1 }],
  channel,
  logger: false,
  handleSignals: false,
  metrics: false,
});
writeFileSync(`${cfg.log}.address`, running.address);
process.stdout.write(`${running.address}\n`);
