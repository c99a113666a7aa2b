/**
 * Writes blocklist changes (shared-blocklist.ts), the hash and the log together. A phone already
 * blocked keeps its first entry and a phone not blocked is not removed: neither is logged.
 * KEYS: [1] the log stream, [2] the set of companies with a blocklist.
 * ARGV: [1] the companies' hash prefix (`…bl:c`, the company id completes it), [2] the log's
 *       length (approximate), then triples (company, phone, entry JSON or '' to remove).
 * Reply: 1.
 */
import type { BlocklistChange } from '../../../ports/blocklist.js';
import { defineScript } from './codec.js';

export interface BlocklistWriteArgs {
  readonly log: string;
  readonly companies: string;
  /** `…bl:c`: a company's hash is it and the company id. */
  readonly hashPrefix: string;
  /** Changes the log keeps (`MAXLEN ~`). */
  readonly logLength: number;
  /** In order: an entry added, or (`entry` null) a phone removed. */
  readonly changes: readonly BlocklistChange[];
}

export const BLOCKLIST_WRITE = defineScript<BlocklistWriteArgs, void>({
  name: 'blocklist-write',
  body: `
for i = 3, #ARGV, 3 do
  local hash = ARGV[1] .. ARGV[i]
  local changed
  if ARGV[i + 2] ~= '' then
    changed = redis.call('HSETNX', hash, ARGV[i + 1], ARGV[i + 2])
    redis.call('SADD', KEYS[2], ARGV[i])
  else
    changed = redis.call('HDEL', hash, ARGV[i + 1])
  end
  if changed == 1 then
    redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', 'c', ARGV[i], 'p', ARGV[i + 1], 'e', ARGV[i + 2])
  end
end
return 1
`,
  encode: (a) => ({
    keys: [a.log, a.companies],
    argv: [a.hashPrefix, a.logLength, ...a.changes.flatMap((c) => [c.companyId, c.phone, c.entry === null ? '' : JSON.stringify(c.entry)])],
  }),
  decode: (reply, read) => void read.int(reply, 'reply'),
});
