#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "infra/redis/connection.hpp"
#include "tests/support/redis_tls.hpp"

namespace tgw::test {

/// How a test's redis-server speaks: plain, TLS only (redis_tls_files' certificates),
/// or TLS that also asks every client for a certificate (tls-auth-clients yes).
enum class redis_transport { plain, tls, tls_client_certificates };

/// A throw-away redis-server on a free loopback port, started in the constructor and
/// stopped in the destructor. stop() and start() again simulate an outage on the same
/// port; the data does not survive (no persistence), as after a failover to an empty
/// replica.
class redis_server {
 public:
  /// With `durable`, every write is fsynced to an append-only file before the reply,
  /// so stop() (SIGKILL) and start() keep all acknowledged data.
  explicit redis_server(bool durable = false,
                        redis_transport transport = over_tls ? redis_transport::tls
                                                             : redis_transport::plain);
  ~redis_server();
  redis_server(const redis_server&) = delete;
  redis_server& operator=(const redis_server&) = delete;

  void start();
  void stop();
  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
  /// Its address, with the TLS options a client needs to verify it.
  [[nodiscard]] infra::redis::endpoint endpoint() const;
  /// The --redis URL of a tgw process (redis:// or rediss://), and the flags that go
  /// with it (the --redis-tls-* options; empty for a plain server).
  [[nodiscard]] std::string url() const;
  [[nodiscard]] std::string tls_flags() const;
  /// A fresh connection to this server.
  [[nodiscard]] infra::redis::connection connect() const;

 private:
  /// Starts the server on port_ and waits for it; false when it exited instead.
  bool start_once();

  std::uint16_t port_ = 0;
  int pid_ = -1;
  std::string dir_;
  bool durable_ = false;
  redis_transport transport_ = redis_transport::plain;
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
