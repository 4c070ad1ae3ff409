#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>

#include "actors/commands/command_actors.hpp"
#include "actors/commands/command_config.hpp"
#include "actors/commands/session_lookup.hpp"
#include "actors/domain/failure_log.hpp"
#include "actors/ports/command_store.hpp"
#include "infra/metrics/gateway_counters.hpp"

namespace tgw::actors::commands {

/// What the command reader keeps between messages.
struct reader_state {
  static constexpr const char* name = "command-reader";
  // Set when the actor starts: CAF 0.17 builds a state from the actor alone, and a
  // failure log takes its settings at construction.
  std::optional<domain::failure_log> log;
  bool caught_up = false;  ///< Pending entries re-read since the last failure.
  std::chrono::milliseconds backoff{100};
  /// Entries handed to sessions and not yet seen resolved: a pending re-read skips
  /// them, so a reconnect never delivers a command twice.
  std::unordered_set<std::string> with_sessions;
};

/// The stream-reader actor: it creates the group, re-reads this consumer's pending
/// entries, then loops on XREADGROUP ... BLOCK over its own connection, turning each
/// entry into a message to the target device's session. Entries it cannot deliver
/// are answered here and acknowledged in the same atomic step: malformed
/// (failed/malformed: ...), expired (failed/expired_before_delivery), device not held
/// (failed/socket_closed). After any Redis failure it re-reads its pending entries
/// first, skipping those its sessions already hold. An exit message is handled
/// between two reads, so the entry in hand is always finished. Spawn it detached.
command_reader_actor::behavior_type command_reader(
    command_reader_actor::stateful_pointer<reader_state> self, const reader_config& config,
    const std::shared_ptr<ports::command_store>& store,
    const std::shared_ptr<const session_lookup>& sessions,
    const std::shared_ptr<infra::metrics::gateway_counters>& counters);

}  // namespace tgw::actors::commands
