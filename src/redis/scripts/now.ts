/**
 * The Lua opening every lease script shares: `now` in milliseconds from ARGV[1] when a test passes
 * a simulated time, else from Redis' own clock (`TIME`), so every instance charges on one clock.
 */
export const NOW_LUA = `local now
if ARGV[1] ~= '' then
  now = tonumber(ARGV[1])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end`;
