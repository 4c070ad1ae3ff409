#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "infra/metrics/sharded_counter.hpp"

namespace tgw::infra::metrics {

/// A fixed-bucket histogram the data path can feed from any thread without a lock:
/// one relaxed increment per observation plus one for the sum, each on the calling
/// thread's own cache line (sharded_counter). The metrics endpoint turns it into a
/// Prometheus histogram at scrape time. `Bounds` are the upper bounds of the finite
/// buckets, ascending; a last bucket takes everything above.
template <std::size_t N>
class atomic_histogram {
 public:
  explicit atomic_histogram(const std::array<double, N>& bounds) : bounds_(bounds) {}

  void observe(double value) noexcept {
    std::size_t i = 0;
    while (i < N && value > bounds_[i]) ++i;
    counts_[i].fetch_add(1);
    // Sums are kept in micro-units so they stay integral and atomic.
    counts_[sum_index].fetch_add(static_cast<std::uint64_t>(value * 1e6));
  }

  [[nodiscard]] const std::array<double, N>& bounds() const noexcept { return bounds_; }
  /// Observations in finite bucket `i` (not cumulative); `i == N` is the overflow bucket.
  [[nodiscard]] std::uint64_t bucket(std::size_t i) const noexcept { return counts_[i].load(); }
  [[nodiscard]] double sum() const noexcept {
    return static_cast<double>(counts_[sum_index].load()) / 1e6;
  }

 private:
  /// The buckets, the overflow bucket, then the sum.
  static constexpr std::size_t sum_index = N + 1;
  std::array<double, N> bounds_;
  sharded_counter_array<std::uint64_t, N + 2> counts_;
};

}  // namespace tgw::infra::metrics
