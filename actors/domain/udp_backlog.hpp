#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace tgw::domain {

/// Datagrams handed to the session layer and not yet taken up there: the io thread
/// adds one per datagram it hands on, the taker calls taken(). Thread-safe.
class udp_backlog {
 public:
  explicit udp_backlog(std::size_t limit) : limit_(limit) {}
  /// Counts one more datagram in, unless `limit` are in already (0: no limit).
  bool admit() {
    if (limit_ == 0) return true;
    if (in_.fetch_add(1, std::memory_order_relaxed) < static_cast<std::int64_t>(limit_))
      return true;
    in_.fetch_sub(1, std::memory_order_relaxed);
    return false;
  }
  void taken() {
    if (limit_ != 0) in_.fetch_sub(1, std::memory_order_relaxed);
  }
  [[nodiscard]] std::int64_t size() const { return in_.load(std::memory_order_relaxed); }

 private:
  const std::size_t limit_;
  std::atomic<std::int64_t> in_{0};
};

}  // namespace tgw::domain
