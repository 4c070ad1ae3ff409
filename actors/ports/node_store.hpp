#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "actors/ports/store_failure.hpp"

namespace tgw::ports {

/// The cluster as one node sees it after a membership call.
struct membership_view {
  std::string emitter;        ///< Id of the node that holds the emitter lease.
  std::int64_t epoch = 0;     ///< Fencing number of that lease; grows on every change.
  std::int64_t removed = 0;   ///< Nodes this call removed as inactive.
  std::int64_t returned = 0;  ///< Their unfinished messages put back on the queue.
  bool rejoined = false;      ///< This node had been removed and registered again.
};

/// Outcome of an emit: accepted only while the caller still holds the lease at the
/// epoch it names.
struct emit_result {
  enum class status : std::uint8_t {
    emitted,
    refused,     ///< The lease is not the caller's at that epoch (or the store failed).
    exhausted,   ///< The message budget (max_messages) is spent.
    queue_full,  ///< The queue holds queue_limit messages already.
  };
  status outcome = status::refused;
  std::int64_t first_id = 0;
  std::int64_t last_id = 0;

  [[nodiscard]] bool accepted() const noexcept { return outcome == status::emitted; }
};

/// Outcome of finishing a message: false when the message was no longer this node's
/// (a health check gave it to another node while this one was paused).
struct completion {
  bool accepted = false;
};

/// Everything a cluster node asks of the shared store. The store's adapter (infra/node)
/// makes each call one atomic server-side step; tests stand in a fake. Calls block; run
/// them on a thread of their own (a detached actor).
class node_store {
 public:
  virtual ~node_store() = default;

  /// Registers `id` (nodes:list and nodes:ids) and takes the lease if nobody holds it.
  virtual std::optional<membership_view> join(const std::string& id) = 0;
  /// Marks `id` alive, removes nodes silent for longer than the inactivity limit
  /// (returning their unfinished messages to the queue) and hands the lease to the
  /// first remaining node if its holder was removed.
  virtual std::optional<membership_view> health_check(const std::string& id) = 0;
  /// Pushes `count` messages if `id` holds the lease at `epoch`.
  virtual emit_result emit(const std::string& id, std::int64_t epoch, int count) = 0;
  /// Moves the next message into this node's processing list, waiting up to `wait`.
  /// Called with nothing in hand: when the queue stays empty, what the processing list
  /// still holds is an earlier incarnation's, and goes back to the queue.
  virtual std::optional<std::string> take(const std::string& id,
                                          std::chrono::milliseconds wait) = 0;
  /// Finishes a message taken by `id`: handled, or failed into the error list.
  virtual completion complete(const std::string& id, const std::string& message, bool failed,
                              const std::string& reason) = 0;
  /// Leaves the cluster cleanly: unfinished messages go back, the lease moves on.
  virtual void leave(const std::string& id) = 0;
  /// Why the last call failed; of kind none when it succeeded.
  [[nodiscard]] virtual store_failure last_failure() const = 0;
};

}  // namespace tgw::ports
