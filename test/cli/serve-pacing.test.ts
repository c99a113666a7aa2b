/**
 * `sendpool serve --max-in-flight-per-number N`: the ceiling of a WhatsApp number's in-flight
 * window, checked before anything starts, with the flag, what it takes and what was given.
 */
import { describe, expect, it } from 'vitest';
import { serveCommand } from '../../src/cli/commands/serve.js';
import { processIo } from '../../src/cli/io.js';
import { serveSettings } from '../../src/cli/serve-flags.js';
import { ACCESS_TOKEN, APP_SECRET, VERIFY_TOKEN } from '../server/whatsapp-fake-graph.js';

const SECRETS = { SENDPOOL_WHATSAPP_ACCESS_TOKEN: ACCESS_TOKEN, SENDPOOL_WHATSAPP_APP_SECRET: APP_SECRET, SENDPOOL_WHATSAPP_VERIFY_TOKEN: VERIFY_TOKEN };
const settings = (values: Record<string, string | boolean>) => serveSettings({ memory: true, ...values }, processIo, SECRETS);

describe('serve --max-in-flight-per-number', () => {
  it('sets the WhatsApp channel’s maxInFlightPerNumber', () => {
    expect(settings({ channel: 'whatsapp', 'max-in-flight-per-number': '1500' }).options['whatsapp']).toMatchObject({ maxInFlightPerNumber: 1500 });
    expect(settings({ channel: 'whatsapp', 'max-in-flight-per-number': '1' }).options['whatsapp']).toMatchObject({ maxInFlightPerNumber: 1 });
    // Without it the channel's default.
    expect(settings({ channel: 'whatsapp' }).options['whatsapp']).not.toHaveProperty('maxInFlightPerNumber');
  });

  it.each([
    ['0', '"0"'],
    ['100001', '"100001"'],
    ['-5', '"-5"'],
    ['1.5', '"1.5"'],
    ['lots', '"lots"'],
    ['', '""'],
  ])('refuses %j, naming the flag, the range and the value', (text, shown) => {
    expect(() => settings({ channel: 'whatsapp', 'max-in-flight-per-number': text })).toThrow(
      `--max-in-flight-per-number: expected a whole number from 1 to 100000 (sends of one number at the platform at once), got ${shown}`,
    );
  });

  it('needs --channel whatsapp', () => {
    expect(() => settings({ 'max-in-flight-per-number': '500' })).toThrow('--max-in-flight-per-number: needs --channel whatsapp');
  });

  it('is in the help', () => {
    expect(serveCommand.help).toContain('--max-in-flight-per-number N');
  });
});
