/** `sendpool serve --redis URL --state-dir DIR`: the directory goes to `runServer({ redis: { stateDir } })`, and only with --redis. */
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/errors.js';
import { processIo } from '../../src/cli/io.js';
import { serveSettings } from '../../src/cli/serve-flags.js';

describe('serve --state-dir', () => {
  it('is the Redis instance state directory', () => {
    expect(serveSettings({ redis: 'redis://127.0.0.1:6379', 'state-dir': '/var/lib/sendpool' }, processIo, {}).options['redis']).toEqual({
      url: 'redis://127.0.0.1:6379',
      stateDir: '/var/lib/sendpool',
    });
    expect(serveSettings({ redis: 'redis://127.0.0.1:6379' }, processIo, {}).options['redis']).toEqual({ url: 'redis://127.0.0.1:6379' });
  });

  it('is refused without --redis, naming both flags', () => {
    expect(() => serveSettings({ memory: true, 'state-dir': 'x' }, processIo, {})).toThrow(UsageError);
    expect(() => serveSettings({ 'state-dir': 'x' }, processIo, {})).toThrow(/--state-dir.*--redis/);
  });
});
