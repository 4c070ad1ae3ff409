#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "infra/redis/connection.hpp"

namespace tgw::test {

/// A throw-away redis-server on a free loopback port, started in the constructor and
/// stopped in the destructor. stop() and start() again simulate an outage on the same
/// port; the data does not survive (no persistence), as after a failover to an empty
/// replica.
class redis_server {
 public:
  /// With `durable`, every write is fsynced to an append-only file before the reply,
  /// so stop() (SIGKILL) and start() keep all acknowledged data.
  explicit redis_server(bool durable = false);
  ~redis_server();
  redis_server(const redis_server&) = delete;
  redis_server& operator=(const redis_server&) = delete;

  void start();
  void stop();
  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
  [[nodiscard]] infra::redis::endpoint endpoint() const;
  /// A fresh connection to this server.
  [[nodiscard]] infra::redis::connection connect() const;

 private:
  std::uint16_t port_ = 0;
  int pid_ = -1;
  std::string dir_;
  bool durable_ = false;
};

/// A free TCP port on 127.0.0.1 (bound and released; good enough for tests).
std::uint16_t free_port();

/// A user to run a child process as (setuid/setgid after fork).
struct run_as {
  unsigned uid = 0;
  unsigned gid = 0;
};

/// Starts `argv` (searched in PATH), its stdout and stderr appended to `log_path`, with
/// no signal blocked, as `user` when given; returns its pid.
int spawn_process(const std::vector<std::string>& argv, const std::string& log_path,
                  std::optional<run_as> user = std::nullopt);

/// A child process running `argv`, its output appended to `log_path`.
class child_process {
 public:
  child_process(const std::vector<std::string>& argv, const std::string& log_path);
  ~child_process();
  child_process(child_process&& other) noexcept;
  child_process& operator=(child_process&&) = delete;
  child_process(const child_process&) = delete;

  void signal(int sig) const;
  /// Waits for the process to end and returns its exit code (128+signal if killed).
  int wait();
  [[nodiscard]] bool running();
  [[nodiscard]] int pid() const noexcept { return pid_; }

 private:
  int pid_ = -1;
  int status_ = -1;
};

}  // namespace tgw::test
