#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "infra/commands/command_publisher.hpp"

namespace tgw::infra::commands {

/// One command as `tgw command send` sends it.
struct send_request {
  std::string imei;
  std::string text;
  int codec = 12;
  std::chrono::seconds ttl{300};  ///< 0: never expires
  bool queue_if_offline = false;
  int ack_replicas = 0;  ///< Replicas that must hold the command before it counts as sent.
  std::chrono::milliseconds timeout{30'000};  ///< For the whole send, response included.
};

/// How it went.
struct send_outcome {
  publish_result published;  ///< status sent, queued or offline (empty when it failed)
  /// The last WAIT's count with ack_replicas; nullopt without, or when none answered.
  std::optional<std::int64_t> replicas_confirmed;
  /// The command's terminal response, when one came within the timeout. A command the
  /// store lost in a failover ends with failed/store_failover (written by this send).
  std::optional<command_response> response;
  /// A Redis failure that ended the send before any of the above was known.
  std::string error;
};

/// Publishes a command and waits for its outcome so that it ends exactly once, across
/// a Redis failover too. A publish whose reply a lost connection hid is repeated (the
/// same command id: a no-op if it went through). With ack_replicas, the publish is
/// confirmed by WAIT, and while it is not, the store is asked whether it still has the
/// command: a failover to a replica that never had it makes this send end the command
/// with failed/store_failover (tgw_cmd_settle), so that nothing answers it later. While
/// it waits for the response, a lost connection is followed to the new master and the
/// same question asked there.
[[nodiscard]] send_outcome send_command(command_publisher& publisher, const send_request& request,
                                        const std::function<bool()>& cancelled = {});

/// The failure_reason of a command the store lost.
inline constexpr const char* store_failover = "store_failover";
/// The failure_reason of a command whose publish could not be confirmed before the
/// send's timeout, Redis being unreachable or between masters all along.
inline constexpr const char* store_unreachable = "store_unreachable";

}  // namespace tgw::infra::commands
