/**
 * Child process of the kill -9 test: the reference server on a durable store, with a channel that
 * appends every attempt (with its charge time) to a log file before answering (the independent record the test reads:
 * what a provider would have received). Contacts whose ref ends in 7 fail their first attempt
 * (131000, a contact retry), in 5 are throttled once (130429, the number rests), in 3 are
 * undeliverable (131026, final), in 8 or 9 find template 100 paused by the provider (132015: the
 * template is paused for 3 hours and the contact fails over to template 101; two endings, one even
 * and one odd, so that the rotation of templates over contacts cannot keep them all off 100). A
 * message id it accepted before (in any life of the server) is answered as sent again, as a
 * provider deduplicating by it would. Prints its address once listening.
 */
import { openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { runServer, type Channel } from '../../src/server/index.js';

const cfg = JSON.parse(process.env['SENDPOOL_DURABLE']!) as { fleetFile: string; dataDir: string; log: string; key: string };
const log = openSync(cfg.log, 'a');
/**
 * Message ids this provider accepted, in any life of the server: a send again under one of them is
 * answered as sent and sends nothing (an idempotency key, as docs/server.md asks of providers). A
 * send in flight at a kill goes again under its id, but the engine assigns its template again, and
 * a provider without this would fail a resend on a template paused since (132015) and see the
 * failover's new id as a second message.
 */
const accepted = new Set<string>();
try {
  for (const line of readFileSync(cfg.log, 'utf8').split('\n')) {
    try {
      const l = JSON.parse(line) as { id: string; ok: boolean; sms?: boolean };
      if (l.ok && l.sms !== true) accepted.add(l.id);
    } catch {
      // an empty or cut line
    }
  }
} catch {
  // no log yet
}
const channel: Channel = {
  async send(m) {
    const ref = String(m.contact.data?.['ref']);
    if (accepted.has(m.messageId)) {
      writeSync(log, `${JSON.stringify({ at: m.handedOutAt, phone: m.phone, ref, id: m.messageId, tpl: m.templateId, ok: true, again: true })}\n`);
      return { status: 'sent' };
    }
    const first = m.retryIndex === null;
    const code = ref.endsWith('3')
      ? 131026
      : first && ref.endsWith('7')
        ? 131000
        : ref.endsWith('5') && m.messageId.endsWith('.0')
          ? 130429
          : (ref.endsWith('8') || ref.endsWith('9')) && m.templateId === 100
            ? 132015
            : undefined;
    // The charge time (when the engine took the number's capacity), which the windows are about.
    writeSync(log, `${JSON.stringify({ at: m.handedOutAt, phone: m.phone, ref, id: m.messageId, tpl: m.templateId, ok: code === undefined, ...(code === undefined ? {} : { code }) })}\n`);
    if (code === undefined) accepted.add(m.messageId);
    return code === undefined ? { status: 'sent' } : { status: 'failed', code };
  },
  async sendSms(sms) {
    writeSync(log, `${JSON.stringify({ at: Date.now(), phone: sms.phone, ref: `sms:${sms.reference}`, id: sms.smsId, ok: true, sms: true })}\n`);
    return { status: 'sent' };
  },
  attach() {},
};
const running = await runServer({
  fleetFile: cfg.fleetFile,
  port: 0,
  dataDir: cfg.dataDir,
  apiKeys: [{ key: cfg.key, companyId: 1 }],
  channel,
  logger: { level: 'error' },
  handleSignals: false,
  metrics: false,
  campaignBatchIntervalMs: 100,
  // A sent contact counts as sent once this window passes (its end is kept across the kills).
  failureWindowMs: 1_000,
  allowPrivateWebhookTargets: true,
  outbox: { initialDelayMs: 50, backoffFactor: 2, maxDelayMs: 500, attemptTimeoutMs: 5000 },
  delivery: { concurrencyPerTarget: 64, maxInFlight: 256 },
});
writeFileSync(`${cfg.log}.address`, running.address);
