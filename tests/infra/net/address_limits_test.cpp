#include "infra/net/address_limits.hpp"

#include <gtest/gtest.h>

#include "infra/net/ip_endpoint.hpp"

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

ip_endpoint address(const std::string& text) {
  ip_endpoint e;
  EXPECT_TRUE(ip_endpoint::parse(text, 40123, e)) << text;
  return e;
}

// A device's address in its IPv4-mapped form is the same device: one quota.
TEST(AddressLimits, AnIPv4AddressAndItsMappedFormShareAQuota) {
  address_limits limits({0, 0, 1});
  EXPECT_EQ(limits.key_of(address("::ffff:10.0.0.1")), limits.key_of(address("10.0.0.1")));
  EXPECT_EQ(limits.admit(limits.key_of(address("10.0.0.1"))), address_verdict::admitted);
  EXPECT_EQ(limits.admit(limits.key_of(address("::ffff:10.0.0.1"))),
            address_verdict::over_handshakes);
  EXPECT_EQ(limits.describe(address("::ffff:10.0.0.1")), "10.0.0.1");
  EXPECT_NE(limits.key_of(address("10.0.0.1")), limits.key_of(address("10.0.0.2")));
}

// IPv6 is counted per prefix (/64 unless set): a host given a /64 is one source.
TEST(AddressLimits, TwoAddressesOfOnePrefixShareAQuota) {
  address_limits limits({0, 0, 1});
  const auto a = address("2001:db8:0:1::7");
  const auto b = address("2001:db8:0:1:ffff:ffff:ffff:ffff");
  const auto other = address("2001:db8:0:2::7");
  EXPECT_EQ(limits.key_of(a), limits.key_of(b));
  EXPECT_NE(limits.key_of(a), limits.key_of(other));
  EXPECT_EQ(limits.admit(limits.key_of(a)), address_verdict::admitted);
  EXPECT_EQ(limits.admit(limits.key_of(b)), address_verdict::over_handshakes);
  EXPECT_EQ(limits.admit(limits.key_of(other)), address_verdict::admitted);
  EXPECT_EQ(limits.describe(b), "2001:db8:0:1::/64");
  address_limits per_host({0, 0, 1, 128});
  EXPECT_NE(per_host.key_of(a), per_host.key_of(b));
  address_limits per_48({0, 0, 1, 48});
  EXPECT_EQ(per_48.key_of(a), per_48.key_of(other));
  EXPECT_EQ(per_48.describe(a), "2001:db8::/48");
}

TEST(AddressLimits, SessionsPerAddressAreCappedAndGivenBack) {
  address_limit_settings s;
  s.sessions = 2;
  address_limits limits(s);
  EXPECT_TRUE(limits.enabled());
  EXPECT_TRUE(limits.session_begins("a"));
  EXPECT_TRUE(limits.session_begins("a"));
  EXPECT_FALSE(limits.session_begins("a"));
  EXPECT_TRUE(limits.session_begins("b"));
  limits.session_over("a");
  EXPECT_TRUE(limits.session_begins("a"));
  limits.session_over("c");  // never began: nothing
  EXPECT_FALSE(limits.session_begins("a"));
}

TEST(AddressLimits, NewDevicesAreABucketPerAddressRefilledByTheHour) {
  address_limit_settings s;
  s.new_devices_per_hour = 60;  // one a minute
  s.new_devices_burst = 2;
  address_limits limits(s);
  const auto t0 = clock::now();
  EXPECT_TRUE(limits.new_device("a", t0));
  EXPECT_TRUE(limits.new_device("a", t0));
  EXPECT_FALSE(limits.new_device("a", t0));
  EXPECT_TRUE(limits.new_device("b", t0));
  EXPECT_FALSE(limits.new_device("a", t0 + 59s));
  EXPECT_TRUE(limits.new_device("a", t0 + 60s));
  // Without a rate, no limit.
  address_limits unlimited({});
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(unlimited.new_device("a"));
}

TEST(AddressLimits, ARateAloneSpendsNoHandshake) {
  address_limits limits({2, 3, 0});
  const auto t0 = clock::now();
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limits.take_rate("a", t0));
  EXPECT_FALSE(limits.take_rate("a", t0));
  EXPECT_EQ(limits.handshakes_in_progress(), 0);
  EXPECT_TRUE(limits.take_rate("a", t0 + 500ms));
}

// An entry that still holds a session or owes new-device tokens is not forgotten: a
// source would get a fresh quota by going quiet for a moment.
TEST(AddressLimits, EntriesThatHoldSessionsOrOweTokensStay) {
  address_limit_settings s;
  s.connections_per_second = 1000;
  s.burst = 1;
  s.sessions = 5;
  s.new_devices_per_hour = 1;
  s.new_devices_burst = 1;
  address_limits limits(s);
  const auto t0 = clock::now();
  EXPECT_TRUE(limits.session_begins("held"));
  EXPECT_TRUE(limits.new_device("owed", t0));
  // Each one's bucket refills within the millisecond that follows it: the table keeps
  // only what still owes something.
  for (int i = 0; i < 5000; ++i) {
    const std::string a = "x" + std::to_string(i);
    ASSERT_EQ(limits.admit(a, t0 + 1s + std::chrono::milliseconds(i)), address_verdict::admitted);
    limits.handshake_over(a);
  }
  EXPECT_LT(limits.addresses_tracked(), 5000U);
  EXPECT_FALSE(limits.new_device("owed", t0 + 2s));
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(limits.session_begins("held"));
  EXPECT_FALSE(limits.session_begins("held"));
}

}  // namespace
}  // namespace tgw::infra::net
