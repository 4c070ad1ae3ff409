#!lua name=tgw_registry
-- The connection registry as Redis Functions. Every write that touches the registry
-- is owner-checked on the server, so a device that moved to another instance is
-- never deleted by its old one, by a janitor, or by two janitors at once.
--
-- Keys: connections:registry (HASH imei -> instance), instance:devices:{id} (SET,
-- the reverse index), instance:heartbeat:{id} (STRING with a TTL), instances:known
-- (SET of instance ids that ever registered). All keys are passed as KEYS.

-- KEYS: registry, instance:devices:{me}, instance:devices:{expected previous owner}
-- ARGV: imei, me, expected previous owner ('' for none)
-- Returns {1, previous} when registered, or {0, actual} when the owner changed since
-- the caller read it: the caller retries with the actual owner's reverse index.
local function register(keys, args)
  local imei, me, expected = args[1], args[2], args[3]
  local current = redis.call('HGET', keys[1], imei) or ''
  if current ~= expected then return {0, current} end
  redis.call('HSET', keys[1], imei, me)
  redis.call('SADD', keys[2], imei)
  if current ~= '' and current ~= me then redis.call('SREM', keys[3], imei) end
  return {1, current}
end

-- KEYS: registry, instance:devices:{me}, instance:devices:{expected previous owner},
--       instance:heartbeat:{expected previous owner}
-- ARGV: imei, me, expected previous owner ('' for none)
-- Puts back an entry this instance held before an outage or while it was presumed
-- dead, without taking it from a live instance: a device this instance still counts
-- may have reconnected elsewhere meanwhile, and that fresh registration is the truth
-- (this instance's stale session will close and, owner-checked, delete nothing).
-- Returns {1, previous} when set, {0, actual} when the owner changed since the caller
-- read it, {2, owner} when a live instance holds the entry (left alone).
local function reassert(keys, args)
  local imei, me, expected = args[1], args[2], args[3]
  local current = redis.call('HGET', keys[1], imei) or ''
  if current ~= expected then return {0, current} end
  if current ~= '' and current ~= me and redis.call('EXISTS', keys[4]) == 1 then
    return {2, current}
  end
  redis.call('HSET', keys[1], imei, me)
  redis.call('SADD', keys[2], imei)
  if current ~= '' and current ~= me then redis.call('SREM', keys[3], imei) end
  return {1, current}
end

-- KEYS: registry, instance:devices:{owner}; ARGV: imei, owner
-- Deletes the entry only if it still names `owner`; always leaves the reverse index.
-- Returns 1 if the entry was deleted.
local function unregister(keys, args)
  redis.call('SREM', keys[2], args[1])
  if redis.call('HGET', keys[1], args[1]) == args[2] then
    redis.call('HDEL', keys[1], args[1])
    return 1
  end
  return 0
end

-- KEYS: registry, instance:heartbeat:{dead}; ARGV: dead, imei...
-- The janitor's owner-checked eviction of a batch read from the dead instance's
-- reverse index (SSCAN) or from the registry (HSCAN, scan mode). The reverse index
-- is not touched while it is scanned, so the scan stays a cheap sequential walk; it
-- is dropped whole once the instance is forgotten. Returns the entries deleted, so
-- two janitors evicting the same instance count each entry once between them.
-- The instance may come back during a pass (a pause, a Redis outage): it then
-- re-asserts its devices under the same id, and the owner check cannot tell those
-- entries from the stale ones, so nothing is evicted once its heartbeat is back.
local function evict(keys, args)
  local dead, deleted = args[1], 0
  if redis.call('EXISTS', keys[2]) == 1 then return 0 end
  for i = 2, #args do
    if redis.call('HGET', keys[1], args[i]) == dead then
      redis.call('HDEL', keys[1], args[i])
      deleted = deleted + 1
    end
  end
  return deleted
end

-- A heartbeat's value names the process that writes it ('host=... pid=... ...'); an
-- older tgw wrote the time in ms.
local function is_holder(value)
  return value ~= nil and value ~= false and string.sub(value, 1, 5) == 'host='
end

-- KEYS: instance:heartbeat:{me}, instances:known; ARGV: me, ttl_s, holder
-- Returns {1, ''} if the heartbeat key had expired (or never existed): the instance was
-- presumed dead and must re-assert its devices; {0, ''} if it held this holder; and
-- {2, other} when another process with the same instance id holds it: nothing is
-- written, so the two do not take the key from each other in turn. A caller of an
-- older tgw passes the time for a holder: it gets 1 or 0, as it expects.
local function heartbeat(keys, args)
  local current = redis.call('GET', keys[1])
  local holder = args[3]
  if is_holder(holder) and is_holder(current) and current ~= holder then
    return {2, current}
  end
  redis.call('SET', keys[1], holder, 'EX', tonumber(args[2]))
  redis.call('SADD', keys[2], args[1])
  local missing = current and 0 or 1
  if is_holder(holder) then return {missing, ''} end
  return missing
end

-- KEYS: instance:heartbeat:{me}; ARGV: holder
-- Shutdown: deletes the heartbeat unless another process (same instance id) holds it.
-- Returns 1 when deleted (or already gone), 0 when left to that process.
local function release(keys, args)
  local current = redis.call('GET', keys[1])
  if is_holder(current) and current ~= args[1] then return 0 end
  redis.call('DEL', keys[1])
  return 1
end

-- KEYS: instance:devices:{dead}, instances:known, instance:heartbeat:{dead}; ARGV: dead
-- Forgets an instance whose entries were evicted, if it is still dead: its reverse
-- index goes (UNLINK frees it in the background) and it leaves instances:known. An
-- instance that came back meanwhile is left alone; it re-asserts its devices itself.
local function forget_instance(keys, args)
  if redis.call('EXISTS', keys[3]) == 1 then return 0 end
  redis.call('UNLINK', keys[1])
  redis.call('SREM', keys[2], args[1])
  return 1
end

redis.register_function('tgw_registry_register', register)
redis.register_function('tgw_registry_reassert', reassert)
redis.register_function('tgw_registry_unregister', unregister)
redis.register_function('tgw_registry_evict', evict)
redis.register_function('tgw_registry_heartbeat', heartbeat)
redis.register_function('tgw_registry_release', release)
redis.register_function('tgw_registry_forget_instance', forget_instance)
