/**
 * The WhatsApp Cloud API channel: the `Channel` port over Meta's Graph API, composed of parts with
 * one purpose each (docs/channels.md, "How the WhatsApp channel is built"):
 *
 * - sending: sender.ts (per-number windows, the answer as the engine's outcome, throttles) over
 *   graph-client.ts (the pooled POSTs and the access token);
 * - receiving: webhook-receiver.ts (handshake, signature, reading a notification, the answer to
 *   Meta), dedupe.ts (an event delivered twice is acted on once);
 * - remembering: sent-memory.ts (the records of sent messages in the `ChannelMemory` the server
 *   lends, and their recall from the fleet before a notification is acted on);
 * - acting: message-reports.ts (statuses, replies, attendances) and steering.ts (template, number
 *   and account events as signals to the engine, and notices to operators).
 *
 * This file wires them and keeps the one state they share: whether the server attached the channel.
 */
import type { Channel, ChannelSink, OutgoingSms, SmsSendResult } from '../../ports/channel.js';
import { WebhookDedupe } from './dedupe.js';
import { GraphClient } from './graph-client.js';
import { MessageReports } from './message-reports.js';
import { resolveWhatsAppOptions, type WhatsAppChannelOptions } from './options.js';
import { Sender } from './sender.js';
import { SentMemory } from './sent-memory.js';
import { steer } from './steering.js';
import { WebhookReceiver, type Delivery } from './webhook-receiver.js';
import type { WebhookEvent } from './webhook-events.js';

/** Counters of the channel, for hosts, metrics and tests. */
export interface WhatsAppChannelStats {
  /** Sends waiting for the platform's answer. */
  readonly inFlight: number;
  /** Sends waiting for a slot of their number. */
  readonly waiting: number;
  /** The largest in-flight window of a number now (docs/channels.md, "Pacing"). */
  readonly maxWindow: number;
  /** Numbers resting after a throttle (130429 or a bare 429) and not yet sending fine again. */
  readonly throttledNumbers: number;
  readonly sent: number;
  readonly failed: number;
  /** Entries of the memory of platform ids (two or three a sent message: its wamid, its recipient). */
  readonly tracked: number;
  readonly openAttendances: number;
  /** Webhook notifications received with a valid signature. */
  readonly webhooks: number;
  /** Webhook notifications refused (missing or wrong signature). */
  readonly forged: number;
  /** Webhook events dropped because they were seen before. */
  readonly duplicates: number;
  /** Statuses `held_for_quality_assessment` received (a paced template's message held by the platform). */
  readonly held: number;
}

/** The WhatsApp channel, with its counters. */
export interface WhatsAppChannel extends Channel {
  stats(): WhatsAppChannelStats;
  /**
   * Replaces the access token: every send from now on carries it (sends already at the platform
   * keep the old one). For an expired or revoked token (190): the numbers it blocked send again at
   * their next try. Throws `WhatsAppChannelError` for a token that cannot be one (as the option).
   */
  setAccessToken(token: string): void;
}

/** Events are dropped until the server attaches the channel, and again once it is closed. */
type Attachment = { readonly state: 'detached' } | { readonly state: 'attached'; readonly sink: ChannelSink } | { readonly state: 'closed' };

/**
 * Builds the channel. Throws `WhatsAppChannelError` (every problem at once) when the options or
 * the fleet's WhatsApp ids cannot work. Needs the optional package `undici`.
 */
export function createWhatsAppChannel(options: WhatsAppChannelOptions): WhatsAppChannel {
  const o = resolveWhatsAppOptions(options);
  let attachment: Attachment = { state: 'detached' };
  const sinkNow = () => (attachment.state === 'attached' ? attachment.sink : undefined);

  const sent = new SentMemory(2 * o.maxTrackedMessages);
  const graph = new GraphClient(o);
  const sender = new Sender(o, graph, (m, answer) => sent.remember(m, answer, o.now()));
  const reports = new MessageReports(o, sent, (report) => sinkNow()?.attendanceClosed(report));
  const dedupe = new WebhookDedupe(o.maxWebhookKeys);

  /** Recalls what the events name, acts on each new one, and waits until what they did is written. */
  async function deliver(events: readonly WebhookEvent[], sink: ChannelSink): Promise<Delivery> {
    try {
      await sent.recall(events, sink);
    } catch {
      return 'unavailable';
    }
    const acted = dedupe.actOnce(events, (e) => (e.kind === 'status' || e.kind === 'message' ? reports.report(e, sink) : steer(e, o, sink)));
    // Not written: the events are not counted seen, so a redelivery acts again.
    if (acted.length > 0 && sink.written !== undefined && !(await sink.written())) {
      dedupe.forget(acted);
      return 'not-written';
    }
    return 'done';
  }
  const receiver = new WebhookReceiver({ path: o.webhookPath, verifyToken: o.verifyToken, appSecret: o.appSecret, onWarning: o.onWarning, sink: sinkNow, deliver });

  return {
    send: (m) => sender.send(m),
    numberDefaults: { messagesPerSecond: o.defaultMessagesPerSecond },
    async sendSms(sms: OutgoingSms): Promise<SmsSendResult> {
      // Template messages only: compose with an SMS gateway (composeChannels) for SMS.
      return { status: 'failed', reason: `the WhatsApp channel sends no SMS (${sms.smsId}); compose it with an SMS channel` };
    },
    attach(sink, memory) {
      if (attachment.state !== 'closed') attachment = { state: 'attached', sink };
      if (memory) sent.use(memory);
    },
    inbound: [{ path: receiver.path, handle: (request) => receiver.handle(request) }],
    async close() {
      if (attachment.state === 'closed') return;
      reports.close();
      attachment = { state: 'closed' };
      await graph.close();
    },
    setAccessToken: (token) => graph.setAccessToken(token),
    stats: () => ({
      ...sender.stats(),
      tracked: sent.size,
      openAttendances: reports.openAttendances,
      webhooks: receiver.webhooks,
      forged: receiver.forged,
      duplicates: dedupe.duplicates,
      held: reports.held,
    }),
  };
}
