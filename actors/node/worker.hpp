#pragma once

#include <caf/fwd.hpp>

#include "actors/node/node_config.hpp"

namespace tgw::actors::node {

/// The worker role: while this node is not the emitter it takes messages from the
/// queue into its own processing list, "handles" each for a random time, and
/// finishes it as handled or, for `error_rate` of them, as failed into the error
/// list. A message killed mid-way stays in the processing list until a health check
/// returns it to the queue, so every message is finished exactly once.
caf::behavior worker(caf::event_based_actor* self, const node_config& config,
                     const std::shared_ptr<infra::node::node_store>& store);

}  // namespace tgw::actors::node
