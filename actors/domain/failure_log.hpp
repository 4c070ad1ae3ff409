#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "actors/ports/store_failure.hpp"

namespace tgw::domain {

using clock = std::chrono::steady_clock;

/// How one component's store failures reach the log: loudly, and rarely. The first
/// failure of a spell gets a warn line with the store's words and the fix; while the spell
/// lasts, each cause gets at most one more line per interval, counting the failures
/// and what they cost since its last line; the first success after the spell gets one
/// line saying how long it lasted and what it cost in all. So an outage is never only
/// at debug level, and a flood of failures is a line every interval, not a line each.
/// Thread-safe; a success outside a spell costs one atomic load.
class failure_log {
 public:
  /// Where lines go (spdlog at warn unless a test collects them).
  using line_sink = std::function<void(const std::string&)>;

  struct settings {
    std::string component;    ///< Starts each line: "persist", "heartbeat", "registry", ...
    std::string consequence;  ///< What a spell means: "devices are not ACKed".
    std::string unit;         ///< What `lost` counts: "packet(s) not ACKed".
    std::chrono::milliseconds interval{30'000};
    /// A success ends a spell only this long after its last failure: while one server
    /// of a sharded store is down, batches that miss it succeed in between, and
    /// the spell goes on rather than ending and starting again every few milliseconds.
    std::chrono::milliseconds settle{1000};
  };

  explicit failure_log(settings s, line_sink sink = {});
  failure_log(const failure_log&) = delete;
  failure_log& operator=(const failure_log&) = delete;

  /// A failure with `cause`; `lost` is what it cost, in the settings' unit.
  void failed(const ports::failure_cause& cause, std::uint64_t lost, clock::time_point now);
  /// A success: ends a spell if one is on and its last failure is `settle` old. A
  /// success sooner than that leaves the end pending: returns how long until settled()
  /// can end it (zero when nothing is pending), so a caller with no further traffic
  /// still gets its recovery line.
  clock::duration succeeded(clock::time_point now);
  /// Ends a spell that has seen a success since its last failure, once that failure
  /// is `settle` old; the line dates the recovery from that first success. Returns how
  /// long until it can end, when a failure and a success came since the call was
  /// scheduled (zero: ended, or nothing pending).
  clock::duration settled(clock::time_point now);
  /// True between a failure and the next success.
  [[nodiscard]] bool failing() const noexcept { return failing_.load(std::memory_order_acquire); }

 private:
  struct per_cause {
    clock::time_point last_line{};
    std::uint64_t failures = 0;  // since the last line
    std::uint64_t lost = 0;      // since the last line
  };

  settings settings_;
  line_sink sink_;
  std::atomic<bool> failing_{false};
  std::mutex mutex_;
  clock::time_point since_{};
  clock::time_point last_failure_{};
  clock::time_point recovered_at_{};  // first success since the last failure, if any
  bool recovered_ = false;
  std::uint64_t failures_total_ = 0;
  std::uint64_t lost_total_ = 0;
  std::map<std::string, per_cause> causes_;

  std::string end_spell_locked(clock::time_point recovered_at);
};

/// Seconds with one decimal, as the log lines print them.
[[nodiscard]] std::string seconds_text(clock::duration d);

}  // namespace tgw::domain
