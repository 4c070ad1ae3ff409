#pragma once

#include <string>
#include <string_view>

namespace tgw::infra::telemetry {

/// Key names (documented in docs/GATEWAY.md).
namespace keys {
inline constexpr const char* telemetry_stream = "telemetry:records";
/// `prefix` is the key shard's hash tag on a Redis Cluster, empty on a single node
/// (redis::key_shards).
inline std::string journal(const std::string& imei, std::string_view prefix = {}) {
  std::string key(prefix);
  return key.append("journal:").append(imei);
}
inline std::string device(const std::string& imei, std::string_view prefix = {}) {
  std::string key(prefix);
  return key.append("device:").append(imei);
}
inline std::string telemetry_stream_in(std::string_view prefix) {
  std::string key(prefix);
  return key.append(telemetry_stream);
}
/// STREAM of every device's session changes (`identified`, `disconnected`) in a key
/// shard, with the device's `imei`; written by the gateway's Functions beside the
/// journal event (docs/events.md).
inline std::string sessions_stream_in(std::string_view prefix) {
  return std::string(prefix).append("telemetry:sessions");
}
/// ZSET of every device of a key shard that ever identified, all scores 0, so that a
/// reader pages through it by IMEI (ZRANGE BYLEX).
inline std::string devices_index_in(std::string_view prefix) {
  return std::string(prefix).append("telemetry:devices");
}
}  // namespace keys

}  // namespace tgw::infra::telemetry
