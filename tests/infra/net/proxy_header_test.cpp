#include "infra/net/proxy_header.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tgw::infra::net {
namespace {

using bytes = std::vector<std::uint8_t>;

bytes text(const std::string& s) {
  return {s.begin(), s.end()};
}

bytes v2(std::uint8_t command, std::uint8_t family, const bytes& body) {
  bytes out = {0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A};
  out.push_back(static_cast<std::uint8_t>(0x20 | command));
  out.push_back(family);
  out.push_back(static_cast<std::uint8_t>(body.size() >> 8));
  out.push_back(static_cast<std::uint8_t>(body.size()));
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

const bytes ipv4_body = {198, 51, 100, 7, 10, 0, 0, 5, 0x9C, 0xBB, 0x13, 0xA3};  // 40123, 5027

bytes with_handshake(bytes header) {
  const bytes handshake = {0x00, 0x0F, '3', '5', '6'};
  header.insert(header.end(), handshake.begin(), handshake.end());
  return header;
}

TEST(ProxyHeader, V1Tcp4GivesTheDeviceAddressAndItsLength) {
  const std::string line = "PROXY TCP4 198.51.100.7 10.0.0.5 40123 5027\r\n";
  const auto p = parse_proxy_header(with_handshake(text(line)), proxy_mode::v1);
  ASSERT_EQ(p.status, proxy_status::ok) << p.error;
  EXPECT_EQ(p.length, line.size());
  EXPECT_EQ(p.header.version, 1);
  ASSERT_TRUE(p.header.has_addresses);
  EXPECT_EQ(p.header.source.to_string(), "198.51.100.7:40123");
  EXPECT_EQ(p.header.destination.to_string(), "10.0.0.5:5027");
}

TEST(ProxyHeader, V1Tcp6AndUnknown) {
  auto p = parse_proxy_header(text("PROXY TCP6 2001:db8::7 ::1 40123 5027\r\n"), proxy_mode::any);
  ASSERT_EQ(p.status, proxy_status::ok) << p.error;
  EXPECT_EQ(p.header.source.to_string(), "[2001:db8::7]:40123");
  p = parse_proxy_header(text("PROXY UNKNOWN whatever follows\r\nrest"), proxy_mode::v1);
  ASSERT_EQ(p.status, proxy_status::ok);
  EXPECT_FALSE(p.header.has_addresses);
  EXPECT_EQ(p.length, 32U);
}

TEST(ProxyHeader, V2Ipv4Ipv6AndLocal) {
  auto p = parse_proxy_header(with_handshake(v2(1, 0x11, ipv4_body)), proxy_mode::v2);
  ASSERT_EQ(p.status, proxy_status::ok) << p.error;
  EXPECT_EQ(p.length, 16U + 12U);
  EXPECT_EQ(p.header.version, 2);
  EXPECT_EQ(p.header.source.to_string(), "198.51.100.7:40123");
  EXPECT_EQ(p.header.destination.to_string(), "10.0.0.5:5027");

  bytes body6(36, 0);
  body6[0] = 0x20;
  body6[1] = 0x01;
  body6[2] = 0x0D;
  body6[3] = 0xB8;
  body6[15] = 7;
  body6[31] = 1;
  body6[32] = 0x9C;
  body6[33] = 0xBB;
  // TLVs after the addresses (a cloud balancer's endpoint id) are skipped.
  bytes tlv = {0xEA, 0x00, 0x03, 0x01, 'a', 'b'};
  body6.insert(body6.end(), tlv.begin(), tlv.end());
  p = parse_proxy_header(v2(1, 0x21, body6), proxy_mode::any);
  ASSERT_EQ(p.status, proxy_status::ok) << p.error;
  EXPECT_EQ(p.length, 16U + 42U);
  EXPECT_EQ(p.header.source.to_string(), "[2001:db8::7]:40123");

  // A balancer's health check: no address, the connection's own stay.
  p = parse_proxy_header(v2(0, 0x00, {}), proxy_mode::v2);
  ASSERT_EQ(p.status, proxy_status::ok);
  EXPECT_FALSE(p.header.has_addresses);
  EXPECT_EQ(p.length, 16U);
}

TEST(ProxyHeader, EveryPrefixOfAHeaderWaitsForMore) {
  const bytes headers[] = {text("PROXY TCP4 198.51.100.7 10.0.0.5 40123 5027\r\n"),
                           v2(1, 0x11, ipv4_body)};
  for (const auto& h : headers)
    for (std::size_t n = 0; n < h.size(); ++n)
      EXPECT_EQ(parse_proxy_header(std::span(h).first(n), proxy_mode::any).status,
                proxy_status::need_more)
          << n;
}

TEST(ProxyHeader, ADeviceSpeakingWithoutAHeaderIsRefusedAtItsFirstByte) {
  const bytes handshake = {0x00, 0x0F, '3', '5', '6'};
  for (const auto mode : {proxy_mode::v1, proxy_mode::v2, proxy_mode::any}) {
    const auto p = parse_proxy_header(handshake, mode);
    EXPECT_EQ(p.status, proxy_status::error) << to_string(mode);
    EXPECT_NE(p.error.find("got 00 0f 33 35 36"), std::string::npos) << p.error;
  }
  // The other version when one is required.
  EXPECT_EQ(parse_proxy_header(v2(1, 0x11, ipv4_body), proxy_mode::v1).status, proxy_status::error);
  EXPECT_EQ(parse_proxy_header(text("PROXY TCP4 "), proxy_mode::v2).status, proxy_status::error);
}

TEST(ProxyHeader, MalformedV1HeadersAreRefusedWithTheirReason) {
  const std::pair<const char*, const char*> cases[] = {
      {"PROXY TCP5 1.2.3.4 5.6.7.8 1 2\r\n", "TCP5"},
      {"PROXY TCP4 1.2.3.4 5.6.7.8 1\r\n", "exactly"},
      {"PROXY TCP4 1.2.3.4 5.6.7.8 1 2 3\r\n", "exactly"},
      {"PROXY TCP4 1.2.3.4  5.6.7.8 1 2\r\n", "exactly"},
      {"PROXY TCP4 1.2.3.4 5.6.7.8 1 2 \r\n", "exactly"},
      {"PROXY TCP4 1.2.3.400 5.6.7.8 1 2\r\n", "address"},
      {"PROXY TCP4 ::1 5.6.7.8 1 2\r\n", "address"},
      {"PROXY TCP6 1.2.3.4 ::1 1 2\r\n", "address"},
      {"PROXY TCP4 1.2.3.4 5.6.7.8 65536 2\r\n", "port"},
      {"PROXY TCP4 1.2.3.4 5.6.7.8 01 2\r\n", "port"},
      {"PROXY TCP4 1.2.3.4 5.6.7.8 -1 2\r\n", "port"},
  };
  for (const auto& [line, reason] : cases) {
    const auto p = parse_proxy_header(text(line), proxy_mode::v1);
    EXPECT_EQ(p.status, proxy_status::error) << line;
    EXPECT_NE(p.error.find(reason), std::string::npos) << line << ": " << p.error;
  }
}

TEST(ProxyHeader, OversizedHeadersAreRefusedWithoutWaitingForTheirBytes) {
  // v1: 107 bytes without CRLF.
  const auto long_line = text("PROXY UNKNOWN " + std::string(93, 'x'));
  ASSERT_EQ(long_line.size(), 107U);
  auto p = parse_proxy_header(long_line, proxy_mode::v1);
  EXPECT_EQ(p.status, proxy_status::error);
  EXPECT_NE(p.error.find("107"), std::string::npos) << p.error;
  // v2: the length field alone says it is too long; only its 16 bytes are needed.
  bytes big = v2(1, 0x11, ipv4_body);
  big[14] = 0x10;  // 4096 + 12 bytes announced
  p = parse_proxy_header(std::span(big).first(16), proxy_mode::v2);
  EXPECT_EQ(p.status, proxy_status::error);
  EXPECT_NE(p.error.find("exceeds the 512-byte limit"), std::string::npos) << p.error;
}

TEST(ProxyHeader, MalformedV2HeadersAreRefused) {
  bytes bad_version = v2(1, 0x11, ipv4_body);
  bad_version[12] = 0x11;
  EXPECT_EQ(parse_proxy_header(bad_version, proxy_mode::v2).status, proxy_status::error);
  EXPECT_EQ(parse_proxy_header(v2(2, 0x11, ipv4_body), proxy_mode::v2).status,
            proxy_status::error);  // command 2
  EXPECT_EQ(parse_proxy_header(v2(1, 0x41, ipv4_body), proxy_mode::v2).status,
            proxy_status::error);  // family 4
  EXPECT_EQ(parse_proxy_header(v2(1, 0x12, ipv4_body), proxy_mode::v2).status,
            proxy_status::error);  // datagram
  EXPECT_EQ(parse_proxy_header(v2(1, 0x21, ipv4_body), proxy_mode::v2).status,
            proxy_status::error);  // IPv6 family, 12 bytes of addresses
  // Truncated: the length says more than the connection sent so far.
  const bytes whole = v2(1, 0x11, ipv4_body);
  EXPECT_EQ(parse_proxy_header(std::span(whole).first(whole.size() - 1), proxy_mode::v2).status,
            proxy_status::need_more);
}

// The specification's line is printable US-ASCII, its addresses in their own forms:
// inet_pton alone would stop at a NUL and take what came before it as the address.
TEST(ProxyHeader, V1IsReadStrictly) {
  const std::pair<std::string, const char*> cases[] = {
      {std::string("PROXY TCP4 198.51.100.7\0junk 10.0.0.5 40123 5027\r\n", 50), "not text"},
      {std::string("PROXY TCP4 198.51.100.7\0 10.0.0.5 40123 5027\r\n", 46), "not text"},
      {std::string("PROXY UNKNOWN \0\r\n", 18), "not text"},
      {"PROXY TCP4 198.51.100.7 10.0.0.5 40123 5027\n", "not text"},
      {"PROXY TCP4 198.51.100.7 10.0.0.5\t40123 5027\r\n", "not text"},
      {"PROXY TCP4 198.51.100.7 10.0.0.5 40123 5027\rX", "not text"},
      {"PROXY TCP4 198.051.100.7 10.0.0.5 40123 5027\r\n", "address"},
      {"PROXY TCP4 0x7f.0.0.1 10.0.0.5 40123 5027\r\n", "address"},
      {"PROXY TCP4 1.2.3 10.0.0.5 40123 5027\r\n", "address"},
      {"PROXY TCP4 1.2.3.4/8 10.0.0.5 40123 5027\r\n", "address"},
      {"PROXY TCP6 2001:db8::7%eth0 ::1 40123 5027\r\n", "address"},
      {"PROXY TCP6 2001:0db8:0000:0000:0000:0000:0000:00007 ::1 40123 5027\r\n", "address"},
      {"PROXY TCP4 +1.2.3.4 10.0.0.5 40123 5027\r\n", "address"},
      {"proxy TCP4 1.2.3.4 10.0.0.5 40123 5027\r\n", "expected a PROXY protocol v1 header"},
  };
  for (const auto& [line, reason] : cases) {
    const auto p = parse_proxy_header(text(line), proxy_mode::v1);
    EXPECT_EQ(p.status, proxy_status::error) << line;
    EXPECT_NE(p.error.find(reason), std::string::npos) << line << ": " << p.error;
  }
  // A NUL is refused as soon as it arrives, not when the line ends.
  const auto nul =
      parse_proxy_header(text(std::string("PROXY TCP4 1.2.3.4\0", 19)), proxy_mode::v1);
  EXPECT_EQ(nul.status, proxy_status::error);
  // The longest forms the specification allows are read.
  const std::string longest =
      "PROXY TCP6 ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff "
      "65535 65535\r\n";
  ASSERT_EQ(longest.size(), 104U);
  EXPECT_EQ(parse_proxy_header(text(longest), proxy_mode::v1).status, proxy_status::ok);
}

// An IPv4-mapped IPv6 address names an IPv4 device: the header gives it as one, in
// either version, so that it has one quota with its plain form.
TEST(ProxyHeader, IPv4MappedAddressesAreGivenAsIPv4) {
  auto p = parse_proxy_header(text("PROXY TCP6 ::ffff:10.0.0.1 ::ffff:10.0.0.5 40123 5027\r\n"),
                              proxy_mode::v1);
  ASSERT_EQ(p.status, proxy_status::ok) << p.error;
  EXPECT_FALSE(p.header.source.v6);
  EXPECT_EQ(p.header.source.to_string(), "10.0.0.1:40123");
  EXPECT_EQ(p.header.destination.to_string(), "10.0.0.5:5027");
  bytes body(10, 0);  // ::ffff:10.0.0.1
  body.insert(body.end(), {0xFF, 0xFF, 10, 0, 0, 1});
  body.insert(body.end(), {0x20, 0x01, 0x0d, 0xb8});
  body.insert(body.end(), 11, 0);
  body.push_back(5);
  body.insert(body.end(), {0x9C, 0xBB, 0x13, 0xA3});
  p = parse_proxy_header(v2(1, 0x21, body), proxy_mode::v2);
  ASSERT_EQ(p.status, proxy_status::ok) << p.error;
  EXPECT_EQ(p.header.source.to_string(), "10.0.0.1:40123");
  EXPECT_EQ(p.header.destination.to_string(), "[2001:db8::5]:5027");
}

TEST(ProxyHeader, ModesParseFromTheirFlagNames) {
  EXPECT_EQ(parse_proxy_mode("any"), proxy_mode::any);
  EXPECT_EQ(parse_proxy_mode("v2"), proxy_mode::v2);
  EXPECT_EQ(parse_proxy_mode("V2"), std::nullopt);
  EXPECT_EQ(to_string(proxy_mode::v1), "v1");
}

}  // namespace
}  // namespace tgw::infra::net
