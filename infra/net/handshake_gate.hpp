#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <utility>

namespace tgw::infra::net {

/// Bounds the TLS handshakes that run at once over every TLS listener of an instance;
/// the rest wait in arrival order, their ClientHello in the kernel. A handshake holds
/// about 45 KiB for its duration (OpenSSL's SSL object, its two 16 KiB record
/// buffers, the handshake messages), and the allocator keeps a high-water mark: a
/// reconnect storm of 10,000 devices left 11 KiB a session behind for good where the
/// handshakes ran unbounded (docs/PERFORMANCE.md). Waiting devices are still bound by
/// the handshake timeout. Thread-safe.
class handshake_gate {
 public:
  /// Called, on whatever thread frees the slot, when a waiting handshake may run;
  /// it owns a slot from then on and must leave() when done. Returns false if its
  /// connection is gone, and the slot goes to the next.
  using start_fn = std::function<bool()>;

  /// At most `limit` running at once; 0: no limit.
  explicit handshake_gate(std::size_t limit) : limit_(limit) {}

  /// True: a slot is taken, start now. False: `start` is queued under `ticket`.
  bool enter(start_fn start, std::uint64_t& ticket);
  /// A queued connection gave up (its handshake timeout, a shutdown): it leaves the
  /// line. Nothing if its turn came meanwhile.
  void withdraw(std::uint64_t ticket);
  /// A running handshake ended (done, failed, or its connection closed).
  void leave();

  [[nodiscard]] std::size_t running() const;
  [[nodiscard]] std::size_t waiting() const;

 private:
  const std::size_t limit_;
  mutable std::mutex mutex_;
  std::size_t running_ = 0;
  std::uint64_t last_ticket_ = 0;
  std::deque<std::pair<std::uint64_t, start_fn>> waiting_;
};

}  // namespace tgw::infra::net
