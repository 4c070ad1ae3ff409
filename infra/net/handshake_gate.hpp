#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tgw::infra::net {

/// Bounds the TLS handshakes that run at once over every TLS listener of an instance,
/// and shares the slots fairly between source addresses. A handshake holds about
/// 45 KiB for its duration (OpenSSL's SSL object, its two 16 KiB record buffers, the
/// handshake messages), and the allocator keeps a high-water mark: a reconnect storm of
/// 10,000 devices left 11 KiB a session behind for good where the handshakes ran
/// unbounded (docs/PERFORMANCE.md).
///
/// A slot is kept only while its handshake makes progress. One that waits on its peer
/// longer than the step timeout is evicted (its connection closes), and while
/// connections wait for a slot, a handshake that has waited on its peer for the grace
/// period is evicted in favour of an address holding fewer slots. The line is served
/// fairly too: a freed slot goes to the waiting connection whose address holds the
/// fewest. So a few addresses that open handshakes and go silent cannot keep a new
/// address waiting, however many slots they took. Thread-safe.
class handshake_gate {
 public:
  /// Why a handshake lost its slot.
  enum class eviction : std::uint8_t {
    stalled,    ///< It waited on its peer longer than the step timeout.
    preempted,  ///< It waited on its peer while another address waited for a slot.
  };
  /// Called, on whatever thread frees the slot, when a waiting handshake may run;
  /// it owns a slot from then on and must leave() when done. Returns false if its
  /// connection is gone, and the slot goes to the next.
  using start_fn = std::function<bool()>;
  /// Called, outside the gate's lock, when a slot's handshake is evicted: its
  /// connection closes (on its own thread) and leaves.
  using evict_fn = std::function<void(eviction)>;

  struct settings {
    std::size_t limit = 256;  ///< Handshakes at once; 0: no limit.
    /// Longest wait on the peer in one step of a handshake that holds a slot.
    std::chrono::milliseconds step_timeout{5000};
    /// A handshake waiting on its peer this long may be evicted for another address.
    std::chrono::milliseconds grace{500};
  };
  using clock = std::chrono::steady_clock;

  explicit handshake_gate(settings s) : settings_(s) {}
  /// At most `limit` at once (0: no limit), the other settings at their defaults.
  explicit handshake_gate(std::size_t limit) : settings_{limit, settings{}.step_timeout} {}

  /// A connection from `address` (the key its per-address limits count it under) asks
  /// for a slot. True: it holds one now. False: it waits in line and `start` is called
  /// when its turn comes. Either way `id` names its place until leave().
  bool enter(const std::string& address, start_fn start, evict_fn evict, std::uint64_t& id,
             clock::time_point now = clock::now());
  /// The handshake now waits on its peer (true), or works on what came (false).
  void waiting_on_peer(std::uint64_t id, bool waiting, clock::time_point now = clock::now());
  /// The connection is done with its slot or its place in line (its handshake ended,
  /// failed, or it closed). Nothing if it holds neither.
  void leave(std::uint64_t id);
  /// Evicts the handshakes past their step timeout, and for the connections in line
  /// those that have waited on their peer for the grace period in addresses that hold
  /// more slots. Each io thread's sweep calls it.
  void sweep(clock::time_point now = clock::now());

  [[nodiscard]] std::size_t running() const;
  [[nodiscard]] std::size_t waiting() const;
  [[nodiscard]] const settings& config() const { return settings_; }

 private:
  struct holder {
    std::string address;
    evict_fn evict;
    clock::time_point waiting_since{};
    bool waiting_on_peer = false;
    bool evicted = false;
  };
  struct waiter {
    std::uint64_t id = 0;
    std::string address;
    start_fn start;
    evict_fn evict;
  };
  using evictions = std::vector<std::pair<evict_fn, eviction>>;

  void hold_locked(std::uint64_t id, std::string address, evict_fn evict);
  void release_locked(std::unordered_map<std::uint64_t, holder>::iterator it);
  /// Evicts for the waiters that no pending eviction will serve, as far as one may.
  void rebalance_locked(clock::time_point now, evictions& out);
  /// Marks the holder to evict so that a waiter of `address` gets a slot, if one may be.
  bool preempt_for_locked(const std::string& address, clock::time_point now, evictions& out);
  [[nodiscard]] std::size_t held_by_locked(const std::string& address) const;

  /// Waiters a rebalance looks at, at most.
  static constexpr std::size_t max_rebalanced = 64;

  const settings settings_;
  mutable std::mutex mutex_;
  std::uint64_t last_id_ = 0;
  std::unordered_map<std::uint64_t, holder> holders_;
  std::unordered_map<std::string, std::size_t> held_;  ///< Slots per address.
  std::deque<waiter> line_;
};

}  // namespace tgw::infra::net
