#pragma once

#include <caf/fwd.hpp>

#include "actors/node/node_config.hpp"

namespace tgw::actors::node {

/// The emitter role: while the membership actor says this node holds the lease, it
/// pushes `emit_batch` messages every `emit_interval`. Every emit names the lease's
/// epoch and Redis refuses it if the lease has moved on, so a node that was paused
/// past its lease emits nothing when it wakes up.
caf::behavior emitter(caf::event_based_actor* self, const node_config& config,
                      const std::shared_ptr<infra::node::node_store>& store);

}  // namespace tgw::actors::node
