#pragma once

#include <string>

#include "infra/http/server_limits.hpp"

namespace CLI {
class App;
}

namespace tgw::infra {

/// Adds the metrics endpoint's connection caps to `cmd`: --metrics-max-connections and
/// --metrics-per-address-connections, read into `limits` (whose values are the
/// defaults) and from <env_prefix>_METRICS_MAX_CONNECTIONS and
/// <env_prefix>_METRICS_PER_ADDRESS_CONNECTIONS too.
void add_metrics_limit_options(CLI::App* cmd, http::server_limits& limits,
                               const std::string& env_prefix = "TGW");

}  // namespace tgw::infra
