#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "infra/app/node_plan.hpp"
#include "infra/redis/connection.hpp"

namespace CLI {
class App;
}

namespace tgw::infra {

/// Settings of `tgw node`, from flags, TGW_* environment variables or the config file.
struct node_options {
  std::string redis_url;         ///< Wins over rhost/rport/rdb when set.
  redis::tls_options redis_tls;  ///< --redis-tls-*, for a rediss URL.
  std::string rhost = "127.0.0.1";
  std::uint16_t rport = 6379;
  int rdb = 0;
  bool get_errors = false;
  std::string id;  ///< Defaults to host-pid-random.
  int interval_ms = 500;
  int batch = 0;  ///< Messages per emit; 0 means 1, or 100 when interval_ms is 0.
  int work_ms = 100;
  double error_rate = 0.05;
  int health_ms = 200;
  int inactive_ms = 1000;
  int ttl_ms = 10000;
  bool record_handled = false;
  std::int64_t max_messages = 0;
  std::int64_t queue_limit = 10000;
  std::string log_level = "info";
  std::string log_format = "text";

  /// The Redis endpoint these options name, or nullopt with `error`.
  [[nodiscard]] std::optional<redis::endpoint> endpoint(std::string& error) const;
};

/// Runs the node of a plan until SIGINT/SIGTERM; returns the exit code
/// (infra/app/run_node.hpp).
using node_runner = std::function<int(const app::node_plan&)>;

/// Adds `tgw node`. `--getErrors` is served here; a running node is `run`.
void add_node_command(CLI::App& app, const node_runner& run, int& exit_code);

}  // namespace tgw::infra
