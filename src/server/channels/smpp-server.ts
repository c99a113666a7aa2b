/**
 * The server's channel when SMS go over SMPP (`runServer({ smpp })`, `sendpool serve --sms-channel
 * smpp`): template messages on the given channel (the simulated one by default), SMS on an SMPP
 * channel whose connection events go to the server's log. Nothing logged carries a credential.
 */
import type { Channel } from '../ports/channel.js';
import { createSimulatedChannel } from './simulated.js';
import { composeChannels } from './compose.js';
import { createSmppChannel, type SmppChannel } from './smpp-channel.js';
import type { SmppChannelOptions, SmppEvent } from './smpp-options.js';
import { loadSmpp } from './smpp-package.js';

/** The part of a pino/fastify logger used here. */
export interface SmppLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** One log line per connection event: binds at info, drops, refusals and throttling at warn. */
export function logSmppEvent(log: SmppLog, event: SmppEvent): void {
  const { type, ...fields } = event;
  if (type === 'bound') log.info({ smpp: fields }, 'SMPP bound');
  else log.warn({ smpp: fields }, `SMPP ${type}`);
}

/**
 * Checks the options, loads the smpp package (a clear error when it is missing, before anything
 * listens) and builds the composed channel. `log` is read at each event (the server's logger exists only once built).
 */
export async function smppServerChannel(
  options: SmppChannelOptions,
  messages: Channel | undefined,
  log: () => SmppLog | undefined,
): Promise<{ readonly channel: Channel; readonly smpp: SmppChannel }> {
  const own = options.onEvent;
  const smpp = createSmppChannel({
    ...options,
    onEvent: (e) => {
      own?.(e);
      const l = log();
      if (l) logSmppEvent(l, e);
    },
  });
  await loadSmpp();
  return { channel: composeChannels({ messages: messages ?? createSimulatedChannel(), sms: smpp }), smpp };
}
