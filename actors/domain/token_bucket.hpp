#pragma once

#include <algorithm>
#include <chrono>

namespace tgw::domain {

/// A rate with a burst: `rate` tokens an hour or a second (the caller's unit, given
/// as tokens per second here), at most `burst` saved up. Not thread-safe: its owner
/// serializes the calls.
class token_bucket {
 public:
  using clock = std::chrono::steady_clock;

  token_bucket() = default;
  /// Starts full. A rate of 0 or less means no limit.
  token_bucket(double per_second, double burst, clock::time_point now = clock::now())
      : per_second_(per_second), burst_(std::max(1.0, burst)), tokens_(burst_), refilled_(now) {}

  /// Spends a token if there is one.
  bool take(clock::time_point now = clock::now()) {
    if (per_second_ <= 0) return true;
    refill(now);
    if (tokens_ < 1.0) return false;
    tokens_ -= 1.0;
    return true;
  }
  /// Whether it is full again (nothing spent is still owed), so it can be forgotten.
  [[nodiscard]] bool full(clock::time_point now) const {
    if (per_second_ <= 0) return true;
    return tokens_ + elapsed(now) * per_second_ >= burst_;
  }

 private:
  [[nodiscard]] double elapsed(clock::time_point now) const {
    return std::chrono::duration<double>(now - refilled_).count();
  }
  void refill(clock::time_point now) {
    tokens_ = std::min(burst_, tokens_ + elapsed(now) * per_second_);
    refilled_ = now;
  }

  double per_second_ = 0;
  double burst_ = 1;
  double tokens_ = 1;
  clock::time_point refilled_{};
};

}  // namespace tgw::domain
