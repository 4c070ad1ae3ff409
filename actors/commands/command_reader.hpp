#pragma once

#include <chrono>
#include <memory>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "actors/commands/command_config.hpp"
#include "actors/commands/session_directory.hpp"
#include "infra/commands/command_store.hpp"
#include "infra/metrics/gateway_counters.hpp"

namespace tgw::actors::commands {

/// The stream-reader actor: it creates the group, re-reads this consumer's pending
/// entries, then loops on XREADGROUP ... BLOCK over its own connection, turning each
/// entry into a message to the target device's session. Entries it cannot deliver
/// are answered here and acknowledged in the same atomic step: malformed
/// (failed/malformed: ...), expired (failed/expired_before_delivery), device not held
/// (failed/socket_closed). After any Redis failure it re-reads its pending entries
/// first, skipping those its sessions already hold. An exit message is handled
/// between two reads, so the entry in hand is always finished. Spawn it detached.
caf::behavior command_reader(caf::event_based_actor* self, const reader_config& config,
                             const std::shared_ptr<infra::commands::command_store>& store,
                             const std::shared_ptr<const session_directory>& directory,
                             const std::shared_ptr<infra::metrics::gateway_counters>& counters);

}  // namespace tgw::actors::commands
