-- Reads players' ranks on one board, atomically.
-- KEYS: zset, meta, state
-- ARGV: pairs of (player, rank value). With a rank value: how many entries are strictly better
-- than that value, the player's own indexed entry left out (it is being replaced by the entry
-- the value belongs to). With '' as the value: how many entries are strictly better than the
-- player's indexed entry.
-- Returns {state} unless the board is ready; else {state, entries, then for each player its
-- indexed member ('' when none) and the count of better entries (-1 when there is nothing to
-- rank: no value given and no entry indexed)}.
local state = redis.call('GET', KEYS[3])
if state ~= 'ready' then return {state or ''} end
local out = {state, redis.call('ZCARD', KEYS[1])}
for i = 1, #ARGV, 2 do
  local player, value = ARGV[i], ARGV[i + 1]
  local own, own_score = '', nil
  local current = redis.call('HGET', KEYS[2], player)
  if current then
    local member = string.sub(current, string.find(current, '|', 1, true) + 1)
    if member ~= '' then
      own_score = redis.call('ZSCORE', KEYS[1], member)
      if own_score then own = member end
    end
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
