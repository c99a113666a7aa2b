/**
 * One `Channel` from a template-message provider and an SMS gateway (a WhatsApp Cloud API channel
 * and an SMPP connection, say): sends go to the first, SMS to the second, and both report to the
 * server's sink.
 */
import type { Channel } from '../ports/channel.js';

export interface ComposedChannels {
  /** Sends template messages (its `sendSms` is not used). */
  readonly messages: Channel;
  /** Sends SMS (its `send` is not used). */
  readonly sms: Channel;
}

export function composeChannels(parts: ComposedChannels): Channel {
  return {
    send: (message) => parts.messages.send(message),
    sendSms: (sms) => parts.sms.sendSms(sms),
    attach(sink, memory) {
      // One memory for both: their keys have prefixes of their own.
      parts.messages.attach(sink, memory);
      if (parts.sms !== parts.messages) parts.sms.attach(sink, memory);
    },
    async close() {
      await parts.messages.close?.();
      if (parts.sms !== parts.messages) await parts.sms.close?.();
    },
    // Both providers' webhooks are served.
    inbound: [...(parts.messages.inbound ?? []), ...(parts.sms !== parts.messages ? (parts.sms.inbound ?? []) : [])],
    // The engine paces template messages: the message channel's defaults are the ones.
    ...(parts.messages.numberDefaults !== undefined ? { numberDefaults: parts.messages.numberDefaults } : {}),
  };
}
