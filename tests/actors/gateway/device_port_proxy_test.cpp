// Who may send a PROXY header, and what the per-address limits make of the address it
// names: only the balancers of --proxy-from, no exemption for an address that claims
// to be loopback, one quota for an IPv4 address in either form and for an IPv6 /64,
// and a v1 line read strictly. A real `tgw serve`; waits poll up to a deadline.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "tests/actors/gateway/device_port_fixture.hpp"

namespace tgw::test::device_port {
namespace {

std::string v1(const std::string& family, const std::string& source, int port) {
  const std::string destination = family == "TCP4" ? "10.0.0.5" : "2001:db8::5";
  return "PROXY " + family + " " + source + " " + destination + " " + std::to_string(port) +
         " 5027\r\n";
}

const std::string refused_proxy_source =
    "teltonika_connections_total{instance_id=\"gw-port-test\",result=\"refused_proxy_source\"} ";
const std::string refused_address =
    "teltonika_connections_total{instance_id=\"gw-port-test\",result=\"refused_address_limit\"} ";
const std::string in_progress = "teltonika_handshakes_in_progress{instance_id=\"gw-port-test\"} ";

TEST_F(DevicePort, AProxyHeaderFromOutsideProxyFromIsRefusedUnreadAndCounted) {
  // The test's connections come from 127.0.0.1, which is not a balancer here.
  start({"--proxy-protocol", "v1", "--proxy-from", "10.0.0.0/8,2001:db8::/32"});
  auto d = device_behind(port, v1("TCP4", "198.51.100.7", 40123));
  d->send(handshake_packet(imei_a));
  EXPECT_EQ(d->receive(1), std::nullopt);
  EXPECT_TRUE(d->closed_by_server());
  EXPECT_TRUE(eventually([&] { return metric(refused_proxy_source) == 1; }))
      << metric(refused_proxy_source);
  EXPECT_TRUE(eventually([&] {
    return read_file(log).find("PROXY protocol: 127.0.0.1:") != std::string::npos &&
           read_file(log).find("is not in --proxy-from") != std::string::npos;
  })) << read_file(log);
  EXPECT_TRUE(journal(imei_a).empty());
  EXPECT_NE(read_file(log).find("from 10.0.0.0/8,2001:db8::/32 only"), std::string::npos);
}

TEST_F(DevicePort, AProxyHeaderClaimingLoopbackIsLimitedLikeAnyOtherAddress) {
  start({"--proxy-protocol", "v1", "--per-address-handshakes", "2", "--per-address-rate", "0"});
  std::vector<std::unique_ptr<device>> held;
  for (int i = 0; i < 2; ++i)
    held.push_back(device_behind(port, v1("TCP4", "127.0.0.9", 43000 + i)));
  ASSERT_TRUE(eventually([&] { return metric(in_progress) == 2; })) << metric(in_progress);
  auto third = device_behind(port, v1("TCP4", "127.0.0.9", 43002));
  EXPECT_TRUE(third->closed_by_server());
  EXPECT_TRUE(eventually([&] { return metric(refused_address) == 1; }));
  EXPECT_NE(read_file(log).find("too many handshakes in progress from 127.0.0.9"),
            std::string::npos)
      << read_file(log);
  // ::1 is no exemption either.
  for (int i = 0; i < 2; ++i) held.push_back(device_behind(port, v1("TCP6", "::1", 44000 + i)));
  ASSERT_TRUE(eventually([&] { return metric(in_progress) == 4; })) << metric(in_progress);
  auto fifth = device_behind(port, v1("TCP6", "::1", 44002));
  EXPECT_TRUE(fifth->closed_by_server());
  EXPECT_TRUE(eventually([&] { return metric(refused_address) == 2; }));
}

TEST_F(DevicePort, AnIPv4AddressAndItsMappedFormShareOneQuota) {
  start({"--proxy-protocol", "v1", "--per-address-handshakes", "1", "--per-address-rate", "0"});
  auto plain = device_behind(port, v1("TCP4", "10.0.0.1", 40001));
  ASSERT_TRUE(eventually([&] { return metric(in_progress) == 1; }));
  auto mapped = device_behind(port, v1("TCP6", "::ffff:10.0.0.1", 40002));
  EXPECT_TRUE(mapped->closed_by_server());
  EXPECT_TRUE(eventually([&] {
    return read_file(log).find("too many handshakes in progress from 10.0.0.1 (") !=
           std::string::npos;
  })) << read_file(log);
  // The device is told apart by its IPv4 address, in the journal too.
  plain->send(handshake_packet(imei_a));
  ASSERT_EQ(plain->receive(1), bytes{0x01});
  auto mapped_again = device_behind(port, v1("TCP6", "::ffff:10.0.0.1", 40003));
  mapped_again->send(handshake_packet(imei_b));
  ASSERT_EQ(mapped_again->receive(1), bytes{0x01});
  const auto b = journal(imei_b);
  ASSERT_FALSE(b.empty());
  EXPECT_EQ(b.front().at("peer"), "10.0.0.1:40003");
}

TEST_F(DevicePort, TwoAddressesOfOneIPv6Slash64ShareOneQuota) {
  start({"--proxy-protocol", "v1", "--per-address-handshakes", "1", "--per-address-rate", "0"});
  auto first = device_behind(port, v1("TCP6", "2001:db8:0:1::7", 40001));
  ASSERT_TRUE(eventually([&] { return metric(in_progress) == 1; }));
  auto same_64 = device_behind(port, v1("TCP6", "2001:db8:0:1:ffff::8", 40002));
  EXPECT_TRUE(same_64->closed_by_server());
  EXPECT_TRUE(eventually([&] {
    return read_file(log).find("too many handshakes in progress from 2001:db8:0:1::/64") !=
           std::string::npos;
  })) << read_file(log);
  // Another /64 is another source.
  auto other_64 = device_behind(port, v1("TCP6", "2001:db8:0:2::7", 40003));
  other_64->send(handshake_packet(imei_b));
  EXPECT_EQ(other_64->receive(1), bytes{0x01});
}

TEST_F(DevicePort, TheIPv6PrefixOfTheLimitsIsAFlag) {
  start({"--proxy-protocol", "v1", "--per-address-handshakes", "1", "--per-address-rate", "0",
         "--per-address-ipv6-prefix", "128"});
  auto first = device_behind(port, v1("TCP6", "2001:db8:0:1::7", 40001));
  ASSERT_TRUE(eventually([&] { return metric(in_progress) == 1; }));
  auto neighbour = device_behind(port, v1("TCP6", "2001:db8:0:1::8", 40002));
  neighbour->send(handshake_packet(imei_b));
  EXPECT_EQ(neighbour->receive(1), bytes{0x01});
}

TEST_F(DevicePort, AV1HeaderWithANulIsRefused) {
  start({"--proxy-protocol", "v1"});
  auto d =
      device_behind(port, std::string("PROXY TCP4 198.51.100.7\0 10.0.0.5 40123 5027\r\n", 46));
  d->send(handshake_packet(imei_a));
  EXPECT_EQ(d->receive(1), std::nullopt);
  EXPECT_TRUE(d->closed_by_server());
  EXPECT_TRUE(eventually([&] {
    return metric(
               "teltonika_connections_total{instance_id=\"gw-port-test\",result=\"refused_"
               "proxy_header\"} ") == 1;
  }));
  EXPECT_NE(read_file(log).find("holds a byte that is not text (0x00)"), std::string::npos)
      << read_file(log);
  EXPECT_TRUE(journal(imei_a).empty());
}

}  // namespace
}  // namespace tgw::test::device_port
