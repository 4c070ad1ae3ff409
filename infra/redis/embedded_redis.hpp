#pragma once

#include <string>

#include "infra/redis/redis_url.hpp"

namespace tgw::infra::redis {

/// A private redis-server for `tgw serve` run without --redis: it listens only on a
/// unix socket in `data_dir` (no TCP port), keeps an append-only file there so
/// acknowledged records survive a restart, and is shut down with the gateway.
///
/// The data directory is locked (`tgw.lock`, flock) for as long as the gateway or the
/// server lives: a second `tgw serve` on it fails at once instead of starting a second
/// server on the same append-only file. The server is in its own process group, so a
/// signal sent to the gateway's group (Ctrl-C, `timeout`) reaches only the gateway,
/// which stops the server last; and it gets SIGTERM if the thread that started it dies
/// (PR_SET_PDEATHSIG), so no server outlives a killed gateway. Construct it on the
/// thread that lives as long as the gateway (the main thread).
class embedded_redis {
 public:
  /// Locks the directory, starts the server and waits until it answers. Throws
  /// std::runtime_error with a clear message when the directory is unusable or held by
  /// another process, redis-server is missing, or it does not come up.
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
  void start(const std::string& dir);
  void stop();

  endpoint where_;
  int lock_fd_ = -1;
  int pid_ = -1;
};

}  // namespace tgw::infra::redis
