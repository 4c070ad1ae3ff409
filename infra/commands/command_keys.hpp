#pragma once

#include <string>
#include <string_view>

namespace tgw::infra::commands {

/// Key names fixed by the design (docs/COMMANDS.md). `prefix` is the key shard's hash
/// tag on a Redis Cluster and empty on a single node (redis::key_shards): a cluster
/// holds one outbound stream per instance and one responses stream in each shard.
namespace keys {
inline std::string outbound(const std::string& instance, std::string_view prefix = {}) {
  return std::string(prefix).append("commands:outbound:").append(instance);
}
inline constexpr const char* responses = "commands:responses";
inline std::string responses_in(std::string_view prefix) {
  return std::string(prefix).append(responses);
}
inline std::string offline(const std::string& imei, std::string_view prefix = {}) {
  return std::string(prefix).append("commands:offline:").append(imei);
}
/// A published command's marker (tgw_commands: its state until and after its
/// response), in its device's key shard.
inline std::string marker(const std::string& command_id, std::string_view prefix = {}) {
  return std::string(prefix).append("commands:id:").append(command_id);
}
/// STRING: what the first request with an application's idempotency key decided
/// (`command_id|fingerprint|status`), in its device's key shard; `digest` is the
/// SHA-256 of the publisher, the device and the key (tgw api).
inline std::string idempotency(const std::string& digest, std::string_view prefix = {}) {
  return std::string(prefix).append("commands:idempotency:").append(digest);
}
/// STRING: the device of a command published through the API, and when
/// (`imei|published_ms`), so that it can be found by its id alone; in the key shard of
/// the command id.
inline std::string by_id(const std::string& command_id, std::string_view prefix = {}) {
  return std::string(prefix).append("commands:api:").append(command_id);
}
/// SET of instance ids that created a command stream; the janitor's list of streams
/// to adopt once their instance is dead.
inline constexpr const char* instances_with_streams = "commands:instances";
inline std::string instances_with_streams_in(std::string_view prefix) {
  return std::string(prefix).append(instances_with_streams);
}
/// Cluster only: a one-entry stream a publisher adds to after it sends the instance a
/// command. The instance cannot block on the outbound streams of all its shards in one
/// read (they are in different slots), so it blocks here and then reads them all.
inline std::string wake(const std::string& instance) {
  return "commands:wake:" + instance;
}
}  // namespace keys

/// The consumer group every instance reads its own outbound stream with.
inline constexpr const char* consumer_group = "ingest";

}  // namespace tgw::infra::commands
