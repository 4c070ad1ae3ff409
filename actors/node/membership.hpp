#pragma once

#include <caf/fwd.hpp>

#include "actors/node/node_config.hpp"

namespace tgw::actors::node {

/// The membership role: joins the cluster, runs the health check every
/// `health_interval`, and tells `roles` (emitter and worker) whenever this node gains
/// or loses the emitter lease, with the lease's epoch. On exit it leaves the cluster,
/// returning its unfinished messages and passing the lease on.
caf::behavior membership(caf::event_based_actor* self, const node_config& config,
                         const std::shared_ptr<infra::node::node_store>& store,
                         const std::vector<caf::actor>& roles);

}  // namespace tgw::actors::node
