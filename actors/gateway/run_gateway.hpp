#pragma once

#include "infra/cli/serve_command.hpp"

namespace tgw::actors::gateway {

/// Runs one gateway instance until SIGINT/SIGTERM: io threads accept and frame device
/// connections, one session actor per connection, telemetry writer shards persist.
/// On the signal it stops accepting, lets in-flight packets finish (bounded by the
/// drain timeout), closes the connections and exits 0. Returns the exit code.
int run_gateway(const infra::serve_options& options);

}  // namespace tgw::actors::gateway
