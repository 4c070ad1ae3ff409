#include "infra/sim/latency_histogram.hpp"

#include <gtest/gtest.h>

namespace tgw::infra::sim {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

TEST(SimLatencyHistogram, EmptyGivesZero) {
  latency_histogram h;
  const latency_snapshot s = h.snapshot();
  EXPECT_EQ(s.total(), 0u);
  EXPECT_EQ(s.percentile_ms(0.5), 0.0);
  EXPECT_EQ(s.max_ms(), 0.0);
}

TEST(SimLatencyHistogram, SmallValuesAreExact) {
  latency_histogram h;
  for (int us = 1; us <= 20; ++us) h.record(microseconds{us});
  const latency_snapshot s = h.snapshot();
  EXPECT_EQ(s.total(), 20u);
  EXPECT_DOUBLE_EQ(s.percentile_ms(0.5), 0.010);
  EXPECT_DOUBLE_EQ(s.percentile_ms(1.0), 0.020);
  EXPECT_DOUBLE_EQ(s.max_ms(), 0.020);
}

TEST(SimLatencyHistogram, LargeValuesStayWithinTheBucketError) {
  latency_histogram h;
  for (int i = 0; i < 98; ++i) h.record(milliseconds{2});
  h.record(milliseconds{40});
  h.record(milliseconds{45});
  const latency_snapshot s = h.snapshot();
  EXPECT_GE(s.percentile_ms(0.5), 2.0);
  EXPECT_LE(s.percentile_ms(0.5), 2.0 * 1.04);
  EXPECT_GE(s.percentile_ms(0.99), 40.0);
  EXPECT_LE(s.percentile_ms(0.99), 40.0 * 1.04);
  EXPECT_DOUBLE_EQ(s.percentile_ms(1.0), 45.0);  // Capped at the exact maximum.
  EXPECT_DOUBLE_EQ(s.max_ms(), 45.0);
}

TEST(SimLatencyHistogram, BucketsCoverEveryValueInOrder) {
  std::size_t previous = 0;
  for (std::uint64_t v = 0; v < 1'000'000; v += 7) {
    const std::size_t i = latency_buckets::index_of(v);
    ASSERT_LT(i, latency_buckets::count);
    ASSERT_GE(i, previous);
    ASSERT_GE(latency_buckets::highest_in(i), v);
    previous = i;
  }
  EXPECT_LT(latency_buckets::index_of(~std::uint64_t{0}), latency_buckets::count);
}

TEST(SimLatencyHistogram, TakeEmptiesTheHistogram) {
  latency_histogram h;
  h.record(milliseconds{1});
  EXPECT_EQ(h.take().total(), 1u);
  EXPECT_EQ(h.snapshot().total(), 0u);
  EXPECT_EQ(h.snapshot().max_ms(), 0.0);
}

TEST(SimLatencyHistogram, NegativeDurationsCountAsZero) {
  latency_histogram h;
  h.record(std::chrono::nanoseconds{-5});
  EXPECT_EQ(h.snapshot().total(), 1u);
  EXPECT_EQ(h.snapshot().percentile_ms(1.0), 0.0);
}

}  // namespace
}  // namespace tgw::infra::sim
