/** The renewal of held stream entries, shared by the queue's renewal and its epoch-fenced one (reset-scripts.ts). */

/**
 * The body of a renewal: ARGV[1] group, [2] this consumer, [3] idle time in ms, entry ids from
 * ARGV[first] on (the fenced renewal of reset-scripts.ts has the epoch before them).
 */
export function renewLua(first: number): string {
  return `
local lost = {}
local claim = { KEYS[1], ARGV[1], ARGV[2], '0' }
for j = ${first}, #ARGV do
  local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[j], ARGV[j], 1)
  if p[1] and p[1][2] == ARGV[2] then claim[#claim + 1] = ARGV[j] else lost[#lost + 1] = ARGV[j] end
end
if #claim > 4 then
  claim[#claim + 1] = 'IDLE'
  claim[#claim + 1] = ARGV[3]
  claim[#claim + 1] = 'JUSTID'
  redis.call('XCLAIM', unpack(claim))
end
return lost
`;
}
