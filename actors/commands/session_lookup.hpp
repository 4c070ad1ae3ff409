#pragma once

#include <string>

#include "actors/commands/command_actors.hpp"

namespace tgw::actors::commands {

/// Where the command reader finds the session that holds a device on this instance.
/// The gateway's session directory (actors/gateway/session_directory.hpp) answers it;
/// the reader sees only the one message a session takes from it.
class session_lookup {
 public:
  virtual ~session_lookup() = default;
  /// The session holding `imei` as a command target, or an invalid handle.
  [[nodiscard]] virtual command_target_actor command_target(const std::string& imei) const = 0;
};

}  // namespace tgw::actors::commands
