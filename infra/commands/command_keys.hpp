#pragma once

#include <string>

namespace tgw::infra::commands {

/// Key names fixed by the design (docs/COMMANDS.md).
namespace keys {
inline std::string outbound(const std::string& instance) {
  return "commands:outbound:" + instance;
}
inline constexpr const char* responses = "commands:responses";
inline std::string offline(const std::string& imei) {
  return "commands:offline:" + imei;
}
/// SET of instance ids that created a command stream; the janitor's list of streams
/// to adopt once their instance is dead.
inline constexpr const char* instances_with_streams = "commands:instances";
}  // namespace keys

/// The consumer group every instance reads its own outbound stream with.
inline constexpr const char* consumer_group = "ingest";

}  // namespace tgw::infra::commands
