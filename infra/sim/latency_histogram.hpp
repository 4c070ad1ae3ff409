#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace tgw::infra::sim {

/// Bucket layout shared by the histogram and its snapshots: values in microseconds,
/// exact below 32 us, then 32 buckets per power of two (at most 3.2 % too high).
struct latency_buckets {
  static constexpr unsigned sub_bits = 5;
  static constexpr std::uint64_t sub_count = std::uint64_t{1} << sub_bits;
  /// Values are clamped to 2^40 us (about 12 days).
  static constexpr unsigned max_exponent = 40;
  static constexpr std::size_t count = (max_exponent - sub_bits + 2) * sub_count;

  [[nodiscard]] static std::size_t index_of(std::uint64_t micros) noexcept;
  /// The largest value that falls into bucket `index`.
  [[nodiscard]] static std::uint64_t highest_in(std::size_t index) noexcept;
};

/// Counts of a histogram at one moment, and the percentiles they give.
class latency_snapshot {
 public:
  /// The value at quantile `q` (0..1) in milliseconds, the bucket's highest value
  /// capped at the maximum seen; 0 when nothing was recorded.
  [[nodiscard]] double percentile_ms(double q) const noexcept;
  [[nodiscard]] double max_ms() const noexcept { return static_cast<double>(max_us_) / 1000.0; }
  [[nodiscard]] std::uint64_t total() const noexcept { return total_; }
  [[nodiscard]] std::uint64_t max_us() const noexcept { return max_us_; }
  /// Calls f(highest value of the bucket in us, count) for every bucket with a count,
  /// lowest first: enough for another program to merge snapshots and take percentiles.
  template <class F>
  void for_each_bucket(F f) const {
    for (std::size_t i = 0; i < counts_.size(); ++i)
      if (counts_[i] != 0) f(latency_buckets::highest_in(i), counts_[i]);
  }

 private:
  friend class latency_histogram;
  std::array<std::uint64_t, latency_buckets::count> counts_{};
  std::uint64_t total_ = 0;
  std::uint64_t max_us_ = 0;
};

/// A fixed-size log-linear histogram of ACK latencies. record() is lock-free and may be
/// called from any thread; readers take snapshots. Nothing allocates.
class latency_histogram {
 public:
  void record(std::chrono::nanoseconds latency) noexcept;

  [[nodiscard]] latency_snapshot snapshot() const noexcept;
  /// A snapshot that also empties the histogram, for per-interval figures. A value
  /// recorded concurrently lands in this snapshot or the next one.
  [[nodiscard]] latency_snapshot take() noexcept;

 private:
  std::array<std::atomic<std::uint64_t>, latency_buckets::count> counts_{};
  std::atomic<std::uint64_t> max_us_{0};
};

}  // namespace tgw::infra::sim
