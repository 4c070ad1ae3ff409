#pragma once

#include "infra/app/gateway_plan.hpp"

namespace tgw::infra::app {

/// `tgw serve`: runs one gateway instance until SIGINT/SIGTERM. io threads accept and
/// frame device connections, one session actor per connection, telemetry writer shards
/// persist. On the signal it stops accepting, lets in-flight packets finish (bounded by
/// the drain timeout), closes the connections and exits. Returns the exit code: 0 after
/// a clean stop, 2 for a setup it refuses, 1 when Redis or a port cannot serve it or
/// the private redis-server could not be kept running.
[[nodiscard]] int run_gateway(const gateway_plan& plan);

}  // namespace tgw::infra::app
