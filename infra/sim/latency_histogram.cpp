#include "infra/sim/latency_histogram.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace tgw::infra::sim {

std::size_t latency_buckets::index_of(std::uint64_t micros) noexcept {
  micros = std::min(micros, (std::uint64_t{1} << (max_exponent + 1)) - 1);
  if (micros < sub_count) return static_cast<std::size_t>(micros);
  const auto exponent = static_cast<unsigned>(std::bit_width(micros)) - 1;  // >= sub_bits
  const std::uint64_t mantissa = (micros >> (exponent - sub_bits)) - sub_count;
  return static_cast<std::size_t>((exponent - sub_bits + 1) * sub_count + mantissa);
}

std::uint64_t latency_buckets::highest_in(std::size_t index) noexcept {
  if (index < sub_count) return index;
  const std::uint64_t group = index / sub_count;  // >= 1
  const std::uint64_t mantissa = index % sub_count;
  const auto shift = static_cast<unsigned>(group - 1);
  return ((sub_count + mantissa + 1) << shift) - 1;
}

double latency_snapshot::percentile_ms(double q) const noexcept {
  if (total_ == 0) return 0.0;
  q = std::clamp(q, 0.0, 1.0);
  const auto rank = std::max<std::uint64_t>(
      1, static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(total_))));
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen >= rank)
      return static_cast<double>(std::min(latency_buckets::highest_in(i), max_us_)) / 1000.0;
  }
  return max_ms();
}

void latency_histogram::record(std::chrono::nanoseconds latency) noexcept {
  const auto us = static_cast<std::uint64_t>(std::max<std::int64_t>(
      0, std::chrono::duration_cast<std::chrono::microseconds>(latency).count()));
  counts_[latency_buckets::index_of(us)].fetch_add(1, std::memory_order_relaxed);
  std::uint64_t seen = max_us_.load(std::memory_order_relaxed);
  while (us > seen && !max_us_.compare_exchange_weak(seen, us, std::memory_order_relaxed)) {
  }
}

latency_snapshot latency_histogram::snapshot() const noexcept {
  latency_snapshot s;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    s.counts_[i] = counts_[i].load(std::memory_order_relaxed);
    s.total_ += s.counts_[i];
  }
  s.max_us_ = max_us_.load(std::memory_order_relaxed);
  return s;
}

latency_snapshot latency_histogram::take() noexcept {
  latency_snapshot s;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    s.counts_[i] = counts_[i].exchange(0, std::memory_order_relaxed);
    s.total_ += s.counts_[i];
  }
  s.max_us_ = max_us_.exchange(0, std::memory_order_relaxed);
  return s;
}

}  // namespace tgw::infra::sim
