#include "infra/net/address_limits.hpp"

#include <gtest/gtest.h>

namespace tgw::infra::net {
namespace {

using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;

TEST(AddressLimits, HandshakesInProgressAreCountedPerAddressAndFreedWhenOver) {
  address_limits limits({0, 0, 2});
  EXPECT_EQ(limits.admit("a"), address_verdict::admitted);
  EXPECT_EQ(limits.admit("a"), address_verdict::admitted);
  EXPECT_EQ(limits.admit("a"), address_verdict::over_handshakes);
  EXPECT_EQ(limits.admit("b"), address_verdict::admitted);
  EXPECT_EQ(limits.handshakes_in_progress(), 3);
  limits.handshake_over("a");
  EXPECT_EQ(limits.admit("a"), address_verdict::admitted);
  EXPECT_EQ(limits.refused_over_handshakes(), 1U);
  // Releasing more than was taken changes nothing.
  limits.handshake_over("c");
  EXPECT_EQ(limits.handshakes_in_progress(), 3);
}

TEST(AddressLimits, TheRateIsATokenBucketPerAddress) {
  address_limits limits({2, 3, 0});  // 2 a second, 3 at once
  const auto t0 = clock::now();
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(limits.admit("a", t0), address_verdict::admitted) << i;
    limits.handshake_over("a");
  }
  EXPECT_EQ(limits.admit("a", t0), address_verdict::over_rate);
  EXPECT_EQ(limits.admit("b", t0), address_verdict::admitted);
  // Half a second brings one token back, not more.
  EXPECT_EQ(limits.admit("a", t0 + 500ms), address_verdict::admitted);
  EXPECT_EQ(limits.admit("a", t0 + 500ms), address_verdict::over_rate);
  // A long pause refills up to the burst only.
  for (int i = 0; i < 3; ++i) EXPECT_EQ(limits.admit("a", t0 + 60s), address_verdict::admitted);
  EXPECT_EQ(limits.admit("a", t0 + 60s), address_verdict::over_rate);
  EXPECT_EQ(limits.refused_over_rate(), 3U);
}

TEST(AddressLimits, OffWhenBothLimitsAreZero) {
  address_limits limits({0, 0, 0});
  EXPECT_FALSE(limits.enabled());
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(limits.admit("a"), address_verdict::admitted);
}

TEST(AddressLimits, QuietAddressesLeaveTheTableAsItGrows) {
  address_limits limits({10, 10, 4});
  const auto t0 = clock::now();
  for (int i = 0; i < 5000; ++i) {
    const std::string a = "addr-" + std::to_string(i);
    ASSERT_EQ(limits.admit(a, t0 + std::chrono::seconds{i}), address_verdict::admitted);
    limits.handshake_over(a);
  }
  EXPECT_LT(limits.addresses_tracked(), 3000U);
  // An address in its handshake is never dropped.
  ASSERT_EQ(limits.admit("held", t0 + 10000s), address_verdict::admitted);
  for (int i = 0; i < 5000; ++i) {
    const std::string a = "later-" + std::to_string(i);
    ASSERT_EQ(limits.admit(a, t0 + 20000s + std::chrono::seconds{i}), address_verdict::admitted);
    limits.handshake_over(a);
  }
  EXPECT_EQ(limits.handshakes_in_progress(), 1);
  limits.handshake_over("held");
  EXPECT_EQ(limits.handshakes_in_progress(), 0);
}

}  // namespace
}  // namespace tgw::infra::net
