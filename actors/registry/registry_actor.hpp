#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "actors/domain/failure_log.hpp"
#include "actors/ports/command_store.hpp"
#include "actors/ports/registry_store.hpp"
#include "actors/registry/registry_actors.hpp"
#include "actors/registry/registry_config.hpp"
#include "infra/metrics/gateway_counters.hpp"

namespace tgw::actors::registry {

/// What the registry actor keeps between messages.
struct registry_state {
  static constexpr const char* name = "registry";
  // Set when the actor starts: CAF 0.17 builds a state from the actor alone, and a
  // failure log takes its settings at construction.
  std::optional<domain::failure_log> registry_log;
  std::optional<domain::failure_log> heartbeat_log;
  // Live sessions per device on this instance: a device that reconnects here may be
  // registered by its new session before its old connection is noticed closed, and
  // the old session's unregister must not remove it then.
  // By codecs::imei_key: an entry for every device, so a 32-byte node, not 64.
  std::unordered_map<std::uint64_t, int> held;
  bool repair_owed = false;
  bool down = false;
  // Another process with this instance id holds the heartbeat: its value, and when
  // that was last said at error.
  std::string taken_by;
  domain::clock::time_point taken_said_at{};

  [[nodiscard]] std::vector<std::string> held_imeis() const;
};

/// The registry actor: the only writer of this instance's registry entries, so
/// register and unregister of one device can never overtake each other. It keeps the
/// set of devices it holds; when a write fails (Redis down) the device stays accepted,
/// teltonika_registry_failures_total counts it, and once Redis answers again every
/// held device is re-asserted. The same repair runs when the heartbeat finds its own
/// key missing (the instance had been presumed dead). Each heartbeat it also checks
/// that every held device is still in this instance's reverse index, and puts back
/// the entries a stale registration elsewhere took and then deleted. A heartbeat held
/// by another process (a second gateway started with the same instance id) is left to
/// it and said at error, again every failure-log interval while it lasts, and the
/// instance is not ready (`heartbeat_taken`). Spawn it detached.
registry_self_actor::behavior_type registry(
    registry_self_actor::stateful_pointer<registry_state> self, const registry_config& config,
    const std::shared_ptr<ports::registry_store>& store,
    const std::shared_ptr<infra::metrics::gateway_counters>& counters);

/// The janitor: every interval, evicts the registry entries of instances whose
/// heartbeat expired, owner-checked, and counts only the deletes it made. It runs in
/// every instance; its effects are idempotent. With `commands`, it also adopts the
/// command streams of dead instances: every entry left there, read or unread, gets one
/// outcome (re-routed to the device's live owner, or failed/instance_lost or
/// expired_before_delivery) and the stream is removed. Spawn it detached.
janitor_actor::behavior_type janitor(
    janitor_actor::pointer self, const janitor_config& config,
    const std::shared_ptr<ports::registry_store>& store,
    const std::shared_ptr<infra::metrics::gateway_counters>& counters,
    const std::shared_ptr<ports::command_store>& commands = {});

}  // namespace tgw::actors::registry
