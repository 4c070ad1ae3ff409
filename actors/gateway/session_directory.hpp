#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "actors/commands/session_lookup.hpp"
#include "actors/gateway/gateway_actors.hpp"

namespace tgw::actors::gateway {

/// Which session actor holds which IMEI on this instance. Sessions attach when the
/// handshake is accepted and detach when the connection closes; the command reader
/// looks targets up. A lock rather than an actor: the reader spends most of its time
/// blocked in XREADGROUP, so a directory in its mailbox would answer a second late,
/// and the lock is held only for a map operation. The reader sees it as a
/// commands::session_lookup; the allowlist keeper reads the whole session handles.
class session_directory final : public commands::session_lookup {
 public:
  /// `session` now holds `imei`, replacing an older connection of the same device.
  void attach(const std::string& imei, const session_actor& session);
  /// Forgets `imei` only if `session` still holds it: a newer connection keeps it.
  void detach(const std::string& imei, const session_actor& session);
  /// The session holding `imei`, or an invalid handle.
  [[nodiscard]] session_actor find(const std::string& imei) const;
  [[nodiscard]] commands::command_target_actor command_target(
      const std::string& imei) const override;
  [[nodiscard]] std::size_t size() const;
  /// Every session held now, with its IMEI.
  [[nodiscard]] std::vector<std::pair<std::string, session_actor>> snapshot() const;

 private:
  mutable std::mutex mutex_;
  /// By codecs::imei_key: an entry for every device, so a 32-byte node, not 64.
  std::unordered_map<std::uint64_t, session_actor> sessions_;
};

}  // namespace tgw::actors::gateway
