#include "infra/metrics/sharded_counter.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <thread>
#include <vector>

#include "infra/metrics/atomic_histogram.hpp"
#include "infra/metrics/thread_slot.hpp"

namespace tgw::infra::metrics {
namespace {

constexpr int kThreads = 8;
constexpr int kAddsEach = 100'000;

// Runs body(t) on kThreads threads at once and waits for them.
template <typename Body>
void on_threads(Body body) {
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back([&body, t] { body(t); });
  for (auto& th : threads) th.join();
}

TEST(ShardedCounter, SumsWhatEveryThreadAdded) {
  sharded_counter<std::uint64_t> c;
  on_threads([&](int) {
    for (int i = 0; i < kAddsEach; ++i) c.fetch_add(1);
  });
  EXPECT_EQ(c.load(), std::uint64_t{kThreads} * kAddsEach);
}

TEST(ShardedCounter, AGaugeRaisedOnOneThreadAndLoweredOnAnotherSumsToZero) {
  sharded_counter<std::int64_t> in_flight;
  std::thread([&] {
    for (int i = 0; i < 1000; ++i) in_flight.fetch_add(1);
  }).join();
  EXPECT_EQ(in_flight.load(), 1000);
  std::thread([&] {
    for (int i = 0; i < 1000; ++i) in_flight.fetch_sub(1);
  }).join();
  EXPECT_EQ(in_flight.load(), 0);
}

TEST(ShardedCounter, ThreadsStartedInTurnGetDifferentSlots) {
  std::set<std::size_t> slots;
  for (std::size_t t = 0; t < thread_slots; ++t)
    std::thread([&] { slots.insert(thread_slot()); }).join();
  EXPECT_EQ(slots.size(), thread_slots);
  // A thread keeps its slot.
  const std::size_t mine = thread_slot();
  EXPECT_EQ(thread_slot(), mine);
}

TEST(ShardedCounterArray, KeepsEachIndexApart) {
  sharded_counter_array<std::uint64_t, 256> by_codec;
  on_threads([&](int t) {
    for (int i = 0; i < kAddsEach; ++i)
      by_codec[static_cast<std::size_t>(0x8E + t % 2)].fetch_add(1);
  });
  const auto& read_only = by_codec;
  EXPECT_EQ(read_only[0x8E].load(), std::uint64_t{kThreads / 2} * kAddsEach);
  EXPECT_EQ(read_only[0x8F].load(), std::uint64_t{kThreads / 2} * kAddsEach);
  EXPECT_EQ(read_only[0x08].load(), 0U);
}

TEST(AtomicHistogram, BucketsAndSumFromManyThreads) {
  atomic_histogram<3> h{{0.001, 0.01, 0.1}};
  on_threads([&](int t) {
    for (int i = 0; i < 1000; ++i) h.observe(t % 2 == 0 ? 0.005 : 1.0);
  });
  EXPECT_EQ(h.bucket(0), 0U);
  EXPECT_EQ(h.bucket(1), std::uint64_t{kThreads / 2} * 1000);  // 0.005 <= 0.01
  EXPECT_EQ(h.bucket(2), 0U);
  EXPECT_EQ(h.bucket(3), std::uint64_t{kThreads / 2} * 1000);  // above every bound
  EXPECT_NEAR(h.sum(), kThreads / 2 * 1000 * (0.005 + 1.0), 1e-6);
}

}  // namespace
}  // namespace tgw::infra::metrics
