/**
 * The simulated channel: the default {@link Channel} of the reference server. It sends at the pace
 * the engine hands messages out, and walks each accepted message through SERVER, DEVICE, READ and
 * REPLIED with configurable probabilities and delays; some sends fail with realistic codes, some
 * messages expire undelivered, some replies open an attendance that closes with a survey. Templates
 * can be paused in the simulation (as the platform does on low quality): sends with them then fail
 * with 132015, which makes the engine fail the message over to another template. SMS get delivery
 * reports and, sometimes, replies.
 *
 * Randomness is a seeded PRNG (a simulation is not security): the same seed gives the same run
 * when the engine hands out the same messages.
 */
import type { OutgoingMessage, SendOutcome } from '../../core/dispatch/types.js';
import type { Channel, ChannelSink, OutgoingSms, SmsSendResult } from '../ports/channel.js';

/** A range of milliseconds; a delay is drawn uniformly from it. */
export interface DelayRange {
  readonly min: number;
  readonly max: number;
}

/** A failure code and its relative weight among send-time failures. */
export interface WeightedCode {
  readonly code: number;
  readonly weight: number;
}

/** Options of {@link createSimulatedChannel}. */
export interface SimulatedChannelOptions {
  /** Seed of the PRNG. @default 1 */
  readonly seed?: number;
  /** Time the provider takes to answer a send. @default { min: 2, max: 20 } */
  readonly sendDelayMs?: DelayRange;
  /** Time between two status changes of a message (SENT→SERVER→DEVICE→READ→REPLIED). @default { min: 200, max: 2000 } */
  readonly statusDelayMs?: DelayRange;
  /** Probability that a send is refused at once with one of {@link failureCodes}. @default 0.02 */
  readonly sendFailureProbability?: number;
  /** Codes of send-time failures. @default 131026 (x3), 131000, 131050 */
  readonly failureCodes?: readonly WeightedCode[];
  /** Probability that the platform pauses the template of a send (that send and later ones fail with 132015). @default 0 */
  readonly templatePauseProbability?: number;
  /** Probability that an accepted message reaches the channel's server (else FAILED 131026 later). @default 0.99 */
  readonly serverProbability?: number;
  /** Probability that a message on the server reaches the device (else EXPIRED). @default 0.95 */
  readonly deviceProbability?: number;
  /** Probability that a delivered message is read. @default 0.7 */
  readonly readProbability?: number;
  /** Probability that a read message gets a reply. @default 0.15 */
  readonly replyProbability?: number;
  /** Probability that a reply is an opt-out (blocklist response). @default 0.05 */
  readonly blocklistProbability?: number;
  /** Probability that a reply opens an attendance. @default 0.5 */
  readonly attendanceProbability?: number;
  /** Time an attendance stays open before it closes with its survey. @default { min: 500, max: 3000 } */
  readonly attendanceDurationMs?: DelayRange;
  /** Probability that an SMS is delivered (else its DLR says FAILED). @default 0.97 */
  readonly smsDeliveryProbability?: number;
  /** Probability that a delivered SMS gets a reply (MO). @default 0.1 */
  readonly smsReplyProbability?: number;
  /** Keep every send in {@link SimulatedChannel.sends} (tests); off, only counters are kept. @default false */
  readonly record?: boolean;
}

/** One send the simulated channel saw (with `record: true`). */
export interface SimulatedSend {
  readonly messageId: string;
  readonly to: string;
  readonly from: string;
  readonly templateId: number;
  readonly outcome: SendOutcome['status'];
  readonly code?: number;
  /** The contact object as the server submitted it (the server adds `id`). */
  readonly contact: OutgoingMessage['contact'];
}

/** The simulated channel, with controls for tests and demos. */
export interface SimulatedChannel extends Channel {
  /** Sends seen, in order (only with `record: true`). */
  readonly sends: SimulatedSend[];
  /** SMS seen, in order (only with `record: true`). */
  readonly smsSends: OutgoingSms[];
  /** Counters of what happened. */
  readonly counts: { sent: number; failed: number; sms: number };
  /** The platform pauses a template: later sends with it fail with 132015 until resumed. */
  pauseTemplate(templateId: number): void;
  resumeTemplate(templateId: number): void;
}

const DEFAULT_CODES: readonly WeightedCode[] = [
  { code: 131026, weight: 3 },
  { code: 131000, weight: 1 },
  { code: 131050, weight: 1 },
];

/** mulberry32: small, fast, good enough for a simulation. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Builds a simulated channel. */
export function createSimulatedChannel(options: SimulatedChannelOptions = {}): SimulatedChannel {
  const rnd = prng(options.seed ?? 1);
  const sendDelay = options.sendDelayMs ?? { min: 2, max: 20 };
  const statusDelay = options.statusDelayMs ?? { min: 200, max: 2000 };
  const attendanceDuration = options.attendanceDurationMs ?? { min: 500, max: 3000 };
  const codes = options.failureCodes ?? DEFAULT_CODES;
  const totalWeight = codes.reduce((s, c) => s + c.weight, 0);
  const p = {
    sendFailure: options.sendFailureProbability ?? 0.02,
    templatePause: options.templatePauseProbability ?? 0,
    server: options.serverProbability ?? 0.99,
    device: options.deviceProbability ?? 0.95,
    read: options.readProbability ?? 0.7,
    reply: options.replyProbability ?? 0.15,
    blocklist: options.blocklistProbability ?? 0.05,
    attendance: options.attendanceProbability ?? 0.5,
    smsDelivery: options.smsDeliveryProbability ?? 0.97,
    smsReply: options.smsReplyProbability ?? 0.1,
  };
  const record = options.record ?? false;
  const paused = new Set<number>();
  const timers = new Set<NodeJS.Timeout>();
  let sink: ChannelSink | undefined;
  let closed = false;
  let attendanceSeq = 0;

  const draw = (r: DelayRange) => r.min + Math.floor(rnd() * (r.max - r.min + 1));
  const later = (r: DelayRange, fn: () => void) => {
    if (closed) return;
    const t = setTimeout(() => {
      timers.delete(t);
      if (!closed) fn();
    }, draw(r));
    timers.add(t);
  };
  const wait = (r: DelayRange) =>
    new Promise<void>((resolve) => {
      const ms = draw(r);
      if (ms <= 0) resolve();
      else setTimeout(resolve, ms);
    });
  const pickCode = () => {
    let x = rnd() * totalWeight;
    for (const c of codes) {
      x -= c.weight;
      if (x < 0) return c.code;
    }
    return codes[codes.length - 1]?.code ?? 131000;
  };

  /** After an accepted send: the message's life on the channel, one step at a time. */
  function walk(m: OutgoingMessage): void {
    const bsuid = `BR.${m.contact.phone.slice(-6)}`;
    later(statusDelay, () => {
      if (rnd() >= p.server) {
        sink?.messageStatus({ messageId: m.messageId, status: 'FAILED', failureCode: 131026, bsuid, username: null });
        return;
      }
      sink?.messageStatus({ messageId: m.messageId, status: 'SERVER', bsuid, username: null });
      later(statusDelay, () => {
        if (rnd() >= p.device) {
          sink?.messageStatus({ messageId: m.messageId, status: 'EXPIRED' });
          return;
        }
        sink?.messageStatus({ messageId: m.messageId, status: 'DEVICE', bsuid, username: null });
        if (rnd() >= p.read) return;
        later(statusDelay, () => {
          sink?.messageStatus({ messageId: m.messageId, status: 'READ', bsuid, username: null });
          if (rnd() >= p.reply) return;
          later(statusDelay, () => {
            const blocklist = rnd() < p.blocklist;
            const replyText = blocklist ? 'STOP' : 'Ok, thanks!';
            const repliedAt = Date.now();
            sink?.messageStatus({ messageId: m.messageId, status: 'REPLIED', bsuid, username: null, blocklistResponse: blocklist, replyText });
            if (blocklist || rnd() >= p.attendance) return;
            const openedAt = Date.now();
            later(attendanceDuration, () => {
              const id = ++attendanceSeq;
              const closedAt = Date.now();
              sink?.attendanceClosed({
                messageId: m.messageId,
                attendanceId: id,
                ticketId: 100_000 + id,
                ticketUuid: uuidFrom(rnd),
                closedAt,
                occurrence: { id: 1, name: 'Resolved' },
                user: { id: 7, name: 'Attendant' },
                messages: [
                  { sender: 'campaign', type: 'text', text: m.text, at: repliedAt - 1 },
                  { sender: 'client', type: 'text', text: replyText, at: repliedAt },
                  { sender: 'bot', type: 'text', text: 'Connecting you to an attendant.', at: openedAt + 1 },
                  { sender: { attendantId: 7 }, type: 'text', text: 'How can I help?', at: openedAt + 2 },
                ],
                survey: {
                  id: 1,
                  name: 'Satisfaction',
                  status: 'completed',
                  startedAt: closedAt - 2,
                  endedAt: closedAt,
                  answers: [{ question: 'How do you rate the service?', questionType: 'scale', answer: String(1 + Math.floor(rnd() * 5)), answeredAt: closedAt - 1 }],
                },
              });
            });
          });
        });
      });
    });
  }

  const channel: SimulatedChannel = {
    sends: [],
    smsSends: [],
    counts: { sent: 0, failed: 0, sms: 0 },
    attach(s) {
      sink = s;
    },
    pauseTemplate(id) {
      paused.add(id);
    },
    resumeTemplate(id) {
      paused.delete(id);
    },
    async send(m) {
      await wait(sendDelay);
      if (p.templatePause > 0 && rnd() < p.templatePause) paused.add(m.templateId);
      let outcome: SendOutcome;
      if (paused.has(m.templateId)) outcome = { status: 'failed', code: 132015 };
      else if (rnd() < p.sendFailure) outcome = { status: 'failed', code: pickCode() };
      else outcome = { status: 'sent' };
      if (outcome.status === 'sent') channel.counts.sent++;
      else channel.counts.failed++;
      if (record) {
        channel.sends.push({
          messageId: m.messageId,
          to: m.contact.phone,
          from: m.phone,
          templateId: m.templateId,
          outcome: outcome.status,
          ...(outcome.status === 'failed' && outcome.code !== undefined ? { code: outcome.code } : {}),
          contact: m.contact,
        });
      }
      if (outcome.status === 'sent') walk(m);
      return outcome;
    },
    async sendSms(sms): Promise<SmsSendResult> {
      await wait(sendDelay);
      channel.counts.sms++;
      if (record) channel.smsSends.push(sms);
      later(statusDelay, () => {
        const delivered = rnd() < p.smsDelivery;
        sink?.smsStatus({ smsId: sms.smsId, status: delivered ? 'DELIVERED' : 'FAILED', reason: delivered ? null : 'Handset unreachable' });
        if (delivered && rnd() < p.smsReply) later(statusDelay, () => sink?.smsReply({ smsId: sms.smsId, text: 'OK' }));
      });
      return { status: 'sent' };
    },
    close() {
      closed = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
    },
  };
  return channel;
}

/** A UUID v4 from the simulation's PRNG (ticket ids are simulated too). */
function uuidFrom(rnd: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(rnd() * 16).toString(16));
  hex[12] = '4';
  hex[16] = (Math.floor(rnd() * 4) + 8).toString(16);
  const h = hex.join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
