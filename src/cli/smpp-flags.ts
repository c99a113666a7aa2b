/**
 * `sendpool serve --sms-channel simulated|smpp [--smpp-config FILE]`: where SMS go. With `smpp`, the
 * SMPP options come from the file (JSON) and the SENDPOOL_SMPP_* variables (a variable wins), checked
 * here before the server loads; the password is never echoed.
 */
import { SMPP_ENV, smppConfig } from '../server/channels/smpp-config.js';
import type { SmppChannelOptions } from '../server/channels/smpp-options.js';
import { UsageError } from './errors.js';
import { readFailure } from './fleet-file.js';
import type { Io } from './io.js';

const SMS_CHANNELS = ['simulated', 'smpp'] as const;

/** The SMPP options `serve` hands to `runServer`, or undefined for the simulated channel. */
export function smsChannelFlags(io: Io, channel: string | undefined, configFile: string | undefined, env: Readonly<Record<string, string | undefined>>): SmppChannelOptions | undefined {
  if (channel !== undefined && !(SMS_CHANNELS as readonly string[]).includes(channel)) {
    throw new UsageError(`--sms-channel: expected one of ${SMS_CHANNELS.join(', ')}, got ${JSON.stringify(channel)}`);
  }
  if (channel !== 'smpp') {
    if (configFile !== undefined) throw new UsageError('--smpp-config: needs --sms-channel smpp');
    return undefined;
  }
  let text: string | undefined;
  if (configFile !== undefined) {
    try {
      text = io.readFile(configFile);
    } catch (e) {
      throw new UsageError(`--smpp-config ${configFile}: cannot read: ${readFailure(e)}`);
    }
  }
  const result = smppConfig(text, env, configFile ?? 'the SMPP configuration');
  if (!result.ok) {
    const where = configFile === undefined ? `(no --smpp-config; variables read: ${Object.keys(SMPP_ENV).join(', ')})` : '';
    throw new UsageError(`--sms-channel smpp: ${result.problems.map((p) => p.message).join('; ')}${where ? ` ${where}` : ''}`);
  }
  return result.options;
}
