/**
 * Gives back the phones a request holds (shared-phones.ts): in each hash, a phone whose entry is
 * the request's goes; another request's stays.
 * KEYS: the hashes of phones (a campaign's, a business's buckets).
 * ARGV: [1] the request, then the phones.
 * Reply: 1.
 */
import { defineScript } from './codec.js';

export interface PhonesReleaseArgs {
  readonly hashes: readonly string[];
  readonly requestId: string;
  readonly phones: readonly string[];
}

export const PHONES_RELEASE = defineScript<PhonesReleaseArgs, void>({
  name: 'phones-release',
  body: `
local prefix = ARGV[1] .. '@'
for k = 1, #KEYS do
  for i = 2, #ARGV do
    local v = redis.call('HGET', KEYS[k], ARGV[i])
    if v and string.sub(v, 1, string.len(prefix)) == prefix then redis.call('HDEL', KEYS[k], ARGV[i]) end
  end
end
return 1
`,
  encode: (a) => ({ keys: a.hashes, argv: [a.requestId, ...a.phones] }),
  decode: (reply, read) => void read.int(reply, 'reply'),
});
