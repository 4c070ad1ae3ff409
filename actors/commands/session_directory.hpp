#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "actors/gateway/gateway_actors.hpp"

namespace tgw::actors::commands {

/// Which session actor holds which IMEI on this instance. Sessions attach when the
/// handshake is accepted and detach when the connection closes; the command reader
/// looks targets up. A lock rather than an actor: the reader spends most of its time
/// blocked in XREADGROUP, so a directory in its mailbox would answer a second late,
/// and the lock is held only for a map operation.
class session_directory {
 public:
  /// `session` now holds `imei`, replacing an older connection of the same device.
  void attach(const std::string& imei, const gateway::session_actor& session);
  /// Forgets `imei` only if `session` still holds it: a newer connection keeps it.
  void detach(const std::string& imei, const gateway::session_actor& session);
  /// The session holding `imei`, or an invalid handle.
  [[nodiscard]] gateway::session_actor find(const std::string& imei) const;
  [[nodiscard]] std::size_t size() const;
  /// Every session held now, with its IMEI.
  [[nodiscard]] std::vector<std::pair<std::string, gateway::session_actor>> snapshot() const;

 private:
  mutable std::mutex mutex_;
  /// By codecs::imei_key: an entry for every device, so a 32-byte node, not 64.
  std::unordered_map<std::uint64_t, gateway::session_actor> sessions_;
};

}  // namespace tgw::actors::commands
