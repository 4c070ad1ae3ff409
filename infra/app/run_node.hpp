#pragma once

#include "infra/app/node_plan.hpp"

namespace tgw::infra::app {

/// `tgw node`: runs one cluster node (membership, emitter and worker actors, each on
/// its own thread with its own Redis connection) until SIGINT or SIGTERM, then leaves
/// the cluster cleanly. Returns the process exit code.
[[nodiscard]] int run_node(const node_plan& plan);

}  // namespace tgw::infra::app
