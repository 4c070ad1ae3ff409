#!lua name=tgw_gateway
-- Persistence of device sessions as Redis Functions. Each call is one atomic step, so
-- the records of a packet, the journal event that accepts them and the device's
-- latest-state projection are written together or not at all: a crash can never
-- leave records stored without the event that lets a resend be recognised.

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Whether timestamp string x (decimal ms, no sign or leading zeros) is later than y.
-- Compared as text: tonumber would run strtod twice per record.
local function later(x, y)
  if #x ~= #y then return #x > #y end
  return x > y
end

-- How many packets accepted before the latest one a resend is still recognised among
-- (the latest is last_fingerprint). Three of 16 hex digits keep the field within 64
-- bytes, so the device hash keeps Redis' compact encoding (hash-max-listpack-value).
local EARLIER_FINGERPRINTS = 3

-- Whether fingerprint fp is in `earlier` (space-separated, newest first). A plain find
-- that makes no string: the gateway's fingerprints are all 16 hex digits, so a match
-- is a whole one.
local function among(earlier, fp)
  return earlier and string.find(earlier, fp, 1, true) ~= nil
end

-- `earlier` with fp in front, the oldest beyond EARLIER_FINGERPRINTS dropped (cut at
-- the list's EARLIER_FINGERPRINTS-th space, found without making substrings).
local function remember(earlier, fp)
  if not earlier or earlier == '' then return fp end
  local list = fp .. ' ' .. earlier
  local at = 0
  for _ = 1, EARLIER_FINGERPRINTS do
    at = string.find(list, ' ', at + 1, true)
    if at == nil then return list end
  end
  return string.sub(list, 1, at - 1)
end

-- Persists one packet. `a` is the ARGV table and `o` the index of the packet's first
-- argument (imei); returns the number of records stored, or -1 for a resend.
-- ARGV from o: imei fingerprint n_records codec, then per record: ts priority lon lat
-- alt angle sats speed event_io io_json generation_type. A packet whose fingerprint
-- is the device's latest accepted one or one of the EARLIER_FINGERPRINTS before it is a
-- resend after a lost ACK: acknowledged again, not stored. Not only the latest: a copy of an older
-- packet can arrive after a newer one, from a session the device has left (an
-- instance paused, or a write retried after a failover) while the device went on
-- elsewhere. Entries carry the format version `v` (docs/TELEMETRY.md).
local function persist_one(ctx, journal, device, a, o)
  local imei, fp, count, codec = a[o], a[o + 1], a[o + 2], a[o + 3]
  local n = tonumber(count)
  local seen = redis.call('HMGET', device, 'last_fingerprint', 'records_total',
                          'earlier_fingerprints')
  if seen[1] == fp or among(seen[3], fp) then
    redis.call('XADD', journal, 'MAXLEN', '~', ctx.journal_maxlen, '*', 'type', 'packet_resent',
               'at_ms', ctx.now, 'instance', ctx.instance, 'fingerprint', fp, 'records', count)
    redis.call('HSET', device, 'last_seen_ms', ctx.now)
    return -1
  end
  local base = o + 3
  local first_ts, last_ts, newest = nil, nil, nil
  for i = 0, n - 1 do
    local r = base + i * 11
    local ts = a[r + 1]
    if ctx.trim_telemetry then
      redis.call('XADD', ctx.stream, 'MAXLEN', '~', ctx.telemetry_maxlen, '*', 'v', '4',
                 'imei', imei, 'codec', codec, 'ts', ts, 'pri', a[r + 2], 'lon', a[r + 3],
                 'lat', a[r + 4], 'alt', a[r + 5], 'ang', a[r + 6], 'sat', a[r + 7],
                 'spd', a[r + 8], 'evt', a[r + 9], 'io', a[r + 10], 'gen', a[r + 11])
    else
      redis.call('XADD', ctx.stream, '*', 'v', '4', 'imei', imei, 'codec', codec, 'ts', ts,
                 'pri', a[r + 2], 'lon', a[r + 3], 'lat', a[r + 4], 'alt', a[r + 5],
                 'ang', a[r + 6], 'sat', a[r + 7], 'spd', a[r + 8], 'evt', a[r + 9],
                 'io', a[r + 10], 'gen', a[r + 11])
    end
    if first_ts == nil then first_ts = ts end
    last_ts = ts
    if newest == nil or later(ts, a[newest + 1]) then newest = r end
  end
  redis.call('XADD', journal, 'MAXLEN', '~', ctx.journal_maxlen, '*', 'type', 'records_accepted',
             'at_ms', ctx.now, 'instance', ctx.instance, 'fingerprint', fp, 'records', count,
             'first_ts', first_ts, 'last_ts', last_ts, 'pos_ts', a[newest + 1],
             'lon', a[newest + 3], 'lat', a[newest + 4], 'speed', a[newest + 8],
             'satellites', a[newest + 7])
  -- One HSET folds the event into the projection, records_total included.
  -- The fingerprint it replaces goes to the front of the earlier ones ('' before the
  -- device's first packet had one).
  local earlier = seen[3] or ''
  if seen[1] then earlier = remember(seen[3], seen[1]) end
  redis.call('HSET', device, 'last_fingerprint', fp, 'earlier_fingerprints', earlier,
             'last_seen_ms', ctx.now,
             'last_ts', a[newest + 1], 'lon', a[newest + 3], 'lat', a[newest + 4],
             'speed', a[newest + 8], 'satellites', a[newest + 7], 'instance', ctx.instance,
             'records_total', (tonumber(seen[2]) or 0) + n)
  return n
end

-- The key shard's hash tag that `key` starts with ('{...}'), or '' on a single node.
local function shard_prefix(key)
  if string.sub(key, 1, 1) ~= '{' then return '' end
  local close = string.find(key, '}', 2, true)
  if close == nil then return '' end
  return string.sub(key, 1, close)
end

-- Session changes of every device of the shard, for readers that follow all devices
-- (the application API's events): a device's journal holds them too, but nobody can
-- follow every journal. Written only for `identified` and `disconnected`, so a packet
-- costs nothing more. Keys built from the call's journal key carry its hash tag, so
-- they are in its slot on a cluster.
local SESSIONS_MAXLEN = 100000

local function session_change(journal, imei, kind, now, instance, extra)
  local prefix = shard_prefix(journal)
  local entry = {'imei', imei, 'type', kind, 'at_ms', now, 'instance', instance}
  for i = 1, #extra do entry[#entry + 1] = extra[i] end
  redis.call('XADD', prefix .. 'telemetry:sessions', 'MAXLEN', '~', SESSIONS_MAXLEN, '*',
             unpack(entry))
  -- Every device that ever identified, by IMEI: the index a reader pages through
  -- instead of scanning the keyspace. One member per device, so it grows with the
  -- fleet, not with connections.
  if kind == 'identified' then redis.call('ZADD', prefix .. 'telemetry:devices', 0, imei) end
end

-- A connection begins (the event `identified`): when, and the records the device had
-- sent before it, so that a reader shows how long it has been connected and what it
-- sent since without reading the journal.
local function mark_connected(device, now)
  local before = redis.call('HGET', device, 'records_total') or '0'
  redis.call('HSET', device, 'connected_ms', now, 'records_at_connect', before)
end

-- Appends one event; ARGV from o: imei type online(-1 keeps it) n_fields, then
-- n_fields field/value pairs.
local function append_one(ctx, journal, device, a, o)
  local entry = {'type', a[o + 1], 'at_ms', ctx.now, 'instance', ctx.instance}
  local nf = tonumber(a[o + 3])
  for i = 1, nf * 2 do entry[#entry + 1] = a[o + 3 + i] end
  redis.call('XADD', journal, 'MAXLEN', '~', ctx.journal_maxlen, '*', unpack(entry))
  if a[o + 2] ~= '-1' then
    redis.call('HSET', device, 'online', a[o + 2], 'last_seen_ms', ctx.now,
               'instance', ctx.instance)
  end
  if a[o + 1] == 'identified' then mark_connected(device, ctx.now) end
  if a[o + 1] == 'identified' or a[o + 1] == 'disconnected' then
    local extra = {}
    for i = 1, nf * 2 do extra[i] = a[o + 3 + i] end
    session_change(journal, a[o], a[o + 1], ctx.now, ctx.instance, extra)
  end
  return 0
end

-- The writer's batch: many devices' packets and events in one call, so the call's own
-- cost and the server clock read are paid once per batch rather than once per packet.
-- Each op is still atomic with its journal event and projection (the whole call is).
-- KEYS: telemetry stream, then journal:{imei} and device:{imei} for each op, in order
-- ARGV: instance journal_maxlen telemetry_maxlen, then ops, each starting with
--       'P' (a packet, see persist_one), 'E' (an event, see append_one) or 'e' (an
--       event for a device whose device:{imei} exists, else nothing)
-- Returns one integer per op: records stored, -1 for a recognised resend, 0 for an
-- event, -2 for an 'e' of an unknown device.
local function persist_batch(keys, args)
  -- Numbers handed to redis.call are formatted anew by every call; what is passed
  -- on stays a string, formatted once per batch at most.
  local ctx = {stream = keys[1], instance = args[1], journal_maxlen = args[2],
               telemetry_maxlen = args[3], trim_telemetry = tonumber(args[3]) > 0,
               now = tostring(now_ms())}
  local out, o, k = {}, 4, 2
  while o <= #args do
    local kind = args[o]
    if kind == 'P' then
      out[#out + 1] = persist_one(ctx, keys[k], keys[k + 1], args, o + 1)
      o = o + 5 + tonumber(args[o + 3]) * 11
    elseif kind == 'E' or kind == 'e' then
      -- 'e': only for a device with state already. An unknown one gets no key: how
      -- many devices a source may bring in is the gateway's budget to spend.
      if kind == 'e' and redis.call('EXISTS', keys[k + 1]) == 0 then
        out[#out + 1] = -2
      else
        out[#out + 1] = append_one(ctx, keys[k], keys[k + 1], args, o + 1)
      end
      o = o + 5 + tonumber(args[o + 4]) * 2
    else
      return redis.error_reply('ERR tgw_persist_batch: bad op ' .. tostring(kind))
    end
    k = k + 2
  end
  return out
end

-- KEYS: journal:{imei}, device:{imei}
-- ARGV: type instance journal_maxlen online(-1 keeps it) field value [field value ...]
local function append_event(keys, args)
  local journal, device = keys[1], keys[2]
  local now = now_ms()
  local entry = {'type', args[1], 'at_ms', now, 'instance', args[2]}
  for i = 5, #args do entry[#entry + 1] = args[i] end
  redis.call('XADD', journal, 'MAXLEN', '~', tonumber(args[3]), '*', unpack(entry))
  if args[4] ~= '-1' then
    redis.call('HSET', device, 'online', args[4], 'last_seen_ms', now, 'instance', args[2])
  end
  if args[1] == 'identified' then mark_connected(device, now) end
  if args[1] == 'identified' or args[1] == 'disconnected' then
    local extra = {}
    for i = 5, #args do extra[#extra + 1] = args[i] end
    session_change(journal, string.match(journal, 'journal:(.*)$') or '', args[1], now, args[2],
                   extra)
  end
  return now
end

redis.register_function('tgw_persist_batch', persist_batch)
redis.register_function('tgw_append_event', append_event)
