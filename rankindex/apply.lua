-- Applies one change to a board's index, atomically; or, with ARGV[1] = 'begin', starts a
-- rebuild of the board; or, with ARGV[1] = 'finish', swaps a rebuilt index in and replays the
-- changes that arrived meanwhile.
-- A change: KEYS: zset, state, layout, pending. ARGV: op ('put' | 'del' | 'forget'), player,
-- version, tie (6 bytes), score, expires-at ('' = none). 'forget' drops the player from the
-- board whatever its version. Returns 1 when the change altered the index, 0 when it did not
-- (it is older than what the index holds, or the board was of the first format and is now
-- stale), 2 when it was queued for a rebuild, 3 when the board was complete in the first
-- format, or complete in this one but written to by a projector of the first format (its
-- version hash exists: a process not yet upgraded applied a change to it, during a rolling
-- upgrade): its keys are deleted and it is outdated, waiting for a rebuild.
-- 'begin': KEYS: zset, state, layout, pending, claim. ARGV: 'begin', token, level. Returns
-- {-1} unless the token holds the claim; else {the new generation, then the generation and
-- level of a rebuild that did not finish (0 and 0 for none)}.
-- 'finish': KEYS: zset, state, layout, pending, built zset, built layout, claim. ARGV:
-- 'finish', token. Returns {-1} unless the token holds the claim; else {changes replayed, then
-- the generation (0 for none), level and split of the buckets replaced, then 1 when a
-- projector of the first format wrote to the board during the rebuild (its version hash is
-- back: the rebuild may have missed that change, and the board is left outdated, for another
-- rebuild), 0 when none did (the board is ready)}.
-- A player's record (rankindex/players.py) is in one of the board's buckets, whose key is
-- derived here from the player's id; a board's keys share its hash tag, so every bucket is
-- in the slot of the keys given.
local READY, BUILDING, STALE, OUTDATED = 'ready/2', 'building/2', 'stale', 'outdated/2'
local TIE, FILL = 6, @FILL@

local function layout_of(key)
  local l = redis.call('HMGET', key, 'gen', 'level', 'split', 'players')
  return {gen = tonumber(l[1]) or 1, level = tonumber(l[2]) or 0,
          split = tonumber(l[3]) or 0, players = tonumber(l[4]) or 0}
end

local function save(layout)
  redis.call('HSET', KEYS[3], 'gen', layout.gen, 'level', layout.level,
             'split', layout.split, 'players', layout.players)
end

local function hash(player)
  return tonumber(string.sub(redis.sha1hex(player), 1, 8), 16)
end

local function bucket_key(layout, index)
  return KEYS[1] .. ':p:' .. layout.gen .. ':' .. string.format('%d', index)
end

local function bucket(layout, player)
  local h, n = hash(player), 2 ^ layout.level
  local index = h % n
  if index < layout.split then index = h % (2 * n) end
  return bucket_key(layout, index)
end

-- Splits the next bucket in turn: its records whose hash modulo 2**(level + 1) names the
-- new bucket move there.
local function split_next(layout)
  local n = 2 ^ layout.level
  local from = bucket_key(layout, layout.split)
  local target = layout.split + n
  local to = bucket_key(layout, target)
  local fields = redis.call('HGETALL', from)
  local moved, gone = {}, {}
  for i = 1, #fields, 2 do
    if hash(fields[i]) % (2 * n) == target then
      moved[#moved + 1] = fields[i]
      moved[#moved + 1] = fields[i + 1]
      gone[#gone + 1] = fields[i]
    end
  end
  if #gone > 0 then
    redis.call('HSET', to, unpack(moved))
    local at = redis.call('EXPIRETIME', from)
    if at > 0 then redis.call('EXPIREAT', to, at) end
    redis.call('HDEL', from, unpack(gone))
  end
  layout.split = layout.split + 1
  if layout.split == n then
    layout.level = layout.level + 1
    layout.split = 0
  end
end

local function removed(record) return string.sub(record, 1, 1) == '-' end

local function version_of(record)
  if removed(record) then return tonumber(string.sub(record, 2)) end
  return tonumber(string.sub(record, TIE + 1))
end

local function apply(layout, op, player, version, tie, score, expires)
  local key = bucket(layout, player)
  local current = redis.call('HGET', key, player)
  if op == 'forget' then
    if not current then return 0 end
    if not removed(current) then
      redis.call('ZREM', KEYS[1], string.sub(current, 1, TIE) .. player)
    end
    redis.call('HDEL', key, player)
    layout.players = layout.players - 1
    save(layout)
    return 1
  end
  if current then
    if version_of(current) >= tonumber(version) then
      return 0  -- this change, or a newer one, is applied already
    end
    if not removed(current) then
      redis.call('ZREM', KEYS[1], string.sub(current, 1, TIE) .. player)
    end
  end
  if op == 'put' then
    redis.call('ZADD', KEYS[1], score, tie .. player)
    redis.call('HSET', key, player, tie .. version)
  else
    redis.call('HSET', key, player, '-' .. version)
  end
  if expires ~= '' then
    for _, k in ipairs({KEYS[1], KEYS[2], KEYS[3], key}) do redis.call('EXPIREAT', k, expires) end
  end
  if not current then
    layout.players = layout.players + 1
    if layout.players > FILL * (2 ^ layout.level + layout.split) then split_next(layout) end
    save(layout)
    if expires ~= '' then redis.call('EXPIREAT', KEYS[3], expires) end
  end
  return 1
end

-- A board the first format wrote: its states, or its version hash.
local function first_format(state)
  return state == 'ready' or state == 'building' or redis.call('EXISTS', KEYS[1] .. ':meta') == 1
end

local function holds_claim(key, token) return redis.call('GET', key) == token end

if ARGV[1] == 'begin' then
  if not holds_claim(KEYS[5], ARGV[2]) then return {-1} end
  if first_format(redis.call('GET', KEYS[2])) then
    -- Its version hash, changes it queued in its own encoding and what a rebuild of that
    -- format left unfinished go.
    redis.call('UNLINK', KEYS[1] .. ':meta', KEYS[4], KEYS[1] .. ':built', KEYS[1] .. ':meta:built')
  end
  redis.call('SET', KEYS[2], BUILDING, 'KEEPTTL')
  local l = redis.call('HMGET', KEYS[3], 'gen', 'building')
  local was_gen, was_level = 0, 0
  if l[2] then
    local colon = string.find(l[2], ':', 1, true)
    was_gen = tonumber(string.sub(l[2], 1, colon - 1))
    was_level = tonumber(string.sub(l[2], colon + 1))
  end
  local gen = math.max(tonumber(l[1]) or 0, was_gen) + 1
  redis.call('HSET', KEYS[3], 'building', gen .. ':' .. ARGV[3])
  return {gen, was_gen, was_level}
end

if ARGV[1] == 'finish' then
  if not holds_claim(KEYS[7], ARGV[2]) then return {-1} end
  local previous = layout_of(KEYS[3])
  local had = redis.call('HEXISTS', KEYS[3], 'gen') == 1
  if redis.call('EXISTS', KEYS[5]) == 1 then
    redis.call('RENAME', KEYS[5], KEYS[1])
  else
    redis.call('DEL', KEYS[1])
  end
  redis.call('RENAME', KEYS[6], KEYS[3])
  local written = redis.call('DEL', KEYS[1] .. ':meta')
  local layout = layout_of(KEYS[3])
  local applied = 0
  while true do
    local queued = redis.call('LPOP', KEYS[4])
    if not queued then break end
    local c = cmsgpack.unpack(queued)
    applied = applied + apply(layout, c[1], c[2], c[3], c[4], c[5], c[6])
  end
  redis.call('SET', KEYS[2], written == 1 and OUTDATED or READY)
  return {applied, had and previous.gen or 0, previous.level, previous.split, written}
end

local state = redis.call('GET', KEYS[2])
if state == BUILDING then
  redis.call('RPUSH', KEYS[4], cmsgpack.pack({ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]}))
  return 2
end
if first_format(state) then
  -- A board indexed in the first format: its entries go, and it waits for a rebuild. One
  -- that format held complete, or one complete in this format (or waiting for its rebuild)
  -- that a projector of the first format wrote to, is outdated (a rebuild needs no
  -- operator); any other, stale.
  redis.call('UNLINK', KEYS[1], KEYS[1] .. ':meta', KEYS[4])
  if state == 'ready' or state == 'building' or state == READY or state == OUTDATED then
    redis.call('SET', KEYS[2], OUTDATED, 'KEEPTTL')
    return 3
  end
  redis.call('SET', KEYS[2], STALE, 'KEEPTTL')
  return 0
end
return apply(layout_of(KEYS[3]), ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6])
