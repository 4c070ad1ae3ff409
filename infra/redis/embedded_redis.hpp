#pragma once

#include <string>

#include "infra/redis/redis_url.hpp"

namespace tgw::infra::redis {

/// A private redis-server for `tgw serve` run without --redis: it listens only on a
/// unix socket in `data_dir` (no TCP port), keeps an append-only file there so
/// acknowledged records survive a restart, and is shut down with the gateway.
class embedded_redis {
 public:
  /// Starts the server and waits until it answers. Throws std::runtime_error with a
  /// clear message when redis-server is missing or does not come up.
  explicit embedded_redis(const std::string& data_dir);
  ~embedded_redis();
  embedded_redis(const embedded_redis&) = delete;
  embedded_redis& operator=(const embedded_redis&) = delete;

  [[nodiscard]] const endpoint& where() const noexcept { return where_; }
  /// The server's process id.
  [[nodiscard]] int pid() const noexcept { return pid_; }
  /// True while the server process runs.
  [[nodiscard]] bool running();

 private:
  endpoint where_;
  int pid_ = -1;
};

}  // namespace tgw::infra::redis
