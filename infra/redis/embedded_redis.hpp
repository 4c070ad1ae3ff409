#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

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
  /// How the server is kept running once it started (see supervise()).
  struct supervision {
    /// Failed restarts in a row (the server started and did not answer) before giving
    /// up. A restart that brought the server up resets the count, however soon the
    /// server dies again.
    int max_restarts = 5;
    /// The wait before a restart: `first_backoff` after a server that ran for
    /// `stable_after`, doubled (up to `max_backoff`) after each one that died sooner
    /// and after each failed start.
    std::chrono::milliseconds first_backoff{200};
    std::chrono::milliseconds max_backoff{5000};
    std::chrono::milliseconds stable_after{30'000};
    /// Called once, on the supervising thread, when the server cannot be kept up.
    std::function<void()> give_up;
  };

  /// Locks the directory, starts the server and waits until it answers. Throws
  /// std::runtime_error with a clear message when the directory is unusable or held by
  /// another process, redis-server is missing, or it does not come up.
  explicit embedded_redis(const std::string& data_dir);
  ~embedded_redis();
  embedded_redis(const embedded_redis&) = delete;
  embedded_redis& operator=(const embedded_redis&) = delete;

  [[nodiscard]] const endpoint& where() const noexcept { return where_; }
  /// The server's process id (-1 while it is down).
  [[nodiscard]] int pid() const;
  /// True while the server process runs.
  [[nodiscard]] bool running();

  /// Watches the server from a thread of its own: when it exits (killed, crashed), the
  /// exit is logged at error with its status and the server is started again on the
  /// same data dir, whose append-only file holds every acknowledged write, after the
  /// backoff of `supervision`. After `max_restarts` failed starts in a row it calls
  /// `give_up` (the gateway then exits 1, so that its own supervisor, systemd's
  /// Restart=, acts). The thread lives until this object is destroyed, so a
  /// server it restarted keeps its parent-death signal.
  void supervise(supervision settings);

 private:
  void start(const std::string& dir);
  void stop();
  void watch(supervision settings);
  // waitpid(WNOHANG) under the lock: false once the server exited, its status kept.
  bool running_locked();

  endpoint where_;
  std::string dir_;
  int lock_fd_ = -1;
  int pid_ = -1;
  int last_status_ = 0;
  mutable std::mutex mutex_;  // pid_ and last_status_: the supervising thread and the owner's
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread supervisor_;
};

}  // namespace tgw::infra::redis
