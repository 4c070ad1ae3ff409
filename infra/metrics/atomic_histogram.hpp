#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace tgw::infra::metrics {

/// A fixed-bucket histogram the data path can feed from any thread without a lock:
/// one relaxed increment per observation plus one for the sum. The metrics endpoint
/// turns it into a Prometheus histogram at scrape time. `Bounds` are the upper bounds
/// of the finite buckets, ascending; a last bucket takes everything above.
template <std::size_t N>
class atomic_histogram {
 public:
  explicit constexpr atomic_histogram(const std::array<double, N>& bounds) : bounds_(bounds) {}

  void observe(double value) noexcept {
    std::size_t i = 0;
    while (i < N && value > bounds_[i]) ++i;
    buckets_[i].fetch_add(1, std::memory_order_relaxed);
    // Sums are kept in micro-units so they stay integral and atomic.
    sum_micro_.fetch_add(static_cast<std::uint64_t>(value * 1e6), std::memory_order_relaxed);
  }

  [[nodiscard]] const std::array<double, N>& bounds() const noexcept { return bounds_; }
  /// Observations in finite bucket `i` (not cumulative); `i == N` is the overflow bucket.
  [[nodiscard]] std::uint64_t bucket(std::size_t i) const noexcept {
    return buckets_[i].load(std::memory_order_relaxed);
  }
  [[nodiscard]] double sum() const noexcept {
    return static_cast<double>(sum_micro_.load(std::memory_order_relaxed)) / 1e6;
  }

 private:
  std::array<double, N> bounds_;
  std::array<std::atomic<std::uint64_t>, N + 1> buckets_{};
  std::atomic<std::uint64_t> sum_micro_{0};
};

}  // namespace tgw::infra::metrics
