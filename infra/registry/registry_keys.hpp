#pragma once

#include <string>
#include <string_view>

namespace tgw::infra::registry {

/// Key names fixed by the design (other systems read them). `prefix` is the key
/// shard's hash tag on a Redis Cluster and empty on a single node (redis::key_shards):
/// a cluster holds one registry, reverse index and heartbeat per shard.
namespace keys {
inline constexpr const char* registry = "connections:registry";
inline constexpr const char* known_instances = "instances:known";
/// SET of the allowed IMEIs when `tgw serve --allowlist-redis`; one set shared by every
/// instance on the same Redis.
inline constexpr const char* allowed_devices = "devices:allowed";
inline std::string heartbeat(const std::string& id, std::string_view prefix = {}) {
  return std::string(prefix).append("instance:heartbeat:").append(id);
}
inline std::string devices(const std::string& id, std::string_view prefix = {}) {
  return std::string(prefix).append("instance:devices:").append(id);
}
inline std::string registry_in(std::string_view prefix) {
  return std::string(prefix).append(registry);
}
inline std::string known_instances_in(std::string_view prefix) {
  return std::string(prefix).append(known_instances);
}
}  // namespace keys

}  // namespace tgw::infra::registry
