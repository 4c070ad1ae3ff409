#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "infra/redis/redis_url.hpp"

namespace tgw::infra::redis {

/// Listens to Sentinel's `+switch-master` for one master name, on one thread per
/// process (shared by every connection to that master), and counts the failovers it
/// hears. A connection compares the count with the one it connected under before each
/// command, and reconnects when it moved: without this, an idle connection to a master
/// that was partitioned from the sentinels, and so replaced without ever failing a
/// command, would go on writing to it. A failover that happens while no sentinel is
/// reachable is counted when the subscription is made again.
class sentinel_watch {
 public:
  /// The watcher of `where`'s master, started on first use and stopped with its last
  /// user. `where` must be a sentinel endpoint.
  static std::shared_ptr<sentinel_watch> of(const endpoint& where);

  explicit sentinel_watch(endpoint where);
  ~sentinel_watch();
  sentinel_watch(const sentinel_watch&) = delete;
  sentinel_watch& operator=(const sentinel_watch&) = delete;

  /// Failovers heard so far (and resubscriptions after a gap).
  [[nodiscard]] std::uint64_t epoch() const noexcept {
    return epoch_.load(std::memory_order_acquire);
  }

 private:
  void run();
  bool listen(const host_port& sentinel, bool first);

  endpoint where_;
  std::atomic<std::uint64_t> epoch_{0};
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace tgw::infra::redis
