-- Applies one change to a board's index, atomically; or, with ARGV[1] = 'finish', swaps a
-- rebuilt index in and replays the changes that arrived meanwhile.
-- KEYS: zset, meta, state, pending [, built zset, built meta]
-- ARGV: op ('put' | 'del' | 'forget' | 'finish'), player, version, member, score,
-- expires-at ('' = none). 'forget' drops the player from the board whatever its version.
local function apply(op, player, version, member, score, expires)
  local current = redis.call('HGET', KEYS[2], player)
  if op == 'forget' then
    if current then
      local old = string.sub(current, string.find(current, '|', 1, true) + 1)
      if old ~= '' then redis.call('ZREM', KEYS[1], old) end
      redis.call('HDEL', KEYS[2], player)
      return 1
    end
    return 0
  end
  if current then
    local bar = string.find(current, '|', 1, true)
    if tonumber(string.sub(current, 1, bar - 1)) >= tonumber(version) then
      return 0  -- this change, or a newer one, is applied already
    end
    local old = string.sub(current, bar + 1)
    if old ~= '' then redis.call('ZREM', KEYS[1], old) end
  end
  if op == 'put' then
    redis.call('ZADD', KEYS[1], score, member)
    redis.call('HSET', KEYS[2], player, version .. '|' .. member)
  else
    redis.call('HSET', KEYS[2], player, version .. '|')
  end
  if expires ~= '' then
    for i = 1, 3 do redis.call('EXPIREAT', KEYS[i], expires) end
  end
  return 1
end

if ARGV[1] == 'finish' then
  for i = 1, 2 do
    if redis.call('EXISTS', KEYS[i + 4]) == 1 then
      redis.call('RENAME', KEYS[i + 4], KEYS[i])
    else
      redis.call('DEL', KEYS[i])
    end
  end
  local applied = 0
  while true do
    local queued = redis.call('LPOP', KEYS[4])
    if not queued then break end
    local c = cjson.decode(queued)
    applied = applied + apply(c[1], c[2], c[3], c[4], c[5], c[6])
  end
  redis.call('SET', KEYS[3], 'ready')
  return applied
end

if redis.call('GET', KEYS[3]) == 'building' then
  redis.call('RPUSH', KEYS[4], cjson.encode({ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]}))
  return 2
end
return apply(ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6])
