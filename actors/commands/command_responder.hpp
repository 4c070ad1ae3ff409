#pragma once

#include <chrono>
#include <memory>

#include <caf/fwd.hpp>

#include "actors/commands/command_config.hpp"
#include "infra/commands/command_store.hpp"
#include "infra/metrics/gateway_counters.hpp"

namespace tgw::actors::commands {

/// Publishes the terminal responses of commands that sessions resolved, each in one
/// atomic step with its journal event and the XACK (tgw_cmd_resolve), and moves a
/// device's offline
/// queue into this instance's stream when it connects. It has its own Redis connection
/// because the reader's sits in a blocking XREADGROUP. While Redis is down it keeps
/// the resolutions and retries them with backoff, in order: the entries stay pending
/// in Redis meanwhile, so a crash loses nothing (they are re-read and re-delivered).
/// Spawn it detached: the store blocks.
caf::behavior command_responder(caf::event_based_actor* self, const responder_config& config,
                                const std::shared_ptr<infra::commands::command_store>& store,
                                const std::shared_ptr<infra::metrics::gateway_counters>& counters);

}  // namespace tgw::actors::commands
