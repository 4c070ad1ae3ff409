#include "actors/domain/persist_health.hpp"

namespace tgw::domain {

persist_health::persist_health(settings s, failure_log::line_sink sink, clock::time_point started)
    : settings_(s),
      log_({"persist", "devices are not ACKed", "packet(s) not ACKed", s.log_interval},
           std::move(sink)),
      last_success_(ticks(started)),
      in_flight_since_(new std::atomic<std::int64_t>[std::max<std::size_t>(s.writers, 1)]) {
  for (std::size_t i = 0; i < std::max<std::size_t>(s.writers, 1); ++i) in_flight_since_[i] = 0;
}

void persist_health::started(std::size_t writer, clock::time_point now) noexcept {
  if (writer < settings_.writers)
    in_flight_since_[writer].store(ticks(now), std::memory_order_relaxed);
}

clock::duration persist_health::succeeded(std::size_t writer, clock::time_point now) {
  if (writer < settings_.writers) in_flight_since_[writer].store(0, std::memory_order_relaxed);
  last_success_.store(ticks(now), std::memory_order_relaxed);
  if (failing_since_.load(std::memory_order_relaxed) != 0)
    failing_since_.store(0, std::memory_order_relaxed);
  return log_.succeeded(now);
}

void persist_health::failed(std::size_t writer, const std::vector<failure>& failures,
                            bool any_succeeded, clock::time_point now) {
  std::int64_t attempt = 0;
  if (writer < settings_.writers)
    attempt = in_flight_since_[writer].exchange(0, std::memory_order_relaxed);
  if (attempt == 0) attempt = ticks(now);
  if (any_succeeded) {
    last_success_.store(ticks(now), std::memory_order_relaxed);
    failing_since_.store(0, std::memory_order_relaxed);
  } else if (!failures.empty()) {
    {
      const std::lock_guard lock(cause_mutex_);
      cause_ = failures.front().cause;
    }
    // The stall counts from the start of the first attempt that failed, not from when
    // its failure came back: a call that timed out after 5 s was stalled all along.
    std::int64_t expected = 0;
    failing_since_.compare_exchange_strong(expected, attempt, std::memory_order_relaxed);
  }
  for (const failure& f : failures) log_.failed(f.cause, f.packets, now);
}

void persist_health::start_stalled(ports::failure_cause cause, clock::time_point now) {
  log_.failed(cause, 0, now);
  {
    const std::lock_guard lock(cause_mutex_);
    cause_ = std::move(cause);
  }
  failing_since_.store(ticks(now - settings_.window), std::memory_order_relaxed);
}

persist_health::stall persist_health::current(clock::time_point now) const {
  const std::int64_t since = failing_since_.load(std::memory_order_relaxed);
  if (since != 0) {
    const std::lock_guard lock(cause_mutex_);
    return {cause_.label,
            std::chrono::duration<double>(clock::duration(ticks(now) - since)).count()};
  }
  // No failure, but maybe a round trip that has not come back since the last success.
  const std::int64_t success = last_success_.load(std::memory_order_relaxed);
  std::int64_t oldest = 0;
  for (std::size_t i = 0; i < settings_.writers; ++i) {
    const std::int64_t t = in_flight_since_[i].load(std::memory_order_relaxed);
    if (t != 0 && (oldest == 0 || t < oldest)) oldest = t;
  }
  if (oldest == 0) return {};
  const std::int64_t stuck_since = std::max(oldest, success);
  const double seconds =
      std::chrono::duration<double>(clock::duration(ticks(now) - stuck_since)).count();
  // A round trip in progress is only a stall once it is overdue.
  if (seconds * 1000 < static_cast<double>(settings_.window.count())) return {};
  return {"stalled_call", seconds};
}

std::string persist_health::stalled_because(clock::time_point now) const {
  const stall s = current(now);
  if (s.reason.empty() || s.seconds * 1000 < static_cast<double>(settings_.window.count()))
    return {};
  const std::string lasted = seconds_text(
      std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(s.seconds)));
  if (s.reason == "stalled_call")
    return "a Redis round trip of a telemetry writer has not returned for " + lasted +
           " (the server paused, overloaded or unreachable?); devices are not ACKed";
  const std::lock_guard lock(cause_mutex_);
  return "persisting failed for every attempt for " + lasted + ": " + describe(cause_);
}

}  // namespace tgw::domain
