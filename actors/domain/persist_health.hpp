#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "actors/domain/failure_log.hpp"

namespace tgw::domain {

/// Whether this instance can persist, and so ACK, right now: what /readyz means. The
/// telemetry writers report every round trip; persisting is stalled when every attempt
/// has failed for at least `window` (whatever the cause), or when a round trip has
/// been running that long with no success meanwhile (a paused or overloaded server
/// answers nothing, not even an error). The first success ends the stall. Failures go
/// to a failure_log ("persist"). Written by the writers' threads, read by the metrics
/// endpoint's; the success path is a few relaxed atomic stores.
class persist_health {
 public:
  struct settings {
    std::chrono::milliseconds window{3000};
    std::chrono::milliseconds log_interval{30'000};
    std::size_t writers = 1;
  };

  /// One round trip's failures, one entry per distinct cause.
  struct failure {
    /// As the store's adapter named it (write_outcome::cause): it labels the stall.
    ports::failure_cause cause;
    std::uint64_t packets = 0;  ///< Packets this failure left un-ACKed.
  };

  /// The stall in force: its cause's label and how long it has lasted.
  struct stall {
    std::string reason;
    double seconds = 0;
  };

  explicit persist_health(settings s, failure_log::line_sink sink = {},
                          clock::time_point started = clock::now());

  /// Writer `writer` sends a round trip.
  void started(std::size_t writer, clock::time_point now) noexcept;
  /// Writer `writer`'s round trip ended with every op persisted. Returns when to call
  /// settled() for the log's recovery line, or zero (failure_log::succeeded).
  clock::duration succeeded(std::size_t writer, clock::time_point now);
  /// Ends a failure spell the last success left pending (failure_log::settled).
  clock::duration settled(clock::time_point now) { return log_.settled(now); }
  /// It ended with `failures`; `any_succeeded` when some ops were persisted all the
  /// same (one server of a sharded store failing).
  void failed(std::size_t writer, const std::vector<failure>& failures, bool any_succeeded,
              clock::time_point now);

  /// The start-up check found persisting cannot succeed yet (replicas short): the
  /// instance starts stalled, not ready at once, and the log says why.
  void start_stalled(ports::failure_cause cause, clock::time_point now);

  /// Why this instance cannot persist now, or empty.
  [[nodiscard]] std::string stalled_because(clock::time_point now) const;
  /// The current stall, or an empty reason and 0 s. Reported from the first failed
  /// attempt on; readiness turns 503 once it reaches the window.
  [[nodiscard]] stall current(clock::time_point now) const;

 private:
  static std::int64_t ticks(clock::time_point t) noexcept { return t.time_since_epoch().count(); }

  settings settings_;
  failure_log log_;
  std::atomic<std::int64_t> last_success_;
  std::atomic<std::int64_t> failing_since_{0};                    // 0: the last attempt succeeded
  std::unique_ptr<std::atomic<std::int64_t>[]> in_flight_since_;  // per writer; 0: idle
  mutable std::mutex cause_mutex_;
  ports::failure_cause cause_;  // of the latest failure
};

}  // namespace tgw::domain
