/**
 * The SMPP channel when the SMSC says "slow down" (ESME_RTHROTTLED, ESME_RMSGQFUL): the PDU goes
 * again after a pause and the SMS is sent, not failed. Any other refusal fails the SMS with the
 * SMSC's status.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { SmppChannelOptions } from '../../src/server/index.js';
import { waitFor } from './helpers.js';
import { outgoingSms, smscAndChannel, type Cleanup } from './smpp-smsc.js';

const cleanup: Cleanup = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function setup(channelOptions: Partial<SmppChannelOptions> = {}) {
  const { smsc, channel, events } = await smscAndChannel(cleanup, {}, { sourceAddr: '5511300000000', throttleBackoff: { minMs: 10, maxMs: 40 }, ...channelOptions });
  await channel.whenBound();
  return { smsc, channel, events };
}

describe('SMPP channel: throttling', () => {
  it.each([
    ['ESME_RTHROTTLED', 0x58],
    ['ESME_RMSGQFUL', 0x14],
  ])('%s: the PDU goes again after a pause; every SMS is sent once', async (name, status) => {
    const { smsc, channel, events } = await setup({ window: 10 });
    smsc.throttleNext(25, status);
    const sms = Array.from({ length: 40 }, (_, i) => outgoingSms(i, `SMS ${i}`));
    const results = await Promise.all(sms.map((s) => channel.sendSms(s)));
    expect(results.every((r) => r.status === 'sent')).toBe(true);
    expect(smsc.accepted.map((a) => a.destination).sort()).toEqual(sms.map((s) => s.phone).sort());
    expect(smsc.received).toHaveLength(40 + 25);
    expect(channel.stats()).toMatchObject({ throttled: 25, accepted: 40, smsSent: 40, smsFailed: 0 });
    const throttled = events.filter((e) => e.type === 'throttled');
    expect(throttled.length).toBeGreaterThanOrEqual(1);
    expect(throttled[0]).toEqual({ type: 'throttled', reason: `SMPP 0x${status.toString(16).padStart(8, '0')} ${name}`, backoffMs: 10 });
    // Each pause doubles the one before (up to the maximum) while the SMSC keeps throttling, and
    // starts from the minimum again after it accepted.
    const waits = throttled.map((e) => (e.type === 'throttled' ? e.backoffMs : 0));
    for (let i = 1; i < waits.length; i++) expect([10, Math.min(40, 2 * waits[i - 1]!)]).toContain(waits[i]);
  });

  it('the pause is over as soon as the SMSC accepts again: the back-off starts from its minimum', async () => {
    const { smsc, channel, events } = await setup({ window: 1 });
    smsc.throttleNext(2);
    expect(await channel.sendSms(outgoingSms(0, 'one'))).toEqual({ status: 'sent' });
    smsc.throttleNext(1);
    expect(await channel.sendSms(outgoingSms(1, 'two'))).toEqual({ status: 'sent' });
    const waits = events.flatMap((e) => (e.type === 'throttled' ? [e.backoffMs] : []));
    expect(waits).toEqual([10, 20, 10]);
  });

  it('any other refusal fails that SMS with the SMSC status; the others are sent', async () => {
    const { smsc, channel } = await setup({ window: 1 });
    const first = channel.sendSms(outgoingSms(0, 'first'));
    await waitFor(() => smsc.accepted.length === 1, 'the first SMS accepted');
    smsc.refuseNext(1, 0x0b);
    const [a, b, c] = await Promise.all([first, channel.sendSms(outgoingSms(1, 'second')), channel.sendSms(outgoingSms(2, 'third'))]);
    expect(a).toEqual({ status: 'sent' });
    expect(b).toEqual({ status: 'failed', reason: 'SMPP 0x0000000b ESME_RINVDSTADR' });
    expect(c).toEqual({ status: 'sent' });
    expect(channel.stats()).toMatchObject({ smsSent: 2, smsFailed: 1 });
  });

  it('a long SMS refused at one part is failed and its other parts are not sent', async () => {
    const { smsc, channel } = await setup({ window: 1 });
    smsc.refuseNext(1, 0x45);
    const result = await channel.sendSms(outgoingSms(0, 'p'.repeat(400)));
    expect(result).toEqual({ status: 'failed', reason: 'SMPP 0x00000045 ESME_RSUBMITFAIL' });
    expect(await channel.sendSms(outgoingSms(1, 'after'))).toEqual({ status: 'sent' });
    expect(smsc.received.map((r) => r.destination)).toEqual([outgoingSms(0, '').phone, outgoingSms(1, '').phone]);
  });
});
