#!lua name=tgw_gateway
-- Persistence of device sessions as Redis Functions. Each call is one atomic step, so
-- the records of a packet, the journal event that accepts them and the device's
-- latest-state projection are written together or not at all: a crash can never
-- leave records stored without the event that lets a resend be recognised.

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- KEYS: telemetry stream, journal:{imei}, device:{imei}
-- ARGV: imei instance fingerprint journal_maxlen telemetry_maxlen n_records,
--       then per record: ts priority lon lat alt angle sats speed event_io io_json
-- Returns {stored, duplicate}: a packet whose fingerprint equals the last accepted
-- one is a resend after a lost ACK: it is acknowledged again but not stored.
local function persist_packet(keys, args)
  local stream, journal, device = keys[1], keys[2], keys[3]
  local imei, instance, fp = args[1], args[2], args[3]
  local journal_maxlen, telemetry_maxlen = tonumber(args[4]), tonumber(args[5])
  local n = tonumber(args[6])
  local now = now_ms()
  if redis.call('HGET', device, 'last_fingerprint') == fp then
    redis.call('XADD', journal, 'MAXLEN', '~', journal_maxlen, '*', 'type', 'packet_resent',
               'at_ms', now, 'instance', instance, 'fingerprint', fp, 'records', n)
    redis.call('HSET', device, 'last_seen_ms', now)
    return {0, 1}
  end
  local base = 6
  local first_ts, last_ts, newest = nil, nil, nil
  for i = 0, n - 1 do
    local o = base + i * 10
    local ts = args[o + 1]
    if telemetry_maxlen > 0 then
      redis.call('XADD', stream, 'MAXLEN', '~', telemetry_maxlen, '*', 'imei', imei, 'ts', ts,
                 'pri', args[o + 2], 'lon', args[o + 3], 'lat', args[o + 4], 'alt', args[o + 5],
                 'ang', args[o + 6], 'sat', args[o + 7], 'spd', args[o + 8],
                 'evt', args[o + 9], 'io', args[o + 10])
    else
      redis.call('XADD', stream, '*', 'imei', imei, 'ts', ts, 'pri', args[o + 2],
                 'lon', args[o + 3], 'lat', args[o + 4], 'alt', args[o + 5], 'ang', args[o + 6],
                 'sat', args[o + 7], 'spd', args[o + 8], 'evt', args[o + 9], 'io', args[o + 10])
    end
    if first_ts == nil then first_ts = ts end
    last_ts = ts
    if newest == nil or tonumber(ts) > tonumber(args[newest + 1]) then newest = o end
  end
  redis.call('XADD', journal, 'MAXLEN', '~', journal_maxlen, '*', 'type', 'records_accepted',
             'at_ms', now, 'instance', instance, 'fingerprint', fp, 'records', n,
             'first_ts', first_ts, 'last_ts', last_ts, 'pos_ts', args[newest + 1],
             'lon', args[newest + 3], 'lat', args[newest + 4], 'speed', args[newest + 8])
  redis.call('HSET', device, 'last_fingerprint', fp, 'last_seen_ms', now,
             'last_ts', args[newest + 1], 'lon', args[newest + 3], 'lat', args[newest + 4],
             'speed', args[newest + 8], 'instance', instance)
  redis.call('HINCRBY', device, 'records_total', n)
  return {n, 0}
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
  return now
end

redis.register_function('tgw_persist_packet', persist_packet)
redis.register_function('tgw_append_event', append_event)
