/**
 * Replays dead letters (shared-dead-letters.ts): each leaves the dead letters and goes back into the
 * shared outbox as `{"replay": event}`, in one script.
 * KEYS: [1] the outbox stream, [2] `<p>dl:t` (the slot; the other dead-letter keys derive from it).
 * ARGV: [1] the outbox's group, [2] the scope: a company id, or '' for every company,
 *       [3] 'one' or 'all', [4] the event id ('one') or a family ('all'; '' for every family).
 * Reply: the dead letters replayed (JSON).
 */
import { defineScript } from './codec.js';
import { DEAD_LETTERS, STREAM_GROUP } from './modules.js';

export interface DeadLetterReplayArgs {
  readonly outbox: string;
  readonly outboxGroup: string;
  /** `<p>dl:t`. */
  readonly byTime: string;
  /** A company, or null for every company. */
  readonly companyId: number | null;
  /** One dead letter by its event id, or all of them (of a family, or of every family). */
  readonly which: { readonly one: string } | { readonly family: string | null };
}

export const DEAD_LETTER_REPLAY = defineScript<DeadLetterReplayArgs, string[]>({
  name: 'dead-letter-replay',
  uses: [DEAD_LETTERS, STREAM_GROUP],
  body: `
local root = string.sub(KEYS[2], 1, string.len(KEYS[2]) - 1)
local scope = ARGV[2]
local ids
if ARGV[3] == 'one' then
  ids = { ARGV[4] }
elseif scope == '' then
  ids = redis.call('ZRANGE', root .. 'q', 0, -1)
else
  ids = redis.call('ZRANGE', root .. 'q:' .. scope, 0, -1)
end
local out = {}
for _, id in ipairs(ids) do
  local json = redis.call('HGET', root .. 'h', id)
  if json then
    local d = cjson.decode(json)
    local inScope = scope == '' or tostring(d.event.companyId) == scope
    if inScope and (ARGV[3] == 'one' or ARGV[4] == '' or d.event.family == ARGV[4]) then
      dl_drop(root, id)
      stream_group(KEYS[1], ARGV[1])
      redis.call('XADD', KEYS[1], '*', 'e', cjson.encode({ replay = d.event }))
      out[#out + 1] = json
    end
  end
end
return out
`,
  encode: (a) => ({
    keys: [a.outbox, a.byTime],
    argv: [a.outboxGroup, a.companyId === null ? '' : String(a.companyId), 'one' in a.which ? 'one' : 'all', 'one' in a.which ? a.which.one : (a.which.family ?? '')],
  }),
  decode: (reply, read) => read.texts(reply, 'dead letters replayed'),
});
