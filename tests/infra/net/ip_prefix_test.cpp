#include "infra/net/ip_prefix.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tgw::infra::net {
namespace {

ip_endpoint address(const std::string& text) {
  ip_endpoint e;
  EXPECT_TRUE(ip_endpoint::parse(text, 1, e)) << text;
  return e;
}

bool in_any(const std::vector<ip_prefix>& blocks, const std::string& text) {
  for (const auto& b : blocks)
    if (b.contains(address(text))) return true;
  return false;
}

TEST(IpPrefix, BlocksOfEitherFamilyHoldTheirAddressesOnly) {
  std::string error;
  const auto blocks = parse_prefixes("10.0.0.0/8, 192.0.2.7,2001:db8::/32,::1/128", error);
  ASSERT_TRUE(blocks.has_value()) << error;
  ASSERT_EQ(blocks->size(), 4U);
  EXPECT_EQ((*blocks)[0].to_string(), "10.0.0.0/8");
  EXPECT_EQ((*blocks)[1].to_string(), "192.0.2.7/32");
  EXPECT_EQ((*blocks)[2].to_string(), "2001:db8::/32");
  EXPECT_TRUE(in_any(*blocks, "10.255.0.1"));
  EXPECT_TRUE(in_any(*blocks, "::ffff:10.1.2.3"));  // an IPv4 address, mapped
  EXPECT_TRUE(in_any(*blocks, "192.0.2.7"));
  EXPECT_FALSE(in_any(*blocks, "192.0.2.8"));
  EXPECT_FALSE(in_any(*blocks, "11.0.0.1"));
  EXPECT_TRUE(in_any(*blocks, "2001:db8:ffff::1"));
  EXPECT_FALSE(in_any(*blocks, "2001:db9::1"));
  EXPECT_TRUE(in_any(*blocks, "::1"));
  EXPECT_FALSE(in_any(*blocks, "::2"));
  // 0 bits: every address of the family, and none of the other.
  const auto all_v4 = parse_prefixes("0.0.0.0/0", error);
  ASSERT_TRUE(all_v4.has_value()) << error;
  EXPECT_TRUE(all_v4->front().contains(address("203.0.113.9")));
  EXPECT_FALSE(all_v4->front().contains(address("2001:db8::1")));
}

TEST(IpPrefix, TheLoopbackDefaultIsTheHostItself) {
  const auto loopback = loopback_prefixes();
  EXPECT_TRUE(in_any(loopback, "127.0.0.1"));
  EXPECT_TRUE(in_any(loopback, "127.255.255.254"));
  EXPECT_TRUE(in_any(loopback, "::1"));
  EXPECT_TRUE(in_any(loopback, "::ffff:127.0.0.1"));
  EXPECT_FALSE(in_any(loopback, "10.0.0.1"));
  EXPECT_FALSE(in_any(loopback, "::2"));
}

TEST(IpPrefix, WhatIsNoBlockIsRefusedWithItsEntry) {
  const std::pair<const char*, const char*> cases[] = {
      {"10.0.0.1/8", "bits set past its prefix (the block is 10.0.0.0/8)"},
      {"2001:db8::1/32", "bits set past its prefix (the block is 2001:db8::/32)"},
      {"10.0.0.0/33", "0 to 32"},
      {"::/129", "0 to 128"},
      {"10.0.0.0/", "0 to 32"},
      {"10.0.0.0/08", "0 to 32"},
      {"balancer.example", "not an address"},
      {"10.0.0.0/8,", "not an address"},
      {"", "not an address"},
      {"10.0.0.0/8,,::1", "not an address"},
  };
  for (const auto& [text, says] : cases) {
    std::string error;
    EXPECT_FALSE(parse_prefixes(text, error).has_value()) << text;
    EXPECT_NE(error.find(says), std::string::npos) << text << ": " << error;
  }
}

TEST(IpPrefix, MaskedAndUnmappedKeepThePort) {
  const auto mapped = address("::ffff:198.51.100.7");
  const auto plain = unmapped(mapped);
  EXPECT_FALSE(plain.v6);
  EXPECT_EQ(plain.to_string(), "198.51.100.7:1");
  EXPECT_EQ(unmapped(address("2001:db8::1")), address("2001:db8::1"));
  EXPECT_EQ(masked(address("2001:db8:1:2:3:4:5:6"), 64).to_string(), "[2001:db8:1:2::]:1");
  EXPECT_EQ(masked(address("198.51.100.7"), 24).to_string(), "198.51.100.0:1");
  EXPECT_EQ(masked(address("198.51.100.7"), 32), address("198.51.100.7"));
}

// An IPv4 host behind a NAT64 gateway is the IPv4 address it carries, to the limits
// as to the blocks: one address, one quota, whichever form it comes in.
TEST(IpPrefix, TheWellKnownNat64PrefixIsTheIPv4AddressItCarries) {
  const auto nat64 = address("64:ff9b::c633:6407");
  EXPECT_EQ(unmapped(nat64), address("198.51.100.7"));
  EXPECT_EQ(unmapped(address("64:ff9b:1::c633:6407")), address("64:ff9b:1::c633:6407"));
  std::string error;
  const auto blocks = parse_prefixes("198.51.100.0/24", error);
  ASSERT_TRUE(blocks.has_value());
  EXPECT_TRUE((*blocks)[0].contains(nat64));
}

}  // namespace
}  // namespace tgw::infra::net
