#include "infra/cli/metrics_limit_options.hpp"

#include <CLI/CLI.hpp>

namespace tgw::infra {

void add_metrics_limit_options(CLI::App* cmd, http::server_limits& limits,
                               const std::string& env_prefix) {
  cmd->add_option("--metrics-max-connections", limits.max_connections,
                  "Connections the metrics endpoint holds at once; more are closed on accept")
      ->envname(env_prefix + "_METRICS_MAX_CONNECTIONS")
      ->check(CLI::Range(1, 65'536))
      ->capture_default_str();
  cmd->add_option("--metrics-per-address-connections", limits.max_connections_per_address,
                  "Connections one source address may hold to the metrics endpoint at once; "
                  "more are closed on accept, so one client cannot take the probes' slots "
                  "(0: no cap)")
      ->envname(env_prefix + "_METRICS_PER_ADDRESS_CONNECTIONS")
      ->check(CLI::Range(0, 65'536))
      ->capture_default_str();
}

}  // namespace tgw::infra
