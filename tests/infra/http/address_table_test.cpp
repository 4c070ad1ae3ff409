// How the HTTP server counts connections per source address: the key of an address,
// and the caps in all and per key.
#include "infra/http/address_table.hpp"

#include <gtest/gtest.h>

namespace tgw::infra::http {
namespace {

using verdict = address_table::verdict;

std::string key(const char* text, unsigned bits = 64) {
  return address_key(net::asio::ip::make_address(text), bits);
}

TEST(AddressKey, CountsIpv4AloneAndIpv6ByItsPrefix) {
  EXPECT_EQ(key("198.51.100.7"), "198.51.100.7");
  EXPECT_EQ(key("::ffff:198.51.100.7"), "198.51.100.7");
  EXPECT_EQ(key("2001:db8:0:1:aaaa:bbbb:cccc:dddd"), "2001:db8:0:1::/64");
  EXPECT_EQ(key("2001:db8:0:1::1"), key("2001:db8:0:1:ffff::2"));
  EXPECT_NE(key("2001:db8:0:1::1"), key("2001:db8:0:2::1"));
  EXPECT_EQ(key("2001:db8::1", 128), "2001:db8::1/128");
  EXPECT_EQ(key("2001:db8::1", 300), "2001:db8::1/128");
  EXPECT_EQ(key("::1", 64), "::/64");
}

TEST(AddressTable, HoldsEachAddressToItsCapAndAllToTheTotal) {
  address_table t(3, 2);
  EXPECT_EQ(t.admit("a"), verdict::admitted);
  EXPECT_EQ(t.admit("a"), verdict::admitted);
  EXPECT_EQ(t.admit("a"), verdict::over_address);
  EXPECT_EQ(t.admit("b"), verdict::admitted);
  EXPECT_EQ(t.admit("c"), verdict::over_total);
  t.release("a");
  EXPECT_EQ(t.admit("c"), verdict::admitted);
  EXPECT_EQ(t.admit("a"), verdict::over_total);
  t.release("b");
  EXPECT_EQ(t.admit("a"), verdict::admitted);
  t.release("nobody");  // never admitted: changes nothing
  EXPECT_EQ(t.admit("d"), verdict::over_total);
}

TEST(AddressTable, NoPerAddressCapAtZero) {
  address_table t(3, 0);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(t.admit("a"), verdict::admitted);
  EXPECT_EQ(t.admit("a"), verdict::over_total);
}

}  // namespace
}  // namespace tgw::infra::http
