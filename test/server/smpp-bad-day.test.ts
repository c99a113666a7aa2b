/**
 * The SMPP channel on an SMSC's bad day, against the local SMSC (the `smpp` package's server
 * side), with a manual clock driving validity and back-off: an outage mid-campaign fails nothing,
 * transient answers are retried within validity and permanent ones fail at once, an SMS with a part
 * on the wire is never failed for a time that ran out before its answer (the rebind race), a
 * refused bind moves traffic to the next SMSC and back, receipts arrive on another bind, and the
 * TPS cap holds before anything is sent. Each check reads the SMSC's own record of what it
 * accepted, not what the channel says it sent.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { CMD } from '../../src/server/channels/smpp-frames.js';
import { tpsBucket } from '../../src/server/channels/smpp-pool.js';
import { createSmppChannel, type SmppEvent, type SmsSendResult } from '../../src/server/index.js';
import { api, waitFor } from './helpers.js';
import { outgoingSms, recordingSink, smscAndChannel, startFakeSmsc, type Cleanup, type FakeSmsc } from './smpp-smsc.js';
import { killChild, startChild, startSmppChild, type Child } from './whatsapp-smpp-restart.js';

const cleanup: Cleanup = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});
const dir = mkdtempSync(join(tmpdir(), 'sendpool-smpp-bad-day-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ESME_RSYSERR = 0x08;
const ESME_RX_T_APPN = 0x64;
const ESME_RINVDSTADR = 0x0b;

/** Destinations the SMSC accepted, each with how many times. */
function acceptedTimes(smsc: FakeSmsc): Map<string, number> {
  const by = new Map<string, number>();
  for (const a of smsc.accepted) by.set(a.destination, (by.get(a.destination) ?? 0) + 1);
  return by;
}

/** Settles every promise, noting each result as it comes. */
function track(sends: Promise<SmsSendResult>[]) {
  const results: (SmsSendResult | undefined)[] = sends.map(() => undefined);
  sends.forEach((p, i) => void p.then((r) => (results[i] = r)));
  return {
    results,
    get answered() {
      return results.filter((r) => r !== undefined).length;
    },
    get failed() {
      return results.filter((r) => r?.status === 'failed');
    },
  };
}

describe('SMPP bad day: store and forward', () => {
  it('an outage of 30 s (clock) mid-campaign fails nothing: every SMS is accepted once it is back', async () => {
    const clock = new ManualClock(1_000_000);
    const { smsc, channel } = await smscAndChannel(cleanup, {}, { clock, window: 10 });
    await channel.whenBound();
    const sends = Array.from({ length: 200 }, (_, i) => channel.sendSms(outgoingSms(i, `SMS ${i}`)));
    const t = track(sends);
    smsc.holdAfter(60);
    await waitFor(() => smsc.acceptedCount >= 60 && smsc.held.length > 0, 'the outage to begin mid-campaign');
    smsc.down();
    // Thirty seconds of the clock pass while the SMSC refuses every connection.
    for (let s = 0; s < 30; s++) {
      clock.advance(1_000);
      await waitFor(() => channel.stats().disconnects > s, `a failed connection in second ${s}`);
    }
    expect(t.failed).toEqual([]);
    smsc.up();
    await waitFor(() => t.answered === 200, 'every SMS answered');
    expect(t.failed).toEqual([]);
    const times = acceptedTimes(smsc);
    expect(times.size).toBe(200);
    // Only parts on the wire when it went down may be accepted twice (at least once).
    const twice = [...times.values()].filter((n) => n > 1).length;
    expect(twice).toBeLessThanOrEqual(10);
    expect(channel.stats()).toMatchObject({ smsSent: 200, smsFailed: 0 });
  });

  it('bursts of ESME_RSYSERR and ESME_RX_T_APPN are retried with back-off; a permanent status fails at once', async () => {
    const clock = new ManualClock(1_000_000);
    const { smsc, channel } = await smscAndChannel(cleanup, {}, { clock, retryBackoff: { minMs: 1_000, maxMs: 8_000 } });
    await channel.whenBound();
    smsc.refuseNext(40, ESME_RSYSERR);
    const first = track(Array.from({ length: 30 }, (_, i) => channel.sendSms(outgoingSms(i, `SMS ${i}`))));
    await waitFor(() => channel.stats().retried >= 30, 'thirty transient answers');
    expect(channel.stats()).toMatchObject({ delayed: 30, smsFailed: 0 });
    // Nothing goes again before its back-off (at least half of minMs: jitter)…
    clock.advance(499);
    expect(channel.stats().delayed).toBe(30);
    // …and everything within the longest back-off of the SMS's tries; ten are refused once more.
    for (let i = 0; i < 6 && first.answered < 30; i++) {
      const { delayed, submitted } = channel.stats();
      clock.advance(8_000);
      await waitFor(() => channel.stats().submitted >= submitted + delayed, 'the next tries');
      await waitFor(() => channel.stats().outstanding === 0, 'their answers');
    }
    await waitFor(() => first.answered === 30, 'the burst answered');
    expect(first.failed).toEqual([]);
    expect(channel.stats().retried).toBe(40);

    smsc.refuseNext(1, ESME_RX_T_APPN);
    const again = channel.sendSms(outgoingSms(50, 'after a temporary error'));
    await waitFor(() => channel.stats().delayed === 1, 'the part waiting');
    clock.advance(1_000);
    expect(await again).toEqual({ status: 'sent' });

    smsc.refuseNext(1, ESME_RINVDSTADR);
    expect(await channel.sendSms(outgoingSms(60, 'to nowhere'))).toEqual({ status: 'failed', reason: 'SMPP 0x0000000b ESME_RINVDSTADR' });
    expect(acceptedTimes(smsc).size).toBe(31);
  });

  it('a transient status keeps being answered: the SMS fails when its validity ends, the status in its reason', async () => {
    const clock = new ManualClock(1_000_000);
    const { smsc, channel } = await smscAndChannel(cleanup, {}, { clock, validityMs: 10_000, retryBackoff: { minMs: 1_000, maxMs: 2_000 } });
    await channel.whenBound();
    smsc.refuseNext(1_000, ESME_RSYSERR);
    const sent = channel.sendSms(outgoingSms(0, 'never accepted'));
    const result = track([sent]);
    await waitFor(() => channel.stats().delayed === 1, 'the first try refused');
    for (let i = 0; i < 12 && result.answered === 0; i++) {
      const before = channel.stats().submitted;
      clock.advance(2_000);
      await waitFor(() => channel.stats().submitted > before || result.answered === 1, 'the next try, or the end');
      await waitFor(() => channel.stats().outstanding === 0, 'its answer');
    }
    expect(await sent).toEqual({ status: 'failed', reason: 'SMPP: not accepted within its validity of 10000 ms (last: SMPP 0x00000008 ESME_RSYSERR)' });
    // Every try carried what was left of its validity, less each time (to the second).
    const left = smsc.received.map((r) => Math.round(r.validityMs! / 1000));
    expect(left.length).toBeGreaterThan(3);
    expect(left[0]).toBe(10);
    for (let i = 1; i < left.length; i++) expect(left[i]).toBeLessThan(left[i - 1]!);
  });

  it('the rebind race: parts written after a rebind and accepted after the validity ran out are SENT, not FAILED', async () => {
    const clock = new ManualClock(1_000_000);
    const { smsc, channel } = await smscAndChannel(cleanup, {}, { clock, validityMs: 5_000, window: 50, enquireLinkMs: 20 });
    await channel.whenBound();
    smsc.hold();
    const t = track(Array.from({ length: 20 }, (_, i) => channel.sendSms(outgoingSms(i, `SMS ${i}`))));
    await waitFor(() => smsc.held.length === 20, 'twenty parts on the wire');
    // The connection drops; the parts go again on the next bind and are held there too.
    smsc.kill();
    smsc.hold();
    await waitFor(() => smsc.held.length === 20 && channel.stats().binds === 2, 'the parts written again after the rebind');
    // The validity runs out while they wait for their answer: nothing is failed for it (two
    // enquire_link later, the channel's tick has run since).
    clock.advance(60_000);
    const enquiries = smsc.enquiries;
    await waitFor(() => smsc.enquiries >= enquiries + 2, 'two ticks');
    expect(t.answered).toBe(0);
    // …and the SMSC's acceptance is what the client hears.
    smsc.release();
    await waitFor(() => t.answered === 20, 'every SMS answered');
    expect(t.failed).toEqual([]);
    expect(smsc.acceptedCount).toBe(20);
  });

  it('an SMS handed over after its validity ended is answered failed without being sent', async () => {
    const clock = new ManualClock(10_000_000);
    const { smsc, channel } = await smscAndChannel(cleanup, {}, { clock, validityMs: 60_000 });
    const result = await channel.sendSms({ ...outgoingSms(0, 'too late'), acceptedAt: 10_000_000 - 60_000 });
    expect(result).toEqual({ status: 'failed', reason: 'SMPP: its validity of 60000 ms ended before it could be sent' });
    expect(smsc.received).toHaveLength(0);
  });
});

describe('SMPP bad day: an SMSC that unbinds and never closes', () => {
  /** PDU octets: a header and a body. */
  const pdu = (commandId: number, sequence: number, body = Buffer.alloc(0)) => {
    const b = Buffer.alloc(16 + body.length);
    b.writeUInt32BE(b.length, 0);
    b.writeUInt32BE(commandId, 4);
    b.writeUInt32BE(sequence, 12);
    body.copy(b, 16);
    return b;
  };

  it('is closed after responseTimeoutMs: the parts it held go again on the next bind', async () => {
    // A raw SMSC: binds anyone; on its first connection it holds the submit_sm and unbinds, keeping
    // its side open; on the next it answers.
    let connections = 0;
    const accepted: number[] = [];
    const sockets = new Set<Socket>();
    // allowHalfOpen: the client's end after its unbind_resp does not close this side.
    const server = createServer({ allowHalfOpen: true }, (socket) => {
      const n = ++connections;
      sockets.add(socket);
      socket.on('error', () => undefined);
      let buffered = Buffer.alloc(0);
      socket.on('data', (chunk: Buffer) => {
        buffered = Buffer.concat([buffered, chunk]);
        while (buffered.length >= 16 && buffered.length >= buffered.readUInt32BE(0)) {
          const frame = buffered.subarray(0, buffered.readUInt32BE(0));
          buffered = buffered.subarray(frame.length);
          const command = frame.readUInt32BE(4);
          const sequence = frame.readUInt32BE(12);
          if (command === CMD.BIND_TRANSCEIVER) socket.write(pdu(CMD.BIND_TRANSCEIVER_RESP, sequence, Buffer.from('raw\0')));
          else if (command === CMD.SUBMIT_SM && n === 1) socket.write(pdu(CMD.UNBIND, 1));
          else if (command === CMD.SUBMIT_SM) {
            accepted.push(n);
            socket.write(pdu(CMD.SUBMIT_SM_RESP, sequence, Buffer.from(`id${sequence}\0`)));
          } else if (command === CMD.ENQUIRE_LINK) socket.write(pdu(CMD.ENQUIRE_LINK_RESP, sequence));
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    cleanup.push(
      () =>
        new Promise<void>((resolve) => {
          for (const s of sockets) s.destroy();
          server.close(() => resolve());
        }),
    );
    const events: SmppEvent[] = [];
    const channel = createSmppChannel({
      host: '127.0.0.1',
      port: (server.address() as AddressInfo).port,
      systemId: 'sendpool',
      password: 'secret1',
      sourceAddr: 'SENDPOOL',
      responseTimeoutMs: 200,
      reconnectBackoff: { minMs: 5, maxMs: 20 },
      deliveryReceipts: false,
      onEvent: (e) => events.push(e),
    });
    cleanup.push(() => channel.close());
    channel.attach(recordingSink().sink);
    expect(await channel.sendSms(outgoingSms(0, 'held, then unbound'))).toEqual({ status: 'sent' });
    expect(accepted).toEqual([2]);
    expect(events).toContainEqual(expect.objectContaining({ type: 'disconnected', reason: 'unbound by the SMSC, its side never closed', requeued: 1 }));
  });
});

describe('SMPP bad day: the bind pool', () => {
  /** A primary and a backup SMSC and a channel over both; `before` runs on the primary before the channel connects. */
  async function twoSmscs(before: (a: FakeSmsc) => void = () => undefined) {
    const a = await startFakeSmsc();
    const b = await startFakeSmsc();
    cleanup.push(
      () => a.close(),
      () => b.close(),
    );
    before(a);
    const events: SmppEvent[] = [];
    const rec = recordingSink();
    const channel = createSmppChannel({
      systemId: 'sendpool',
      password: 'secret1',
      sourceAddr: 'SENDPOOL',
      reconnectBackoff: { minMs: 5, maxMs: 20 },
      onEvent: (e) => events.push(e),
      smscs: [
        { name: 'primary', host: '127.0.0.1', port: a.port, priority: 0 },
        { name: 'backup', host: '127.0.0.1', port: b.port, priority: 1 },
      ],
    });
    cleanup.push(() => channel.close());
    channel.attach(rec.sink);
    return { a, b, channel, events, rec };
  }

  it('a refused bind on the first SMSC moves traffic to the second, and back once it binds', async () => {
    const { a, b, channel, events } = await twoSmscs((primary) => (primary.refuseBinds = true));
    const first = await Promise.all(Array.from({ length: 20 }, (_, i) => channel.sendSms(outgoingSms(i, `SMS ${i}`))));
    expect(first.every((r) => r.status === 'sent')).toBe(true);
    expect(b.acceptedCount).toBe(20);
    expect(a.acceptedCount).toBe(0);
    expect(events.filter((e) => e.type === 'bind-failed').every((e) => e.type === 'bind-failed' && e.bind === 'primary transceiver 1' && /ESME_RBINDFAIL/.test(e.reason))).toBe(true);
    expect(channel.stats().smscs).toEqual([
      { name: 'primary', priority: 0, bound: 0, binds: 1, sending: false, outstanding: 0 },
      { name: 'backup', priority: 1, bound: 1, binds: 1, sending: true, outstanding: 0 },
    ]);
    // The primary takes binds again: the next SMS go to it, and the change is told once.
    a.refuseBinds = false;
    await waitFor(() => a.binds.some((x) => x.ok), 'the primary bound');
    const second = await Promise.all(Array.from({ length: 20 }, (_, i) => channel.sendSms(outgoingSms(100 + i, `SMS ${100 + i}`))));
    expect(second.every((r) => r.status === 'sent')).toBe(true);
    expect(a.acceptedCount).toBe(20);
    expect(b.acceptedCount).toBe(20);
    expect(events.filter((e) => e.type === 'failover')).toEqual([{ type: 'failover', from: 'backup', to: 'primary' }]);
  });

  it('the primary going down mid-campaign: its unanswered parts and the rest go to the backup, nothing fails', async () => {
    const { a, b, channel, events } = await twoSmscs();
    await waitFor(() => a.binds.some((x) => x.ok) && b.binds.some((x) => x.ok), 'both bound');
    a.holdAfter(30);
    const t = track(Array.from({ length: 100 }, (_, i) => channel.sendSms(outgoingSms(i, `SMS ${i}`))));
    await waitFor(() => a.held.length > 0, 'the primary stalling');
    a.down();
    await waitFor(() => t.answered === 100, 'every SMS answered');
    expect(t.failed).toEqual([]);
    const onA = new Set(a.accepted.map((x) => x.destination));
    const onB = new Set(b.accepted.map((x) => x.destination));
    expect(new Set([...onA, ...onB]).size).toBe(100);
    expect(onA.size).toBe(30);
    expect(events).toContainEqual({ type: 'failover', from: 'primary', to: 'backup' });
    // Losing every account, and sending again after it, are told too.
    b.down();
    await waitFor(() => (channel.stats(), events.some((e) => e.type === 'failover' && e.to === null)), 'nothing can send');
    b.up();
    await waitFor(() => (channel.stats(), events.some((e) => e.type === 'failover' && e.from === null)), 'sending again');
    expect(events.filter((e) => e.type === 'failover').slice(-2)).toEqual([
      { type: 'failover', from: 'backup', to: null },
      { type: 'failover', from: null, to: 'backup' },
    ]);
  });

  it('two SMSCs that give the same message ids: each receipt finds the SMS of its own SMSC', async () => {
    const { a, b, channel, rec } = await twoSmscs();
    await waitFor(() => a.binds.some((x) => x.ok) && b.binds.some((x) => x.ok), 'both bound');
    expect(await channel.sendSms(outgoingSms(0, 'via the primary'))).toEqual({ status: 'sent' });
    a.down();
    await waitFor(() => !channel.stats().smscs[0]!.sending, 'the primary gone');
    expect(await channel.sendSms(outgoingSms(1, 'via the backup'))).toEqual({ status: 'sent' });
    // Both SMSCs numbered their first message alike.
    expect(a.accepted[0]!.messageId).toBe(b.accepted[0]!.messageId);
    b.receipt(b.accepted[0]!.messageId!, 'UNDELIV', '001');
    await waitFor(() => rec.statuses.length === 1, "the backup's receipt");
    expect(rec.statuses[0]).toMatchObject({ smsId: 'req-1:1', status: 'FAILED' });
    a.up();
    await waitFor(() => channel.stats().smscs[0]!.sending, 'the primary back');
    a.receipt(a.accepted[0]!.messageId!, 'DELIVRD');
    await waitFor(() => rec.statuses.length === 2, "the primary's receipt");
    expect(rec.statuses[1]).toMatchObject({ smsId: 'req-1:0', status: 'DELIVERED' });
  });

  it('receipts that come on another bind of the pool find their SMS', async () => {
    const { smsc, channel, rec } = await smscAndChannel(cleanup, { autoReceipt: () => 'DELIVRD', receiptsOn: 'other' }, { binds: 3 });
    await waitFor(() => smsc.binds.filter((x) => x.ok).length === 3, 'three binds');
    const results = await Promise.all(Array.from({ length: 60 }, (_, i) => channel.sendSms(outgoingSms(i, `SMS ${i}`))));
    expect(results.every((r) => r.status === 'sent')).toBe(true);
    await waitFor(() => rec.statuses.filter((s) => s.status === 'DELIVERED').length === 60, 'sixty DLRs');
    // Every receipt came on a bind other than its submit's; the submits were spread over the binds.
    const submitsBy = new Set(smsc.accepted.map((x) => x.connection));
    expect(submitsBy.size).toBe(3);
    expect([...smsc.receiptsBy.values()].reduce((n, x) => n + x, 0)).toBe(60);
    expect(channel.stats()).toMatchObject({ receipts: 60, unmatchedReceipts: 0 });
  });

  it('transmitters and a receiver: submits go on the transmitters, receipts come on the receiver', async () => {
    const { smsc, channel, rec } = await smscAndChannel(cleanup, { autoReceipt: () => 'DELIVRD' }, { bindMode: 'split', binds: 2, receiverBinds: 1 });
    await waitFor(() => smsc.binds.filter((x) => x.ok).length === 3, 'three binds');
    expect(smsc.binds.map((x) => x.kind).sort()).toEqual(['receiver', 'transmitter', 'transmitter']);
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => channel.sendSms(outgoingSms(i, `SMS ${i}`))));
    expect(results.every((r) => r.status === 'sent')).toBe(true);
    await waitFor(() => rec.statuses.filter((s) => s.status === 'DELIVERED').length === 20, 'twenty DLRs');
    const receiverConnection = [...smsc.receiptsBy.keys()];
    expect(receiverConnection).toHaveLength(1);
    expect(smsc.accepted.some((x) => x.connection === receiverConnection[0])).toBe(false);
    // A reply comes on the receiver too, and finds the SMS sent to its phone on a transmitter.
    smsc.mo(outgoingSms(3, 'x').phone, 'STOP');
    await waitFor(() => rec.replies.length === 1, 'the reply');
    expect(rec.replies[0]).toEqual({ smsId: 'req-1:3', text: 'STOP' });
  });
});

describe('SMPP bad day: the TPS cap', () => {
  it('a bucket of a tenth of a second, in whole milliseconds, never above the rate', () => {
    expect(tpsBucket(100)).toEqual({ capacity: 10, period: 100 });
    expect(tpsBucket(1_000)).toEqual({ capacity: 100, period: 100 });
    expect(tpsBucket(7)).toEqual({ capacity: 1, period: 143 });
    expect(tpsBucket(1)).toEqual({ capacity: 1, period: 1_000 });
    expect(tpsBucket(30)).toEqual({ capacity: 3, period: 100 });
    expect(tpsBucket(999)).toEqual({ capacity: 100, period: 101 });
    // Never above the rate asked for, and never a whole second's burst.
    for (const tps of [1, 7, 13, 99, 101, 333, 999, 1_000, 12_345]) {
      const { capacity, period } = tpsBucket(tps);
      expect((capacity * 1000) / period).toBeLessThanOrEqual(tps);
      expect(capacity).toBeLessThanOrEqual(Math.max(1, Math.ceil(tps / 10)));
    }
  });

  it('no more submit_sm than the account allows, over its binds together, before the SMSC has to throttle', async () => {
    const clock = new ManualClock(1_000_000);
    const { smsc, channel } = await smscAndChannel(cleanup, {}, { clock, tps: 50, binds: 2 });
    await waitFor(() => smsc.binds.filter((x) => x.ok).length === 2, 'two binds');
    const t = track(Array.from({ length: 120 }, (_, i) => channel.sendSms(outgoingSms(i, `SMS ${i}`))));
    const { capacity } = tpsBucket(50);
    // At each step of the clock exactly what the bucket allows goes: a burst, then 50 a second.
    for (let ms = 0; ms <= 2_300; ms += 100) {
      const allowed = Math.min(120, capacity + Math.floor((ms * 50) / 1_000));
      await waitFor(() => channel.stats().submitted === allowed, `${allowed} submitted at ${ms} ms`);
      expect(smsc.received.length).toBeLessThanOrEqual(allowed);
      clock.advance(100);
    }
    await waitFor(() => t.answered === 120, 'every SMS answered');
    expect(t.failed).toEqual([]);
  });
});

describe('SMPP bad day: kill -9 of the durable server during an outage', () => {
  it('SMS accepted while the SMSC is down are sent after the restart, each SENT, none FAILED', async () => {
    const smsc = await startFakeSmsc();
    cleanup.push(() => smsc.close());
    smsc.down();
    const started = await startSmppChild(dir, smsc.port);
    const { cfg, receiver } = started;
    let child: Child = started.child;
    try {
      const items = Array.from({ length: 50 }, (_, i) => ({ message: `SMS ${i}`, phone: `55119876${String(i).padStart(5, '0')}`, reference: `ref-${i}`, url_callback_dlr: `${receiver.url}/dlr` }));
      expect((await api(child.url, '/sms/messages/', { body: items })).status).toBe(202);
      const acceptedBy = Date.now();
      await waitFor(() => smsc.connections >= 2, 'the server trying to connect');
      await killChild(child);
      smsc.up();
      child = await startChild(cfg);
      const restartedAt = Date.now();
      await waitFor(
        () =>
          new Set(
            receiver
              .all('/dlr')
              .filter((d) => d.status === 'SENT')
              .map((d) => d.reference),
          ).size === 50,
        'fifty SENT',
      );
      expect(receiver.all('/dlr').filter((d) => d.status === 'FAILED')).toEqual([]);
      expect(acceptedTimes(smsc).size).toBe(50);
      // Their validity counts from their first acceptance, not from the restart: each try after
      // it carried at most what was left then (to the second).
      const leftAtMost = Math.ceil((acceptedBy + 3_600_000 - restartedAt) / 1000);
      for (const a of smsc.accepted) expect(Math.round(a.validityMs! / 1000)).toBeLessThanOrEqual(leftAtMost);
    } finally {
      await killChild(child);
      await receiver.close();
    }
  });
});
