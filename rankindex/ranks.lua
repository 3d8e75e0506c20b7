-- Reads players' ranks on one board, atomically.
-- KEYS: zset, state, layout
-- ARGV: pairs of (player, rank value). With a rank value: how many entries are strictly better
-- than that value, the player's own indexed entry left out (it is being replaced by the entry
-- the value belongs to). With '' as the value: how many entries are strictly better than the
-- player's indexed entry.
-- Returns {state} unless the board is ready; else {state, entries, then for each player its
-- indexed member ('' when none) and the count of better entries (-1 when there is nothing to
-- rank: no value given and no entry indexed)}. A board whose first-format version hash exists
-- is not ready, whatever its state: a projector of the first format (a process not yet
-- upgraded, during a rolling upgrade) wrote to it, adding members of its own to the sorted set.
-- A player's record is in the bucket apply.lua puts it in (the same linear hashing).
local TIE = 6
local state = redis.call('GET', KEYS[2])
if state ~= 'ready/2' then return {state or ''} end
if redis.call('EXISTS', KEYS[1] .. ':meta') == 1 then return {state} end
local l = redis.call('HMGET', KEYS[3], 'gen', 'level', 'split')
local gen, level, split = tonumber(l[1]) or 1, tonumber(l[2]) or 0, tonumber(l[3]) or 0
local n = 2 ^ level
local out = {state, redis.call('ZCARD', KEYS[1])}
for i = 1, #ARGV, 2 do
  local player, value = ARGV[i], ARGV[i + 1]
  local h = tonumber(string.sub(redis.sha1hex(player), 1, 8), 16)
  local index = h % n
  if index < split then index = h % (2 * n) end
  local record = redis.call('HGET', KEYS[1] .. ':p:' .. gen .. ':' .. string.format('%d', index), player)
  local own, own_score = '', nil
  if record and string.sub(record, 1, 1) ~= '-' then
    local member = string.sub(record, 1, TIE) .. player
    own_score = redis.call('ZSCORE', KEYS[1], member)
    if own_score then own = member end
  end
  local better = -1
  if value ~= '' then
    better = redis.call('ZCOUNT', KEYS[1], '(' .. value, '+inf')
    if own_score and tonumber(own_score) > tonumber(value) then better = better - 1 end
  elseif own_score then
    better = redis.call('ZCOUNT', KEYS[1], '(' .. own_score, '+inf')
  end
  out[#out + 1] = own
  out[#out + 1] = better
end
return out
