/**
 * The SMPP channel when the connection fails: the window of unanswered PDUs, a connection dropped
 * in the middle of a batch (what the SMSC had not answered goes again after the next bind, what it
 * answered never does), a connection that stops answering, an SMSC that is not there.
 */
import { createServer, type AddressInfo } from 'node:net';
import { ManualClock } from '../../src/core/clock.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createSmppChannel, type SmppChannelOptions, type SmppEvent } from '../../src/server/index.js';
import type { SmsSendResult } from '../../src/server/ports/channel.js';
import { waitFor } from './helpers.js';
import { outgoingSms, recordingSink, smscAndChannel, startFakeSmsc, type Cleanup, type FakeSmsc, type Submit } from './smpp-smsc.js';

const cleanup: Cleanup = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function setup(channelOptions: Partial<SmppChannelOptions> = {}) {
  const { smsc, channel, events } = await smscAndChannel(cleanup, {}, channelOptions);
  await channel.whenBound();
  return { smsc, channel, events };
}

/** One key per part of an SMS: a part accepted twice shows up as a repeated key. */
const partKey = (s: Submit) => `${s.destination}#${s.concat?.[2] ?? 1}`;

function expectEachPartAcceptedOnce(smsc: FakeSmsc, expectedParts: number): void {
  const keys = smsc.accepted.map(partKey);
  expect(new Set(keys).size).toBe(keys.length);
  expect(keys.length).toBe(expectedParts);
}

describe('SMPP channel: window', () => {
  it('keeps at most `window` submit_sm unanswered; the rest wait in the queue', async () => {
    const { smsc, channel } = await setup({ window: 8 });
    smsc.hold();
    const sends = Array.from({ length: 30 }, (_, i) => channel.sendSms(outgoingSms(i, `SMS ${i}`)));
    await waitFor(() => smsc.held.length === 8, 'a full window at the SMSC');
    expect(channel.stats()).toMatchObject({ outstanding: 8, queued: 22, submitted: 8 });
    smsc.release();
    const results = await Promise.all(sends);
    expect(results.every((r) => r.status === 'sent')).toBe(true);
    expect(smsc.maxUnanswered).toBe(8);
    expectEachPartAcceptedOnce(smsc, 30);
  });
});

describe('SMPP channel: a dropped connection', () => {
  it('mid-batch: unanswered PDUs go again after the next bind, answered ones never', async () => {
    const { smsc, channel, events } = await setup({ window: 20 });
    // 60 SMS, every third in 3 parts: 100 submit_sm.
    const sms = Array.from({ length: 60 }, (_, i) => outgoingSms(i, i % 3 === 0 ? `${'long '.repeat(70)}${i}` : `short ${i}`));
    const totalParts = sms.reduce((n, s) => n + s.parts, 0);
    expect(totalParts).toBe(100);
    const results: SmsSendResult[] = [];
    smsc.holdAfter(37);
    const sends = sms.map((s) => channel.sendSms(s).then((r) => results.push(r)));
    // 37 answered and their answers read by the channel; a full window read and not answered.
    await waitFor(() => channel.stats().accepted === 37 && smsc.held.length === 20, '37 answers read and 20 PDUs held');
    const heldKeys = smsc.held.map(partKey);
    smsc.kill();
    await Promise.all(sends);

    expect(results).toHaveLength(60);
    expect(results.every((r) => r.status === 'sent')).toBe(true);
    expectEachPartAcceptedOnce(smsc, totalParts);
    // Exactly the held PDUs were read twice by the SMSC; nothing it answered came again.
    const seen = new Map<string, number>();
    for (const r of smsc.received) seen.set(partKey(r), (seen.get(partKey(r)) ?? 0) + 1);
    expect(
      [...seen]
        .filter(([, n]) => n > 1)
        .map(([k]) => k)
        .sort(),
    ).toEqual([...heldKeys].sort());
    expect(smsc.received.length).toBe(totalParts + 20);
    expect(smsc.accepted.filter((a) => heldKeys.includes(partKey(a))).every((a) => a.connection === 2)).toBe(true);
    expect(channel.stats()).toMatchObject({ resent: 20, binds: 2, disconnects: 1, smsSent: 60, smsFailed: 0, outstanding: 0, queued: 0 });
    expect(events.find((e) => e.type === 'disconnected')).toMatchObject({ type: 'disconnected', requeued: 20 });
    expect(smsc.connections).toBe(2);
  });

  it('a connection that stops answering is dropped after responseTimeoutMs and its PDUs go again', async () => {
    const { smsc, channel, events } = await setup({ window: 5, responseTimeoutMs: 200 });
    smsc.hold();
    const sends = Array.from({ length: 12 }, (_, i) => channel.sendSms(outgoingSms(i, `SMS ${i}`)));
    await waitFor(() => smsc.held.length === 5, 'a full window held');
    smsc.stopHolding(); // the next connection is answered; this one never is
    const results = await Promise.all(sends);
    expect(results.every((r) => r.status === 'sent')).toBe(true);
    expect(events).toContainEqual({ type: 'response-timeout', bind: `127.0.0.1:${smsc.port} transceiver 1`, outstanding: 5 });
    expectEachPartAcceptedOnce(smsc, 12);
    expect(channel.stats()).toMatchObject({ resent: 5, binds: 2 });
  });

  it('an unbind from the SMSC is answered, and the channel binds again', async () => {
    const { smsc, channel } = await setup();
    smsc.unbind();
    await waitFor(() => channel.stats().binds === 2, 'a second bind');
    expect(await channel.sendSms(outgoingSms(0, 'after the unbind'))).toEqual({ status: 'sent' });
    expect(smsc.accepted.map((a) => a.connection)).toEqual([2]);
  });

  it('ESME_RINVBNDSTS (the SMSC no longer counts the bind): bind again and send the part again', async () => {
    const { smsc, channel } = await setup({ window: 1 });
    smsc.refuseNext(1, 0x04);
    expect(await channel.sendSms(outgoingSms(0, 'one'))).toEqual({ status: 'sent' });
    expect(smsc.received.map((r) => r.connection)).toEqual([1, 2]);
    expect(smsc.accepted).toHaveLength(1);
    expect(channel.stats()).toMatchObject({ binds: 2, smsSent: 1, smsFailed: 0 });
  });

  it('enquire_link keeps a quiet connection checked', async () => {
    const { smsc, channel } = await setup({ enquireLinkMs: 20 });
    await waitFor(() => smsc.enquiries >= 3, 'three enquire_link');
    expect(channel.stats()).toMatchObject({ binds: 1, disconnects: 0 });
  });

  it('an SMSC that is not there: reconnects keep being tried, SMS are answered failed once their validity ends', async () => {
    const clock = new ManualClock(1_000_000);
    const smsc = await startFakeSmsc();
    const port = smsc.port;
    await smsc.close();
    const events: SmppEvent[] = [];
    const channel = createSmppChannel({
      host: '127.0.0.1',
      port,
      systemId: 'sendpool',
      password: 'secret1',
      sourceAddr: 'SENDPOOL',
      validityMs: 60_000,
      clock,
      reconnectBackoff: { minMs: 5, maxMs: 20 },
      onEvent: (e) => events.push(e),
    });
    cleanup.push(() => channel.close());
    const sent = channel.sendSms(outgoingSms(0, 'hello'));
    await waitFor(() => events.filter((e) => e.type === 'disconnected').length >= 2, 'two failed connections');
    clock.advance(59_999);
    expect(channel.stats()).toMatchObject({ smsFailed: 0 });
    clock.advance(1);
    expect(await sent).toEqual({ status: 'failed', reason: 'SMPP: not accepted within its validity of 60000 ms (last: not bound)' });
    expect(events.find((e) => e.type === 'disconnected')).toMatchObject({ reason: 'ECONNREFUSED', requeued: 0 });
  });
});

describe('SMPP channel: PDUs it does not take', () => {
  const header = (length: number, commandId: number, sequence: number) => {
    const b = Buffer.alloc(Math.max(16, length));
    b.writeUInt32BE(length, 0);
    b.writeUInt32BE(commandId, 4);
    b.writeUInt32BE(sequence, 12);
    return b;
  };

  it('a request it does not take (query_sm) is refused with generic_nack ESME_RINVCMDID; sending goes on', async () => {
    const { smsc, channel } = await setup();
    smsc.sendRaw(header(16, 0x00000003, 41));
    await waitFor(() => smsc.nacks.length === 1, 'a generic_nack');
    expect(smsc.nacks).toEqual([0x03]);
    expect(await channel.sendSms(outgoingSms(1, 'after'))).toEqual({ status: 'sent' });
    expect(channel.stats()).toMatchObject({ binds: 1, disconnects: 0 });
  });

  it('a command_length that cannot be: the connection is dropped and bound again, the SMS go on', async () => {
    const { smsc, channel, events } = await setup({ reconnectBackoff: { minMs: 5, maxMs: 20 } });
    smsc.sendRaw(header(8, 0x00000005, 1));
    await waitFor(() => channel.stats().binds === 2, 'bound again');
    expect(events.find((e) => e.type === 'disconnected')).toMatchObject({ reason: 'unreadable PDU: command_length 8: expected 16 to 16384' });
    expect(await channel.sendSms(outgoingSms(2, 'after'))).toEqual({ status: 'sent' });
  });
});

describe('SMPP channel: closed before it is bound', () => {
  it('with the bind unanswered: the connection just goes, no unbind follows the bind', async () => {
    // An SMSC that reads PDUs and answers none: the bind stays unanswered.
    const commands: number[] = [];
    let ended = false;
    const server = createServer((socket) => {
      socket.on('data', (chunk: Buffer) => {
        for (let at = 0; at + 16 <= chunk.length; at += chunk.readUInt32BE(at)) commands.push(chunk.readUInt32BE(at + 4));
      });
      socket.on('close', () => (ended = true));
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanup.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const channel = createSmppChannel({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, systemId: 'sendpool', password: 'secret1', sourceAddr: 'SENDPOOL' });
    channel.attach(recordingSink().sink);
    await waitFor(() => commands.includes(0x09), 'the bind read by the SMSC');
    await channel.close();
    await waitFor(() => ended, 'the connection closed');
    expect(commands).toEqual([0x09]);
    expect(channel.stats()).toMatchObject({ bound: false, binds: 0 });
  });
});
