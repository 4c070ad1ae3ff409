#include "infra/health/redis_permissions.hpp"

#include "infra/commands/command_keys.hpp"
#include "infra/redis/shard_agreement.hpp"
#include "infra/registry/registry_keys.hpp"
#include "infra/telemetry/telemetry_keys.hpp"

namespace tgw::infra::health {

std::vector<std::vector<std::string>> gateway_commands(const gateway_usage& u) {
  namespace reg = registry::keys;
  namespace cmd = commands::keys;
  const std::string imei = "356307042441013";
  const std::string other = "another-instance";
  const std::string& p = u.prefix;
  const std::string stream = telemetry::keys::telemetry_stream_in(p);
  const std::string journal = telemetry::keys::journal(imei, p);
  const std::string device = telemetry::keys::device(imei, p);
  const std::string registry = reg::registry_in(p);
  const std::string outbound = cmd::outbound(u.instance, p);
  const std::string responses = cmd::responses_in(p);
  std::vector<std::vector<std::string>> all = {
      // Every connection.
      {"PING"},
      {"CLIENT", "SETNAME", "tgw"},
      // Each store loads its Function library and calls it.
      {"FUNCTION", "LOAD", "REPLACE", "#!lua name=x"},
      // Telemetry writers: tgw_persist_batch.
      {"FCALL", "tgw_persist_batch", "3", stream, journal, device},
      {"TIME"},
      {"XADD", stream, "MAXLEN", "~", "1000", "*", "v", "3"},
      {"XADD", journal, "MAXLEN", "~", "1000", "*", "type", "x"},
      {"HMGET", device, "last_fingerprint"},
      {"HSET", device, "last_seen_ms", "0"},
      // Session changes, and the index of devices, beside identified and disconnected.
      {"XADD", telemetry::keys::sessions_stream_in(p), "MAXLEN", "~", "100000", "*", "imei", imei},
      {"ZADD", telemetry::keys::devices_index_in(p), "0", imei},
      // Registry and heartbeat: tgw_registry_*.
      {"FCALL", "tgw_registry_register", "3", registry, reg::devices(u.instance, p),
       reg::devices(other, p)},
      {"HGET", registry, imei},
      {"HSET", registry, imei, u.instance},
      {"HDEL", registry, imei},
      {"SADD", reg::devices(u.instance, p), imei},
      {"SREM", reg::devices(other, p), imei},
      {"SMISMEMBER", reg::devices(u.instance, p), imei},
      {"EXISTS", reg::heartbeat(other, p)},
      // The start's claim of the instance id, and the heartbeat Functions.
      {"GET", reg::heartbeat(u.instance, p)},
      {"PTTL", reg::heartbeat(u.instance, p)},
      {"SET", reg::heartbeat(u.instance, p), "0", "NX", "EX", "90"},
      {"SET", reg::heartbeat(u.instance, p), "0", "EX", "90"},
      {"DEL", reg::heartbeat(u.instance, p)},
      {"SADD", reg::known_instances_in(p), u.instance},
      {"SREM", reg::known_instances_in(p), other},
      {"SMEMBERS", reg::known_instances_in(p)},
      // The janitor.
      {"SSCAN", reg::devices(other, p), "0", "COUNT", "1000"},
      {"UNLINK", reg::devices(other, p)},
      // Commands: the reader, the responder, and the janitor adopting a dead stream.
      {"XGROUP", "CREATE", outbound, commands::consumer_group, "0", "MKSTREAM"},
      {"SADD", cmd::instances_with_streams_in(p), u.instance},
      {"SMEMBERS", cmd::instances_with_streams_in(p)},
      {"SREM", cmd::instances_with_streams_in(p), other},
      {"XREADGROUP", "GROUP", commands::consumer_group, u.instance, "COUNT", "16", "BLOCK", "1000",
       "STREAMS", outbound, ">"},
      {"FCALL", "tgw_cmd_resolve", "3", outbound, responses, journal},
      {"XRANGE", outbound, "-", "+", "COUNT", "1"},
      {"XACK", outbound, commands::consumer_group, "0-1"},
      {"XDEL", outbound, "0-1"},
      {"XADD", responses, "MAXLEN", "~", "1000", "*", "command_id", "x"},
      {"XREVRANGE", responses, "+", "-", "COUNT", "1"},
      {"XADD", cmd::outbound(other, p), "NOMKSTREAM", "*", "command_id", "x"},
      {"XLEN", cmd::outbound(other, p)},
      {"DEL", cmd::outbound(other, p)},
      {"LRANGE", cmd::offline(imei, p), "0", "-1"},
      {"DEL", cmd::offline(imei, p)},
      // Retention's watch of the consumer groups.
      {"XLEN", stream},
      {"MEMORY", "USAGE", stream},
      {"XINFO", "GROUPS", stream},
      {"XPENDING", stream, "sink"},
      {"XRANGE", stream, "-", "+", "COUNT", "1"},
  };
  if (u.ack_replicas > 0) all.push_back({"WAIT", "1", "1000"});
  if (u.retention_trims) {
    all.push_back({"XTRIM", stream, "MINID", "0-1"});
    all.push_back({"XTRIM", stream, "MAXLEN", "1000000"});  // the floor of a stream without a group
  }
  if (u.allowlist_redis)
    all.push_back({"SSCAN", registry::keys::allowed_devices, "0", "COUNT", "10000"});
  if (u.janitor_scans) all.push_back({"HSCAN", registry, "0", "COUNT", "1000"});
  if (u.selects_db) all.push_back({"SELECT", "1"});
  if (u.sentinel) all.push_back({"ROLE"});
  if (u.cluster) {
    all.push_back({"CLUSTER", "SHARDS"});
    all.push_back({"GET", redis::key_shards_key});
    all.push_back({"XREAD", "COUNT", "1", "BLOCK", "1000", "STREAMS", cmd::wake(u.instance), "$"});
    all.push_back({"DEL", cmd::wake(other)});
  }
  return all;
}

permission_check check_permissions(redis::connection& conn, const std::string& user,
                                   const std::vector<std::vector<std::string>>& commands) {
  permission_check out;
  for (const std::vector<std::string>& argv : commands) {
    std::vector<std::string_view> dry = {"ACL", "DRYRUN", user};
    dry.insert(dry.end(), argv.begin(), argv.end());
    const redis::value v = conn.command_on_master(0, dry);
    if (v.is_error()) {
      // Not a verdict on the command: this user may not ask (NOPERM on ACL|DRYRUN), or
      // the server is older than Redis 7, or unreachable.
      out.why_unchecked = v.text;
      return out;
    }
    out.checked = true;
    if (v.text == "OK") continue;
    std::string name = argv.front();
    if (argv.size() > 1 && (name == "CLIENT" || name == "FUNCTION" || name == "XGROUP" ||
                            name == "XINFO" || name == "MEMORY" || name == "CLUSTER"))
      name += "|" + argv[1];
    for (char& c : name) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    const bool key = v.text.find(" key") != std::string::npos;
    out.refused = "the Redis ACL user '" + user + "' may not run " + argv.front() +
                  (argv.size() > 1 ? " " + argv[1] : std::string()) + " as the gateway does (" +
                  v.text +
                  "): " + (key ? std::string("grant it that key pattern") : "add +" + name) +
                  " (docs/OPERATIONS.md, \"Redis ACLs\")";
    return out;
  }
  return out;
}

}  // namespace tgw::infra::health
