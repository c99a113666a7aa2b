/**
 * The SMPP receipt timeout: an SMS the SMSC accepted (every part) whose final receipt has not come
 * within `receiptTimeoutMs` ends EXPIRED, once; a receipt after that is ignored. Against the local
 * SMSC with a manual clock (receipts dropped for some phones), and the wait itself driven sweep by
 * sweep: what a receipt read before the `sent` answer decided, a restart (the FIFO rebuilt from
 * the memory), and an instance on a shared memory whose SMS another instance decided.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { ChannelSink } from '../../src/server/ports/channel.js';
import { ChannelMemoryStore } from '../../src/server/channels/memory.js';
import { SmppInbound, type ReceiptUpdate } from '../../src/server/channels/smpp-inbound.js';
import { SmppReceiptWait } from '../../src/server/channels/smpp-receipt-wait.js';
import { parseReceipt } from '../../src/server/channels/smpp-receipt.js';
import { waitFor } from './helpers.js';
import { outgoingSms, smscAndChannel, type Cleanup } from './smpp-smsc.js';

const cleanup: Cleanup = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

const DAY2 = 172_800_000;
const REASON = 'SMPP: no delivery receipt within 172800000 ms';

describe('SMPP receipt timeout against the local SMSC', () => {
  it('exactly the SMS without a final receipt expire, once, at receiptTimeoutMs; a receipt after that changes nothing', async () => {
    const clock = new ManualClock(1_000_000);
    const longText = 'x'.repeat(200); // two parts
    // Phones ending in 1 get no receipt; the long SMS (ending in 3) gets one for its first part only.
    const { smsc, channel, rec } = await smscAndChannel(
      cleanup,
      { autoReceipt: (s) => (s.destination.endsWith('1') ? undefined : s.destination.endsWith('3') ? (s.concat?.[2] === 1 ? 'DELIVRD' : undefined) : 'DELIVRD') },
      { clock, enquireLinkMs: 20 },
    );
    const sms = [
      outgoingSms(0, 'receipted', '5511970000000'),
      outgoingSms(1, 'no receipt', '5511970000001'),
      outgoingSms(2, 'receipted too', '5511970000002'),
      outgoingSms(3, longText, '5511970000003'),
      outgoingSms(4, 'no receipt either', '5511970000011'),
    ];
    expect(sms[3]!.parts).toBe(2);
    const results = await Promise.all(sms.map((s) => channel.sendSms(s)));
    expect(results.every((r) => r.status === 'sent')).toBe(true);
    await waitFor(() => channel.stats().receipts === 3 && rec.statuses.length === 2, 'three receipts read, two SMS delivered');

    clock.advance(DAY2);
    await waitFor(() => rec.statuses.length === 5, 'the three SMS without a final receipt expired');
    const expired = rec.statuses.filter((s) => s.status === 'EXPIRED');
    expect(expired.map((s) => s.smsId).sort()).toEqual(['req-1:1', 'req-1:3', 'req-1:4']);
    for (const e of expired) expect(e).toEqual({ smsId: e.smsId, status: 'EXPIRED', reason: REASON });
    expect(
      rec.statuses
        .filter((s) => s.status === 'DELIVERED')
        .map((s) => s.smsId)
        .sort(),
    ).toEqual(['req-1:0', 'req-1:2']);

    // Receipts after the expiry: their ids are forgotten, counted as unmatched, reported nowhere.
    const idOf = (phone: string, seq?: number) => smsc.accepted.find((a) => a.destination === phone && (seq === undefined || a.concat?.[2] === seq))!.messageId!;
    const answered = smsc.deliverResps;
    smsc.receipt(idOf('5511970000001'), 'DELIVRD');
    smsc.receipt(idOf('5511970000003', 2), 'UNDELIV');
    await waitFor(() => smsc.deliverResps === answered + 2, 'the late receipts answered');
    expect(channel.stats()).toMatchObject({ receipts: 5, unmatchedReceipts: 2 });
    clock.advance(DAY2);
    // The channel's ticks ran since (each sends an enquire_link with enquireLinkMs 20): nothing more.
    const enquiries = smsc.enquiries;
    await waitFor(() => smsc.enquiries >= enquiries + 2, 'two more ticks');
    expect(rec.statuses).toHaveLength(5);
  });

  it('with deliveryReceipts off nothing is awaited, nothing expires', async () => {
    const clock = new ManualClock(1_000_000);
    const { smsc, channel, rec } = await smscAndChannel(cleanup, {}, { clock, deliveryReceipts: false, enquireLinkMs: 20 });
    expect(await channel.sendSms(outgoingSms(0, 'no receipt asked'))).toEqual({ status: 'sent' });
    expect(smsc.accepted[0]!.registeredDelivery).toBe(0);
    clock.advance(2 * DAY2);
    const enquiries = smsc.enquiries;
    await waitFor(() => smsc.enquiries >= enquiries + 2, 'two more ticks');
    expect(rec.statuses).toEqual([]);
  });
});

/** An inbound matcher, its receipt wait and what it reported, on `memory`. */
function waitOn(memory: ChannelMemoryStore, clock: ManualClock, timeoutMs = 60_000, sink?: ChannelSink) {
  const inbound = new SmppInbound(memory);
  const reported: ReceiptUpdate[] = [];
  const wait = new SmppReceiptWait({
    options: { receiptTimeoutMs: timeoutMs, deliveryReceipts: true, clock },
    inbound,
    deliveries: { report: (u) => void reported.push(u) },
    sink: () => sink,
  });
  /** An SMS of `parts` parts accepted under `ids`, then answered sent. */
  const send = (smsId: string, ids: readonly string[]) => {
    const t = inbound.track(smsId, ids.length);
    for (const id of ids) inbound.accepted(t, id);
    wait.sent(t);
  };
  const receipt = (id: string, stat: string) => {
    const update = inbound.receipt(parseReceipt(`id:${id} stat:${stat} err:000`)!);
    if (update) reported.push(update);
  };
  return { inbound, wait, reported, send, receipt };
}

/** Resolves after the promise callbacks queued now ran (a sweep's read of the memory). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('SMPP receipt wait, sweep by sweep', () => {
  it('expires at the deadline, not a millisecond before, in acceptance order', async () => {
    const clock = new ManualClock(0);
    const { wait, reported, send } = waitOn(new ChannelMemoryStore(1_000), clock);
    wait.sweep(0); // the rebuild from the (empty) memory
    await settle();
    send('a', ['1']);
    clock.advance(10);
    send('b', ['2']);
    wait.sweep(59_999);
    expect(reported).toEqual([]);
    wait.sweep(60_000);
    expect(reported.map((r) => r.smsId)).toEqual(['a']);
    wait.sweep(60_010);
    wait.sweep(200_000);
    expect(reported).toEqual([
      { smsId: 'a', status: 'EXPIRED', reason: 'SMPP: no delivery receipt within 60000 ms' },
      { smsId: 'b', status: 'EXPIRED', reason: 'SMPP: no delivery receipt within 60000 ms' },
    ]);
    expect(wait.size).toBe(0);
  });

  it('what the bounded memory forgot is no longer awaited: the wait stays within the memory', async () => {
    const clock = new ManualClock(0);
    // At most 20 entries; an SMS takes two (`sr:` and `sw:`).
    const memory = new ChannelMemoryStore(20);
    const { wait, reported, send } = waitOn(memory, clock);
    wait.sweep(0);
    await settle();
    for (let i = 0; i < 1_000; i++) send(`s${i}`, [String(i)]);
    expect(wait.size).toBeLessThanOrEqual(10);
    wait.sweep(60_000);
    // The newest are expired; none the memory had forgotten.
    expect(reported.length).toBeGreaterThan(0);
    expect(reported.every((r) => Number(r.smsId.slice(1)) >= 990)).toBe(true);
    expect(wait.size).toBe(0);
  });

  it('an SMS whose receipt (every part) came before its sent answer is not awaited; one part in, the rest is', async () => {
    const clock = new ManualClock(0);
    const memory = new ChannelMemoryStore(1_000);
    const { inbound, wait, reported, receipt } = waitOn(memory, clock);
    wait.sweep(0);
    await settle();
    // Part 1 of a two-part SMS fails before part 2 is accepted: decided, never awaited.
    const failed = inbound.track('failed', 2);
    inbound.accepted(failed, '10');
    receipt('10', 'UNDELIV');
    inbound.accepted(failed, '11');
    wait.sent(failed);
    // A one-part SMS delivered before its answer was read.
    const early = inbound.track('early', 1);
    inbound.accepted(early, '20');
    receipt('20', 'DELIVRD');
    wait.sent(early);
    // Part 1 of three delivered before the others were accepted: parts 2 and 3 are awaited.
    const partly = inbound.track('partly', 3);
    inbound.accepted(partly, '30');
    receipt('30', 'DELIVRD');
    inbound.accepted(partly, '31');
    inbound.accepted(partly, '32');
    wait.sent(partly);
    expect(memory.get('sw:failed')).toBeUndefined();
    expect(memory.get('sw:early')).toBeUndefined();
    expect(memory.get('sw:partly')).toBe('0 31 32');
    expect(wait.size).toBe(1);
    receipt('31', 'DELIVRD');
    wait.sweep(60_000);
    expect(reported.map((r) => `${r.smsId} ${r.status}`)).toEqual(['failed FAILED', 'early DELIVERED', 'partly EXPIRED']);
    // Its keys are gone: the missing part's late receipt matches nothing.
    expect([memory.get('sw:partly'), memory.get('sn:partly'), memory.get('sr:32')]).toEqual([undefined, undefined, undefined]);
    receipt('32', 'DELIVRD');
    expect(reported).toHaveLength(3);
    expect(inbound.unmatchedReceipts).toBe(1);
  });

  it('a receipt before the deadline stops the wait; after a restart the wait is rebuilt from the memory, the timeout in force applied', async () => {
    const clock = new ManualClock(5_000);
    const changes: string[] = [];
    const before = new ChannelMemoryStore(1_000, { trackChanges: true, onChange: () => changes.push('x') });
    const first = waitOn(before, clock);
    first.wait.sweep(5_000);
    await settle();
    first.send('kept', ['1']);
    clock.advance(1_000);
    first.send('delivered', ['2']);
    clock.advance(1_000);
    first.send('later', ['3', '4']);
    first.receipt('2', 'DELIVRD');
    first.receipt('3', 'DELIVRD');
    expect(first.reported).toEqual([{ smsId: 'delivered', status: 'DELIVERED', reason: null }]);

    // A restart: the memory as the durable server loads it, and a channel with a shorter timeout.
    const stored = before.takeChanges()!;
    const after = new ChannelMemoryStore(1_000, { trackChanges: true });
    after.load([stored]);
    const second = waitOn(after, clock, 30_000);
    second.wait.sweep(clock.now());
    await settle();
    expect(second.wait.size).toBe(2);
    second.wait.sweep(5_000 + 30_000 - 1);
    expect(second.reported).toEqual([]);
    second.wait.sweep(7_000 + 30_000);
    expect(second.reported.map((r) => r.smsId)).toEqual(['kept', 'later']);
    expect(second.reported[0]!.reason).toBe('SMPP: no delivery receipt within 30000 ms');
    // The late part's receipt is ignored; the expiries are changes the next step writes.
    second.receipt('4', 'DELIVRD');
    expect(second.reported).toHaveLength(2);
    const written = after.takeChanges()!;
    expect(written.keys.filter((k) => k.startsWith('sw:') || k.startsWith('sr:') || k.startsWith('sn:'))).toEqual(expect.arrayContaining(['sw:kept', 'sr:1', 'sw:later', 'sr:4', 'sn:later']));
  });

  it('on a shared memory: what another instance decided or expired is skipped, after reading the fleet again', async () => {
    // The fleet's copy (Redis in the server): every instance's changes land in it with their step.
    const fleet = new Map<string, string>();
    const write = (store: ChannelMemoryStore) => {
      const c = store.takeChanges();
      if (c) c.keys.forEach((k, i) => k !== '' && (c.values[i] === null ? fleet.delete(k) : fleet.set(k, c.values[i]!)));
    };
    const shared = () =>
      new ChannelMemoryStore(1_000, {
        trackChanges: true,
        recall: async (keys) => new Map(keys.filter((k) => fleet.has(k)).map((k) => [k, fleet.get(k)!])),
        scan: async (prefix) => new Map([...fleet].filter(([k]) => k.startsWith(prefix))),
      });
    const clock = new ManualClock(0);
    const recalled: string[][] = [];
    const sink = { recall: async (ids: { smsIds?: readonly string[] }) => void recalled.push([...(ids.smsIds ?? [])]) } as unknown as ChannelSink;
    const memA = shared();
    const a = waitOn(memA, clock, 60_000, sink);
    a.wait.sweep(0);
    await settle();
    a.send('s1', ['1']);
    a.send('s2', ['2']);
    a.send('s3', ['3']);
    write(memA);
    // B starts: it finds A's three SMS in the fleet's copy.
    const memB = shared();
    const b = waitOn(memB, clock, 60_000, sink);
    b.wait.sweep(0);
    await waitFor(() => b.wait.size === 3, "B rebuilt A's SMS");
    // s1's receipt comes to B (it recalls the keys first, as the channel does).
    await b.inbound.recall({ receiptId: '1' });
    b.receipt('1', 'DELIVRD');
    write(memB);
    // The deadline: B, which holds none of them, expires the two left.
    clock.advance(60_000);
    b.wait.sweep(60_000);
    await waitFor(() => b.reported.length === 3, 'B expired what was left');
    write(memB);
    expect(b.reported.map((r) => `${r.smsId} ${r.status}`)).toEqual(['s1 DELIVERED', 's2 EXPIRED', 's3 EXPIRED']);
    expect(recalled).toEqual([['s2', 's3']]);
    expect([...fleet.keys()].filter((k) => k.startsWith('sw:') || k.startsWith('sr:'))).toEqual([]);
    // A still holds all three in its memory: it reads them again and expires none.
    a.wait.sweep(60_000);
    await waitFor(() => a.wait.size === 0, 'A done with its three');
    expect(a.reported).toEqual([]);
  });
});
