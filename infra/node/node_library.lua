#!lua name=tgw_node
-- Cluster-node protocol as Redis Functions: every membership, lease and queue change
-- is one atomic server-side step, and every timestamp is the server's clock, so nodes
-- with skewed clocks still agree on who is inactive.
--
-- Keys are passed in KEYS except the per-node processing lists of *other* nodes,
-- which only the health check touches and which it derives from ARGV's prefix.

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function refresh_ttl(keys, ttl_ms)
  for _, k in ipairs(keys) do
    if redis.call('EXISTS', k) == 1 then redis.call('PEXPIRE', k, ttl_ms) end
  end
end

local function register(list, ids, id, now)
  local known = redis.call('HEXISTS', list, id) == 1
  redis.call('HSET', list, id, now)
  if redis.call('LPOS', ids, id) == false then redis.call('RPUSH', ids, id) end
  return not known
end

-- Gives the lease to the first registered node when its holder is gone.
local function ensure_emitter(list, ids, emitter, epoch)
  local holder = redis.call('GET', emitter)
  if holder and redis.call('HEXISTS', list, holder) == 1 then
    return holder, tonumber(redis.call('GET', epoch) or '0')
  end
  local first = redis.call('LINDEX', ids, 0)
  if not first then
    redis.call('DEL', emitter)
    return '', tonumber(redis.call('GET', epoch) or '0')
  end
  redis.call('SET', emitter, first)
  return first, redis.call('INCR', epoch)
end

local function return_messages(processing, queue)
  local n = 0
  while redis.call('LMOVE', processing, queue, 'LEFT', 'RIGHT') do n = n + 1 end
  return n
end

local function remove_node(list, ids, queue, prefix, id)
  redis.call('HDEL', list, id)
  redis.call('LREM', ids, 0, id)
  return return_messages(prefix .. id, queue)
end

-- KEYS: list ids emitter epoch queue sequence; ARGV: id ttl_ms processing_prefix
-- A node that joins has just started and holds nothing: whatever its id's processing
-- list still holds belongs to an earlier incarnation that was killed, so it goes back.
local function node_join(keys, args)
  local now = now_ms()
  return_messages(args[3] .. args[1], keys[5])
  register(keys[1], keys[2], args[1], now)
  local holder, epoch = ensure_emitter(keys[1], keys[2], keys[3], keys[4])
  refresh_ttl(keys, tonumber(args[2]))
  return {holder, epoch, 0, 0, 0}
end

-- KEYS: list ids emitter epoch queue sequence departed
-- ARGV: id inactive_ms ttl_ms processing_prefix
-- A node removed as inactive may still be blocked in BLMOVE, and the server may hand
-- it a message after the removal returned its list: the move lands in the list of a
-- node nobody watches. So removed nodes stay in `departed` (ZSET, id to removal ms)
-- for the keys' TTL, and while they have not registered again their lists are
-- returned at every health check. A node that comes back leaves the set.
local function node_health(keys, args)
  local list, ids, emitter, epoch, queue = keys[1], keys[2], keys[3], keys[4], keys[5]
  local departed = keys[7]
  local id, inactive_ms, ttl_ms, prefix = args[1], tonumber(args[2]), tonumber(args[3]), args[4]
  local now = now_ms()
  local rejoined = register(list, ids, id, now) and 1 or 0
  local removed, returned = 0, 0
  local all = redis.call('HGETALL', list)
  for i = 1, #all, 2 do
    local node, last = all[i], tonumber(all[i + 1])
    if node ~= id and now - last > inactive_ms then
      returned = returned + remove_node(list, ids, queue, prefix, node)
      redis.call('ZADD', departed, now, node)
      removed = removed + 1
    end
  end
  redis.call('ZREMRANGEBYSCORE', departed, '-inf', now - ttl_ms)
  for _, node in ipairs(redis.call('ZRANGE', departed, 0, -1)) do
    if redis.call('HEXISTS', list, node) == 1 then
      redis.call('ZREM', departed, node)
    else
      returned = returned + return_messages(prefix .. node, queue)
    end
  end
  local holder, current = ensure_emitter(list, ids, emitter, epoch)
  refresh_ttl(keys, ttl_ms)
  return {holder, current, removed, returned, rejoined}
end

-- KEYS: list emitter epoch queue sequence
-- ARGV: id epoch count ttl_ms max_messages queue_limit
-- Returns {status, first id, last id}: 1 emitted, 0 refused (the lease is not the
-- caller's at that epoch: the fencing check), 2 the message budget is spent, 3 the
-- queue is full. Only the lease holder, at the epoch it was granted, may emit.
local function node_emit(keys, args)
  local list, emitter, epoch, queue, sequence = keys[1], keys[2], keys[3], keys[4], keys[5]
  local id = args[1]
  if redis.call('GET', emitter) ~= id or redis.call('GET', epoch) ~= args[2] then
    return {0, 0, 0}
  end
  local now = now_ms()
  redis.call('HSET', list, id, now)
  local count = tonumber(args[3])
  local max_messages, queue_limit = tonumber(args[5]), tonumber(args[6])
  if max_messages > 0 then
    local left = max_messages - tonumber(redis.call('GET', sequence) or '0')
    if left <= 0 then return {2, 0, 0} end
    if count > left then count = left end
  end
  if queue_limit > 0 and redis.call('LLEN', queue) >= queue_limit then return {3, 0, 0} end
  local first = redis.call('INCRBY', sequence, count) - count + 1
  for n = first, first + count - 1 do
    redis.call('LPUSH', queue, n .. ':' .. id .. ':' .. args[2] .. ':' .. now)
  end
  refresh_ttl({queue, sequence}, tonumber(args[4]))
  return {1, first, first + count - 1}
end

-- KEYS: list processing errors handled; ARGV: id message failed reason record_handled
-- The message counts as handled only if it is still in this node's processing list:
-- a node that was paused and removed finds it gone and its result is dropped.
local function node_done(keys, args)
  local list, processing, errors, handled = keys[1], keys[2], keys[3], keys[4]
  local id, message = args[1], args[2]
  if redis.call('LREM', processing, 1, message) == 0 then return 0 end
  local now = now_ms()
  if args[3] == '1' then
    redis.call('RPUSH', errors, cjson.encode({message = message, node = id, at_ms = now,
                                             reason = args[4]}))
  elseif args[5] == '1' then
    redis.call('HINCRBY', handled, message, 1)
  end
  if redis.call('HEXISTS', list, id) == 1 then redis.call('HSET', list, id, now) end
  return 1
end

-- KEYS: list ids emitter epoch queue; ARGV: id processing_prefix
local function node_leave(keys, args)
  local list, ids, emitter, epoch, queue = keys[1], keys[2], keys[3], keys[4], keys[5]
  local returned = remove_node(list, ids, queue, args[2], args[1])
  ensure_emitter(list, ids, emitter, epoch)
  return returned
end

-- KEYS: errors; prints and deletes in one step so no error is lost or shown twice.
local function node_take_errors(keys, args)
  local all = redis.call('LRANGE', keys[1], 0, -1)
  redis.call('DEL', keys[1])
  return all
end

redis.register_function('tgw_node_join', node_join)
redis.register_function('tgw_node_health', node_health)
redis.register_function('tgw_node_emit', node_emit)
redis.register_function('tgw_node_done', node_done)
redis.register_function('tgw_node_leave', node_leave)
redis.register_function('tgw_node_take_errors', node_take_errors)
