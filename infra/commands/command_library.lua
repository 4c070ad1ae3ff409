#!lua name=tgw_commands
-- Outbound commands as Redis Functions. Each function is one atomic step, so a
-- command's routing decision, its response and the acknowledgement of its stream entry
-- can never be seen half done: a crash between "response published" and "entry
-- acknowledged" is impossible, and two janitors adopting the same dead instance's
-- stream give every entry exactly one outcome between them.
--
-- Keys: commands:outbound:{instance} (STREAM, group 'ingest'), commands:responses
-- (STREAM), commands:offline:{imei} (LIST of JSON-encoded commands), journal:{imei}
-- (STREAM), connections:registry (HASH imei -> instance), instance:heartbeat:{id}.
--
-- tgw_cmd_publish and tgw_cmd_orphans build the heartbeat and outbound keys of an owner
-- they only learn inside the call (from the registry), and tgw_cmd_orphans builds
-- journal keys from the entries it reads. Reading the owner first and passing its keys
-- would open a race with the owner's death, which is the very thing these functions
-- decide atomically. On a Redis Cluster this stays legal because every key of a call
-- is in one key shard: the keys built inside carry the hash tag of the first key
-- (docs/CLUSTER.md), so they hash to the same slot.

-- Every published command has a marker, commands:id:{command_id} (in its device's key
-- shard), written in the same step as the command: 'p|owner|entry' while it waits for
-- its outcome, 'a' once a response is published. It is what makes a command's end
-- exactly once across a failover. The marker and the command replicate together, so on
-- a promoted replica "no marker" means the publish was lost with the old master, and
-- its publisher ends the command (tgw_cmd_settle); "answered" keeps a second response
-- from being published by whoever resolves the command next (a re-routed copy, a
-- retried resolve); and a resolve whose entry is gone while the marker waits publishes
-- the device's answer all the same.
local ANSWERED_TTL_S = 600
local PUBLISHED_TTL_MARGIN_S = 120

local function marker_state(marker)
  local v = redis.call('GET', marker)
  if not v then return nil end
  return string.sub(v, 1, 1)
end

local function mark_answered(marker)
  redis.call('SET', marker, 'a', 'EX', ANSWERED_TTL_S)
end

-- Responses are kept for publishers that are waiting for them, not as a history: a
-- waiting publisher needs at most its --timeout worth of entries (30 s at 1000
-- commands/s is 30 000), so this bound loses nothing anyone reads.
local RESPONSES_MAXLEN = 100000

-- The key shard's hash tag that `key` starts with ('{...}'), or '' on a single node.
local function shard_prefix(key)
  if string.sub(key, 1, 1) ~= '{' then return '' end
  local close = string.find(key, '}', 2, true)
  if close == nil then return '' end
  return string.sub(key, 1, close)
end

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- The id of the newest response, so a publisher can XREAD after it and cannot miss the
-- response to the command it publishes in the same call.
local function last_response_id(responses)
  local newest = redis.call('XREVRANGE', responses, '+', '-', 'COUNT', 1)
  if #newest == 0 then return '0-0' end
  return newest[1][1]
end

-- `imei` is the command's target, so a watcher knows the device without the command;
-- it comes after the seed's fields, which keep their order, and `response_hex` (the
-- reply's exact bytes; `response` holds them only when they are UTF-8 text) after it.
local function respond(responses, command_id, status, response, reason, at, imei, response_hex)
  local entry = {'command_id', command_id, 'status', status}
  if response ~= nil and response ~= '' then
    entry[#entry + 1] = 'response'
    entry[#entry + 1] = response
  end
  if reason ~= nil and reason ~= '' then
    entry[#entry + 1] = 'failure_reason'
    entry[#entry + 1] = reason
  end
  entry[#entry + 1] = 'responded_at'
  entry[#entry + 1] = at
  if imei ~= nil and imei ~= '' then
    entry[#entry + 1] = 'imei'
    entry[#entry + 1] = imei
  end
  if response_hex ~= nil and response_hex ~= '' then
    entry[#entry + 1] = 'response_hex'
    entry[#entry + 1] = response_hex
  end
  return redis.call('XADD', responses, 'MAXLEN', '~', RESPONSES_MAXLEN, '*', unpack(entry))
end

local function journal_resolved(journal, maxlen, at, instance, command_id, status, response,
                                reason, response_hex)
  local entry = {'type', 'command_resolved', 'at_ms', at, 'instance', instance, 'command_id',
                 command_id, 'status', status}
  if reason ~= nil and reason ~= '' then
    entry[#entry + 1] = 'failure_reason'
    entry[#entry + 1] = reason
  end
  if response ~= nil and response ~= '' then
    entry[#entry + 1] = 'response'
    entry[#entry + 1] = response
  end
  if response_hex ~= nil and response_hex ~= '' then
    entry[#entry + 1] = 'response_hex'
    entry[#entry + 1] = response_hex
  end
  redis.call('XADD', journal, 'MAXLEN', '~', maxlen, '*', unpack(entry))
end

local function field_map(flat)
  local m = {}
  for i = 1, #flat, 2 do m[flat[i]] = flat[i + 1] end
  return m
end

-- Why an entry cannot be delivered, or nil. The consumer applies the same rules (and a
-- payload size limit) in command_store.cpp.
local function malformed(f)
  for _, name in ipairs({'command_id', 'target_imei', 'codec', 'payload'}) do
    if f[name] == nil or f[name] == '' then return 'missing field ' .. name end
  end
  -- 15 digits, or 16 for an IMEISV: the rule of codecs::valid_imei.
  if not string.match(f.target_imei, '^%d+$') or #f.target_imei < 15 or #f.target_imei > 16 then
    return 'bad target_imei'
  end
  if f.codec ~= '12' and f.codec ~= '14' then return 'bad codec ' .. f.codec end
  if f.expires_at ~= nil and f.expires_at ~= '' and not string.match(f.expires_at, '^%d+$') then
    return 'bad expires_at'
  end
  return nil
end

-- expires_at 0 or absent: the command never expires.
local function expired(f, now_s)
  local e = tonumber(f.expires_at or '0') or 0
  return e > 0 and e < now_s
end

-- The command's text and who published it are in no other key once its entry is
-- answered (resolve deletes it): the journal keeps them for the device's history.
-- No MAXLEN: the publisher does not know the gateways' --journal-maxlen, and their
-- next append to the journal trims it.
local function journal_published(journal, at, owner, args, status)
  redis.call('XADD', journal, '*', 'type', 'command_published', 'at_ms', at, 'instance', owner,
             'command_id', args[2], 'codec', args[3], 'payload', args[4], 'expires_at', args[5],
             'publisher', args[8] or '', 'status', status)
end

-- The body of tgw_cmd_publish without the idempotency key.
local function publish_new(keys, args, shard, last)
  local registry, responses, offline, marker = keys[1], keys[2], keys[3], keys[4]
  local imei, command_id, codec, payload, expires_at = args[1], args[2], args[3], args[4], args[5]
  local seen = redis.call('GET', marker)
  if seen then
    if string.sub(seen, 1, 1) == 'a' then return {'answered', '', '', last} end
    local owner, id = string.match(seen, '^p|([^|]*)|(.*)$')
    return {id == '' and 'queued' or 'sent', owner or '', id or '', last}
  end
  local ttl = (tonumber(args[7]) or 0) + PUBLISHED_TTL_MARGIN_S
  local owner = redis.call('HGET', registry, imei) or ''
  if owner ~= '' and redis.call('EXISTS', shard .. 'instance:heartbeat:' .. owner) == 1 then
    local id = redis.call('XADD', shard .. 'commands:outbound:' .. owner, 'NOMKSTREAM', '*',
                          'command_id', command_id, 'target_imei', imei, 'codec', codec,
                          'payload', payload, 'expires_at', expires_at)
    if id then
      redis.call('SET', marker, 'p|' .. owner .. '|' .. id, 'EX', ttl)
      if keys[5] then journal_published(keys[5], now_ms(), owner, args, 'sent') end
      return {'sent', owner, id, last}
    end
  end
  if args[6] == '1' then
    redis.call('RPUSH', offline, cjson.encode({command_id = command_id, target_imei = imei,
                                               codec = codec, payload = payload,
                                               expires_at = expires_at}))
    redis.call('SET', marker, 'p||', 'EX', ttl)
    if keys[5] then journal_published(keys[5], now_ms(), '', args, 'queued') end
    return {'queued', '', '', last}
  end
  -- Refused at once: the publisher is told so, and the device's history keeps it, with
  -- the outcome the publisher reports (socket_closed). Nothing else is written: no
  -- marker, no response, since no instance will ever answer it.
  if keys[5] then
    local at = now_ms()
    journal_published(keys[5], at, owner, args, 'offline')
    redis.call('XADD', keys[5], '*', 'type', 'command_resolved', 'at_ms', at, 'instance', owner,
               'command_id', command_id, 'status', 'failed', 'failure_reason', 'socket_closed')
  end
  return {'offline', owner, '', last}
end

-- KEYS: connections:registry, commands:responses, commands:offline:{imei},
--       commands:id:{command_id}[, journal:{imei}[, commands:idempotency:{digest}]]
-- ARGV: imei, command_id, codec, payload, expires_at, queue_if_offline (0|1), ttl_s
--       [, publisher[, fingerprint, idempotency_ttl_s]]
-- Returns {status, owner, entry_id, last_response_id} with status 'sent', 'queued' or
-- 'offline'. The owner counts only while its heartbeat exists; NOMKSTREAM keeps a dead
-- owner's stream from being re-created once its janitor removed it. Publishing the same
-- command_id again (a publisher that lost its connection mid-call) changes nothing and
-- returns what the first call decided, or 'answered' once it has its response. A sent
-- or queued command is journaled (command_published) when the journal key is given; an
-- offline one too, with its outcome (command_resolved, failed/socket_closed).
--
-- With the sixth key (an application's Idempotency-Key, digested with its publisher and
-- device), the first call publishes and keeps 'command_id|fingerprint|status' there for
-- idempotency_ttl_s; a later call with the key publishes nothing and returns
-- {'repeated', first_status, '', last_response_id, first_command_id}, or, when its
-- fingerprint (the request) differs, {'conflict', '', '', last_response_id,
-- first_command_id}. Both steps are this one call, so two publishers racing with the
-- same key (two API instances) publish once between them.
local function publish(keys, args)
  local shard = shard_prefix(keys[1])
  local last = last_response_id(keys[2])
  local once = keys[6]
  if once then
    local kept = redis.call('GET', once)
    if kept then
      local id, fingerprint, status = string.match(kept, '^([^|]*)|([^|]*)|(.*)$')
      if fingerprint ~= args[9] then return {'conflict', '', '', last, id or ''} end
      return {'repeated', status or '', '', last, id or ''}
    end
    local decided = publish_new(keys, args, shard, last)
    redis.call('SET', once, args[2] .. '|' .. args[9] .. '|' .. decided[1], 'EX',
               tonumber(args[10]) or 86400)
    return decided
  end
  return publish_new(keys, args, shard, last)
end

-- KEYS: commands:id:{command_id}, commands:responses
-- ARGV: command_id, imei, reason
-- The publisher's last word on a command whose outcome it cannot find: with a marker,
-- the command is on its way (or answered) and nothing is written; without one, the
-- publish was lost (a failover to a replica that never had it), and the command ends
-- here with failed/<reason> and an 'answered' marker, so that nothing can answer it
-- twice. Returns 'published', 'answered' or 'settled'.
local function settle(keys, args)
  local marker, responses = keys[1], keys[2]
  local state = marker_state(marker)
  if state == 'p' then return 'published' end
  if state == 'a' then return 'answered' end
  respond(responses, args[1], 'failed', nil, args[3], now_ms(), args[2])
  mark_answered(marker)
  return 'settled'
end

-- KEYS: commands:outbound:{me}, commands:responses, commands:id:{command_id}
--       [, journal:{imei}]
-- ARGV: group, entry_id, command_id, status, response, failure_reason, instance,
--       journal_maxlen, imei[, response_hex]
-- Publishes the command's terminal response, journals command_resolved (when the
-- journal key is given: an entry without a usable IMEI has none), marks the command
-- answered, and acknowledges and deletes the entry, all at once. A command answered
-- already (its marker says so) gets no second response: 0 is returned. An entry no
-- longer in the stream is answered all the same unless its marker says answered: a
-- janitor re-routed it, or a failover lost its publish after it was delivered; either
-- way its device did answer. The XACK always runs, so a pending id whose body is gone
-- leaves the pending list. An entry without a command_id has no marker: answered once,
-- from the stream.
local function resolve(keys, args)
  local stream, responses, marker, journal = keys[1], keys[2], keys[3], keys[4]
  local group, entry_id, command_id, status = args[1], args[2], args[3], args[4]
  local response, reason, instance, response_hex = args[5], args[6], args[7], args[10]
  local found = redis.call('XRANGE', stream, entry_id, entry_id)
  redis.call('XACK', stream, group, entry_id)
  local answered = command_id ~= '' and marker_state(marker) == 'a'
  if answered or (#found ~= 1 and command_id == '') then
    if #found == 1 then redis.call('XDEL', stream, entry_id) end
    return 0
  end
  local imei = args[9]
  if #found == 1 then
    local fields = found[1][2]
    for i = 1, #fields - 1, 2 do
      if fields[i] == 'target_imei' then imei = fields[i + 1] end
    end
  end
  local at = now_ms()
  respond(responses, command_id, status, response, reason, at, imei, response_hex)
  if journal then
    journal_resolved(journal, tonumber(args[8]), at, instance, command_id, status, response,
                     reason, response_hex)
  end
  if command_id ~= '' then mark_answered(marker) end
  if #found == 1 then redis.call('XDEL', stream, entry_id) end
  return 1
end

-- KEYS: journal:{imei}, commands:id:{command_id}
-- ARGV: command_id, codec, instance, journal_maxlen
-- Returns the event's time in ms, or -1 when the command was answered already (a copy
-- re-routed by a janitor whose original its device answered): it is not delivered again.
local function dispatched(keys, args)
  if keys[2] and marker_state(keys[2]) == 'a' then return -1 end
  local at = now_ms()
  redis.call('XADD', keys[1], 'MAXLEN', '~', tonumber(args[4]), '*', 'type',
             'command_dispatched', 'at_ms', at, 'instance', args[3], 'command_id', args[1],
             'codec', args[2])
  return at
end

-- KEYS: commands:outbound:{dead}, connections:registry, commands:responses
-- ARGV: dead_instance, now_s, batch[, journal_maxlen (default 10000)]
-- Adopts up to `batch` entries from the head of a dead instance's stream, read or
-- unread: an expired one is answered failed/expired_before_delivery, one whose device
-- is now held by another live instance is re-routed to that instance's stream (no
-- response yet: that instance answers it), any other is answered failed/instance_lost,
-- a malformed one failed/'malformed: <why>'. Each handled entry is deleted in the same
-- call, and the stream (with its group) once it is empty.
-- Returns {handled, rerouted, failed, remaining}.
local function orphans(keys, args)
  local stream, registry, responses = keys[1], keys[2], keys[3]
  local shard = shard_prefix(stream)
  local dead, now_s, batch = args[1], tonumber(args[2]), tonumber(args[3])
  local journal_maxlen = tonumber(args[4] or '10000')
  local handled, rerouted, failed = 0, 0, 0
  local at = now_ms()
  for _, e in ipairs(redis.call('XRANGE', stream, '-', '+', 'COUNT', batch)) do
    local id, flat = e[1], e[2]
    local f = field_map(flat)
    local marker = nil
    if f.command_id and f.command_id ~= '' then marker = shard .. 'commands:id:' .. f.command_id end
    local why = malformed(f)
    local reason = nil
    if marker and marker_state(marker) == 'a' then
      -- Answered already (its device answered the instance before it died): dropped.
    elseif why then
      reason = 'malformed: ' .. why
    elseif expired(f, now_s) then
      reason = 'expired_before_delivery'
    else
      local owner = redis.call('HGET', registry, f.target_imei)
      local moved = false
      if owner and owner ~= dead and
          redis.call('EXISTS', shard .. 'instance:heartbeat:' .. owner) == 1 then
        moved = redis.call('XADD', shard .. 'commands:outbound:' .. owner, 'NOMKSTREAM', '*',
                           unpack(flat)) ~= false
      end
      if moved then rerouted = rerouted + 1 else reason = 'instance_lost' end
    end
    if reason then
      failed = failed + 1
      respond(responses, f.command_id or '', 'failed', nil, reason, at, f.target_imei)
      if marker then mark_answered(marker) end
      if why == nil then
        journal_resolved(shard .. 'journal:' .. f.target_imei, journal_maxlen, at, dead,
                         f.command_id, 'failed', nil, reason)
      end
    end
    redis.call('XDEL', stream, id)
    handled = handled + 1
  end
  local remaining = redis.call('XLEN', stream)
  if remaining == 0 then redis.call('DEL', stream) end
  return {handled, rerouted, failed, remaining}
end

-- KEYS: commands:offline:{imei}, commands:outbound:{me}, commands:responses
-- ARGV: imei, now_s
-- Moves the device's queued commands, in order, into the stream of the instance that
-- now holds it (creating the stream is right here: that instance is alive), answers
-- the expired ones failed/expired_before_delivery, and deletes the queue.
-- Returns the number of commands moved.
local function drain_offline(keys, args)
  local queue, stream, responses = keys[1], keys[2], keys[3]
  local now_s = tonumber(args[2])
  local moved = 0
  local at = nil
  for _, raw in ipairs(redis.call('LRANGE', queue, 0, -1)) do
    local ok, c = pcall(cjson.decode, raw)
    if not ok or type(c) ~= 'table' then c = {} end
    c.target_imei = c.target_imei or args[1]
    local why = malformed(c)
    local reason = nil
    if why then
      reason = 'malformed: ' .. why
    elseif expired(c, now_s) then
      reason = 'expired_before_delivery'
    end
    if reason then
      at = at or now_ms()
      respond(responses, c.command_id or '', 'failed', nil, reason, at, c.target_imei)
      if c.command_id and c.command_id ~= '' then
        mark_answered(shard_prefix(queue) .. 'commands:id:' .. c.command_id)
      end
    else
      redis.call('XADD', stream, '*', 'command_id', c.command_id, 'target_imei', c.target_imei,
                 'codec', c.codec, 'payload', c.payload, 'expires_at', c.expires_at or '0')
      moved = moved + 1
    end
  end
  redis.call('DEL', queue)
  return moved
end

redis.register_function('tgw_cmd_publish', publish)
redis.register_function('tgw_cmd_settle', settle)
redis.register_function('tgw_cmd_resolve', resolve)
redis.register_function('tgw_cmd_dispatched', dispatched)
redis.register_function('tgw_cmd_orphans', orphans)
redis.register_function('tgw_cmd_drain_offline', drain_offline)
