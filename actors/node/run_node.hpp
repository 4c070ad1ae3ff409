#pragma once

#include "infra/cli/node_command.hpp"

namespace tgw::actors::node {

/// Runs one cluster node (membership, emitter and worker actors, each on its own
/// thread with its own Redis connection) until SIGINT or SIGTERM, then leaves the
/// cluster cleanly. Returns the process exit code.
int run_node(const infra::node_options& options, const infra::redis::endpoint& where);

}  // namespace tgw::actors::node
