#pragma once

#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <utility>

#include "actors/commands/command_actors.hpp"
#include "actors/commands/command_config.hpp"
#include "actors/domain/failure_log.hpp"
#include "actors/ports/command_store.hpp"
#include "infra/metrics/gateway_counters.hpp"

namespace tgw::actors::commands {

/// What the command responder keeps between messages.
struct responder_state {
  static constexpr const char* name = "command-responder";
  // Set when the actor starts: CAF 0.17 builds a state from the actor alone, and a
  // failure log takes its settings at construction.
  std::optional<domain::failure_log> log;
  /// Outcomes not yet published, oldest first (including ones Redis refused).
  std::deque<std::pair<ports::command_entry, ports::resolution>> unpublished;
  bool flush_queued = false;
  bool backing_off = false;
  bool settle_queued = false;
  std::chrono::milliseconds backoff{100};
};

/// Publishes the terminal responses of commands that sessions resolved, each in one
/// atomic step with its journal event and the XACK (tgw_cmd_resolve), and moves a
/// device's offline
/// queue into this instance's stream when it connects. It has its own Redis connection
/// because the reader's sits in a blocking XREADGROUP. While Redis is down it keeps
/// the resolutions and retries them with backoff, in order: the entries stay pending
/// in Redis meanwhile, so a crash loses nothing (they are re-read and re-delivered).
/// Spawn it detached: the store blocks.
command_responder_self_actor::behavior_type command_responder(
    command_responder_self_actor::stateful_pointer<responder_state> self,
    const responder_config& config, const std::shared_ptr<ports::command_store>& store,
    const std::shared_ptr<infra::metrics::gateway_counters>& counters);

}  // namespace tgw::actors::commands
